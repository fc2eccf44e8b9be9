"""Gating: whether each skill is eligible on this host, and the status report."""
