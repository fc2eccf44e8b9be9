"""Alembic's entry point for the registry schema; run through :func:`skillbook.hub.db.migrate`."""

from __future__ import annotations

from alembic import context

from skillbook.hub.models import Base

config = context.config
connection = config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reached by a bare `alembic` command
    raise RuntimeError("run migrations with `skillbook registry migrate`")
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
