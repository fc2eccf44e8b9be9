"""The registry server's Alembic migrations (``env.py`` and ``versions/``)."""
