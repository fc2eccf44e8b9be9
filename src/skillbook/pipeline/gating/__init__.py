"""Gating: whether each skill can run on this host, and the status report.

``gate`` (:class:`~skillbook.pipeline.gating.gate.Host`, binaries, ``evaluate``),
``status`` (OpenClaw's status shapes), ``install_options`` (what a status entry offers
to install).
"""
