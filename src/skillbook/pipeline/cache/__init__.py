"""Caching: every cache and memo that keeps the pipeline fast, and the footprint that says when a result is stale."""
