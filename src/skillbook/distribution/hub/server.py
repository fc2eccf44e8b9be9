"""Running the registry under uvicorn: one process, or several workers of one server.

Input: :class:`~skillbook.distribution.hub.server_config.HubSettings` and where to listen. The schema
is migrated once, before any worker starts (on PostgreSQL under an advisory lock, so
replicas on other machines starting at the same moment migrate once too). Several
workers get the settings as JSON in ``SKILLBOOK_HUB_SETTINGS`` and build the same app.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from skillbook.distribution.hub.app import SETTINGS_ENV, create_app
from skillbook.distribution.hub.db import Database, connect, migrate
from skillbook.distribution.hub.server_config import HubSettings

__all__ = ["Listen", "prepare", "serve", "uvicorn_options"]


@dataclass(frozen=True, slots=True)
class Listen:
    host: str = "127.0.0.1"
    port: int = 8787
    workers: int = 1
    #: Addresses whose ``X-Forwarded-For``/``-Proto`` are believed (the load balancer's,
    #: comma-separated); empty: none, the connecting address is the client's.
    forwarded_allow_ips: str = ""
    log_level: str = "info"
    #: uvicorn's line per request: off by default (the balancer in front logs requests;
    #: formatting the line cost about an eighth of a cached download's time).
    access_log: bool = False


def prepare(settings: HubSettings) -> str:
    """Migrate the schema and open the blob store once; returns the schema revision."""
    from skillbook.distribution.hub.blobs import open_blob_store

    engine = connect(settings.database_url)
    try:
        revision = migrate(engine)
    finally:
        engine.dispose()
    open_blob_store(settings.blob_url)
    return revision


def uvicorn_options(listen: Listen) -> dict[str, object]:
    """What uvicorn is told; forwarded headers only from the proxies ``listen`` names.

    With none named the proxy-header middleware is left out: uvicorn would otherwise
    trust ``FORWARDED_ALLOW_IPS`` from the environment or 127.0.0.1, and any local
    process could pick the address its requests are rate-limited under.
    """
    trusted = ",".join(p.strip() for p in listen.forwarded_allow_ips.split(",") if p.strip())
    options: dict[str, object] = {
        "host": listen.host,
        "port": listen.port,
        "proxy_headers": bool(trusted),
        "log_level": listen.log_level,
        "access_log": listen.access_log,
        "server_header": False,
    }
    if trusted:
        options["forwarded_allow_ips"] = trusted
    return options


def serve(settings: HubSettings, listen: Listen) -> None:
    """Serve until interrupted (blocks)."""
    import uvicorn

    prepare(settings)
    common = uvicorn_options(listen)
    if listen.workers <= 1:
        uvicorn.run(create_app(settings, migrate=False), **common)  # type: ignore[arg-type]
        return
    os.environ[SETTINGS_ENV] = settings.to_json()
    uvicorn.run(
        "skillbook.distribution.hub.app:app_from_env",
        factory=True,
        workers=listen.workers,
        **common,  # type: ignore[arg-type]
    )


def database(settings: HubSettings) -> Database:
    """The database of ``settings``, migrated: what the admin commands work on."""
    return Database.open(settings.database_url)
