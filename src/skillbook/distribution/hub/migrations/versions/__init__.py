"""The registry server's schema revisions, one Alembic script each."""
