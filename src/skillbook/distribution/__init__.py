"""Distribution: getting skills onto a machine and serving them.

``registry`` (the ClawHub-compatible client: search, install, update, remove, verify),
``hub`` (the registry server), ``install`` (what a skill needs: OpenClaw's installers),
``sync`` (skills copied where a sandboxed agent reads them), ``agents`` (skills placed
where other coding agents read them: ``rows`` and ``table``, ``layout``, ``lock``,
``ops``), and ``fingerprint``, the content fingerprint the client and the server share.
"""
