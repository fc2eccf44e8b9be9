"""The registry's web pages, served by ``skillbook registry serve`` beside the API.

A team browses its registry as people browse ClawHub: a home page with search, a page
per skill (its ``SKILL.md`` rendered, files, versions, install commands, scan verdict,
fingerprint), a page per owner, and for admins the held versions with release and
hold. Everything is rendered on the server (Jinja templates, one stylesheet, no
script), so the pages work air-gapped and with scripting off.

* ``render`` — Markdown to sanitised HTML (a skill is hostile input);
* ``session`` — admin sign-in cookies and CSRF tokens, valid on every replica;
* ``views`` — what a page shows, read from the catalog (visibility decided here);
* ``pages`` — the routes; ``headers`` — CSP and the other security headers;
* ``templates/``, ``static/registry.css`` — package data.
"""
