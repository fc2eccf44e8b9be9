"""Getting skills: a ClawHub-compatible registry client, git, folder and archive sources.

This is an edge package: nothing in the core imports it. Modules, one concept each,
are listed in ``docs/architecture.md``; :mod:`skillbook.distribution.fingerprint` is a
small pure module with a stable API that a registry server may import on its own.
"""
