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

This ``__init__`` holds the server's exceptions, each answered with its HTTP status::

    SkillbookError
     └─ HubError             a refused request or admin action; ``.status``, ``.body``
         ├─ HubNotFound      (also a LookupError) no such skill, version, token or blob
         ├─ HttpError        a route stops a request; ``.headers`` go with the answer
         └─ PathRejected     (also a ValueError) a published path no client could install
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skillbook.errors import SkillbookError


class HubError(SkillbookError):
    """The registry server (:mod:`skillbook.distribution.hub`) refused a request or an admin action.

    ``status`` is the HTTP status the server answers with; the message is the short
    plain-text body the ``clawhub`` CLI prints (``Version already exists``). ``body``, when
    given, is answered as JSON instead (a refused file name: its path and rule).
    """

    def __init__(self, status: int, message: str, body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class HubNotFound(HubError, LookupError):
    """No such skill, version, upload, token or blob on the registry server (404)."""

    def __init__(self, message: str) -> None:
        super().__init__(404, message)


class HttpError(HubError):
    """Stop a request with ``status`` and a plain-text body (and ``headers``, e.g. ``Retry-After``)."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None):
        super().__init__(status, message)
        self.headers = dict(headers or {})


class PathRejected(HubError, ValueError):
    """A published path that no client could install safely (answered ``400``)."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)
