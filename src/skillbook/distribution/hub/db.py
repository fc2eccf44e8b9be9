"""Engines, sessions and schema migrations for the registry database.

Input: a SQLAlchemy URL. Output: an :class:`~sqlalchemy.engine.Engine` tuned for
the backend (SQLite: WAL, a busy timeout, foreign keys; PostgreSQL: a pool with
pre-ping) and :func:`migrate`, which brings the schema to the newest Alembic
revision. On PostgreSQL the migration holds an advisory lock, so replicas that
start together migrate once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from sqlalchemy import create_engine, event, select, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker

from skillbook.distribution.hub.models import CatalogState

__all__ = ["Database", "connect", "migrate"]

#: Set in ``Session.info`` by a change of what search or downloads can see.
CATALOG_CHANGED: Final = "skillbook.catalog_changed"
#: Any constant: the advisory lock the migration of a PostgreSQL database holds.
_MIGRATION_LOCK: Final = 0x5B1B00C
MIGRATIONS: Final = Path(__file__).parent / "migrations"
_GENERATION: Final = select(CatalogState.generation).where(CatalogState.id == 1)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def connect(url: str) -> Engine:
    """An engine for ``url``; a SQLite file's folder is created when missing."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def migrate(engine: Engine) -> str:
    """Upgrade the schema to the newest revision; returns that revision."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK})
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
        revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    return str(revision)


class Database:
    """The engine and the session factory of one process; :meth:`session` is a unit of work."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._listeners: list[Callable[[], None]] = []
        event.listen(self._sessions, "after_commit", self._after_commit)
        event.listen(self._sessions, "after_rollback", self._after_rollback)

    def on_catalog_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after this process commits a catalog change (caches expire)."""
        self._listeners.append(listener)

    def _after_commit(self, session: Session) -> None:
        if session.info.pop(CATALOG_CHANGED, False):
            for listener in self._listeners:
                listener()

    def _after_rollback(self, session: Session) -> None:
        session.info.pop(CATALOG_CHANGED, None)

    @classmethod
    def open(cls, url: str, *, migrate_schema: bool = True) -> Database:
        engine = connect(url)
        if migrate_schema:
            migrate(engine)
        return cls(engine)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session committed on success and rolled back on any exception."""
        with self._sessions() as session:
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise

    def generation(self) -> int:
        """The catalog generation: search rebuilds when it differs from what it saw."""
        # A plain connection, no ORM session: every process asks several times a second.
        with self.engine.connect() as conn:
            value = conn.execute(_GENERATION).scalar_one_or_none()
        return int(value or 0)

    @property
    def backend(self) -> str:
        return self.engine.dialect.name

    def close(self) -> None:
        self.engine.dispose()
