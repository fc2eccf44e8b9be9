"""What a registry server is told: database, blob store, limits, policies.

Input: values from the command line (or code). Output: a frozen
:class:`HubSettings`, serialisable to JSON so that every uvicorn worker of one
``serve`` builds the same application. Nothing here reads the environment.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from skillbook.config.mode import Mode

__all__ = [
    "DEFAULT_DB_NAME",
    "HOLD_SEVERITIES",
    "MIB",
    "Housekeeping",
    "HubSettings",
    "RateLimits",
    "SizeLimits",
    "default_database_url",
]

MIB: Final = 1024 * 1024
#: The scan severities a registry may hold versions at (``--hold-severity``).
HOLD_SEVERITIES: Final = ("critical", "high")
#: The SQLite file under ``<state dir>/registry/`` when no database URL is given.
DEFAULT_DB_NAME: Final = "metadata.sqlite3"


@dataclass(frozen=True, slots=True)
class RateLimits:
    """Requests per window, per client address (anonymous) and per token; 0 = unlimited.

    The defaults follow the hosted ClawHub's published figures (reads 120/min and
    writes 30/min per address; more per key), with downloads counted apart.
    """

    window_seconds: int = 60
    read_per_ip: int = 600
    read_per_token: int = 3000
    download_per_ip: int = 300
    download_per_token: int = 1200
    write_per_ip: int = 30
    write_per_token: int = 120

    def limit(self, kind: str, *, token: bool) -> int:
        return int(getattr(self, f"{kind}_per_{'token' if token else 'ip'}"))


@dataclass(frozen=True, slots=True)
class SizeLimits:
    """Request and content limits; the file and bundle limits are the clawhub CLI's own."""

    max_file_bytes: int = 10 * MIB
    max_version_bytes: int = 50 * MIB
    max_files: int = 2000
    max_json_bytes: int = 2 * MIB
    #: A multipart publish carries the files too.
    max_multipart_bytes: int = 64 * MIB


@dataclass(frozen=True, slots=True)
class Housekeeping:
    """Crash and abuse hygiene (:mod:`skillbook.distribution.hub.housekeeping`)."""

    #: Bytes one token may hold: its unexpired uploads and the files of the versions it
    #: published (deleted ones excepted); 0 = unlimited.
    quota_bytes_per_token: int = 1024 * MIB
    #: Seconds between two sweeps of one server process (one runs at start-up); 0 = only then.
    sweep_seconds: int = 600
    #: A temporary younger than this may belong to a live write; an upload is collected this
    #: long after it expired (a publish that took it just in time has finished by then).
    grace_seconds: int = 3600


@dataclass(frozen=True, slots=True)
class HubSettings:
    """Everything one registry process needs; every replica of a deployment gets the same."""

    #: SQLAlchemy URL: ``sqlite:///path`` or ``postgresql+psycopg://user@host/db``.
    database_url: str
    #: A folder path, ``file:///path`` or ``s3://bucket/prefix?endpoint_url=…&region=…``.
    blob_url: str
    #: The base URL clients reach (``https://hub.example.com``); None: taken from each
    #: request's ``Host`` (as a proxy passes it on).
    public_url: str | None = None
    #: ``validate`` mode every published version must pass.
    validate_mode: str = Mode.OPENCLAW.value
    #: Search backend: ``hybrid`` (BM25 + embeddings, the selector's default) or ``bm25``.
    search_backend: str = "hybrid"
    #: Where the search index keeps its vectors (a cache; any replica can rebuild it).
    index_dir: str | None = None
    rate_limits: RateLimits = field(default_factory=RateLimits)
    sizes: SizeLimits = field(default_factory=SizeLimits)
    #: Uploads not published within this time expire: refused at publish, then collected.
    upload_ttl_seconds: int = 24 * 3600
    housekeeping: Housekeeping = field(default_factory=Housekeeping)
    #: Scan findings of this severity or worse hold a version for an admin's review.
    #: ``high`` by default: a remote script piped into a shell from a named host, a
    #: binary in the skill, a markdown image that carries data out are a reviewer's
    #: call, not something a registry serves to a team unseen.
    hold_severity: str = "high"
    #: Download counts and rate-limit counts are kept in each process's memory and added
    #: to the shared database this often (and on shutdown): replicas count together
    #: within this delay. 0: every request writes its counts at once (exact across
    #: replicas, slower).
    flush_seconds: float = 1.0
    #: Another process's publish, hide or delete reaches this process's cached answers
    #: (resolved downloads, search answers) within this delay; this process's own at once.
    catalog_poll_seconds: float = 0.5
    #: Memory for the bytes of small archives and files (content-addressed, never stale).
    blob_cache_bytes: int = 64 * MIB

    def __post_init__(self) -> None:
        Mode.of(self.validate_mode)
        if self.flush_seconds < 0 or self.catalog_poll_seconds < 0 or self.blob_cache_bytes < 0:
            raise ValueError(
                "flush_seconds, catalog_poll_seconds and blob_cache_bytes must be >= 0"
            )
        if self.search_backend not in ("hybrid", "bm25", "embedding"):
            raise ValueError(f"unknown search backend {self.search_backend!r}")
        if self.hold_severity not in HOLD_SEVERITIES:
            raise ValueError(
                f"hold severity {self.hold_severity!r}: use one of {', '.join(HOLD_SEVERITIES)}"
            )

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> HubSettings:
        data: dict[str, Any] = json.loads(text)
        data["rate_limits"] = RateLimits(**data.get("rate_limits", {}))
        data["sizes"] = SizeLimits(**data.get("sizes", {}))
        data["housekeeping"] = Housekeeping(**data.get("housekeeping", {}))
        return cls(**data)


def default_database_url(state_dir: Path) -> str:
    """``sqlite:///<state dir>/registry/metadata.sqlite3``: works on a fresh machine."""
    return f"sqlite:///{state_dir / 'registry' / DEFAULT_DB_NAME}"
