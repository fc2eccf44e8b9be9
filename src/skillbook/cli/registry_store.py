"""What every ``skillbook registry`` command shares: the store options and the server settings.

``--db`` and ``--blobs`` (or ``SKILLBOOK_REGISTRY_DB``/``SKILLBOOK_REGISTRY_BLOBS``) name
the database and blob store, by default a SQLite file and a folder under
``<state dir>/registry``; :func:`hub_settings` turns them into the server's settings.
Both :mod:`skillbook.cli.registry_cmd` (``serve``, ``migrate``) and
:mod:`skillbook.cli.registry_admin` (the admin commands) stand on this module.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from typing import Any

import click

from skillbook.cli.context import ERR_USAGE, Context, fail

__all__ = ["BLOBS_ENV", "DB_ENV", "actor_name", "hub_settings", "store_options"]

DB_ENV = "SKILLBOOK_REGISTRY_DB"
BLOBS_ENV = "SKILLBOOK_REGISTRY_BLOBS"


def _need_extra() -> None:
    try:
        import sqlalchemy  # noqa: F401
        import starlette  # noqa: F401
    except ImportError:
        fail('the registry needs its extra: pip install "skillbook[registry]"')


def _store_urls(obj: Context, db: str | None, blobs: str | None) -> tuple[str, str]:
    from skillbook.distribution.hub.server_config import default_database_url

    if db and blobs:
        return db, blobs
    state = obj.settings().paths.state_dir
    return db or default_database_url(state), blobs or str(state / "registry" / "blobs")


def hub_settings(obj: Context, db: str | None, blobs: str | None, **more: Any) -> Any:
    _need_extra()
    from skillbook.distribution.hub.server_config import HubSettings

    database_url, blob_url = _store_urls(obj, db, blobs)
    try:
        return HubSettings(database_url=database_url, blob_url=blob_url, **more)
    except ValueError as exc:
        fail(str(exc), error=ERR_USAGE)


def store_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--blobs",
        envvar=BLOBS_ENV,
        metavar="URL",
        help=f"Blob store: a folder, file:///path or s3://bucket/prefix?endpoint_url=… "
        f"(${BLOBS_ENV}; default <state dir>/registry/blobs).",
    )(fn)
    return click.option(
        "--db",
        envvar=DB_ENV,
        metavar="URL",
        help=f"Database URL: sqlite:///path or postgresql+psycopg://user@host/db "
        f"(${DB_ENV}; default a SQLite file under <state dir>/registry).",
    )(fn)


def actor_name() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"
