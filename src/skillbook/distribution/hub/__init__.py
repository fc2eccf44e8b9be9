"""skillbook's own registry: a ClawHub-compatible server (``skillbook registry serve``).

The clients are unchanged: ``openclaw skills install`` (2026.4 and 2026.9), the
``clawhub`` CLI (``install``, ``update``, ``search``, ``publish``) and ``skillbook
install`` read and write it through the HTTP API of ``docs/clawhub-api`` (spec
``clawhub-api.md``). Part of :mod:`skillbook.distribution`; nothing here is imported
by ``import skillbook``. Its heavy dependencies (SQLAlchemy, Alembic, Starlette,
uvicorn, boto3, psycopg; Jinja2, markdown-it-py and nh3 for the pages) come with
``pip install "skillbook[registry]"``.

Modules, one concept each:

* ``server_config`` — :class:`HubSettings`, every knob of a server (passed in, never read
  from the environment here);
* ``models``, ``db``, ``migrations/`` — the metadata schema, engines and Alembic;
* ``blobs`` — the content-addressed store of files and archives (folder or S3);
* ``tokens`` — bearer tokens, stored as hashes;
* ``ratelimit`` — fixed-window counters in the database, shared by every replica;
* ``semver_tags``, ``archive`` — the pure parts of a version (its fingerprint is
  :mod:`skillbook.distribution.fingerprint`'s, its archive rules
  :mod:`skillbook.distribution.archives`'s);
* ``checks`` — the scan and validation every published version goes through;
* ``catalog`` — queries and state changes (tags, release, delete, audit);
* ``publish`` — the publish pipeline (uploads, checks, storage);
* ``housekeeping`` — the sweep (crash leftovers, expired uploads) and per-token quotas;
* ``search`` — the selector over the visible skills, refreshed by generation;
* ``shapes`` — the JSON the clients read;
* ``app``, ``routes_read``, ``routes_write``, ``http`` — the ASGI application;
* ``web`` — the pages a team browses (search, a page per skill, admin review);
* ``server`` — running it under uvicorn; ``client`` — ``skillbook publish`` (retried
  by :mod:`skillbook.distribution.http`'s rule).
"""
