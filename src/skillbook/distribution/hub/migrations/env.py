"""Alembic's entry point for the registry schema; run through :func:`skillbook.distribution.hub.db.migrate`."""

from __future__ import annotations

from alembic import context

from skillbook.distribution.hub.models import Base


def run_migrations() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:  # pragma: no cover - only reached by a bare `alembic` command
        raise RuntimeError("run migrations with `skillbook registry migrate`")
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


# Alembic runs this file inside a migration context, which is what gives `context` its
# `config`; an import from anywhere else (a test walking every module) does nothing.
if hasattr(context, "config"):
    run_migrations()
