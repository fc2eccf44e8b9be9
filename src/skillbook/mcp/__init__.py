"""skillbook over the Model Context Protocol (needs the ``mcp`` extra: ``mcp>=2.3``).

:func:`skillbook.mcp.server.build_server` (a loader or session in) gives an ``mcp``
server publishing the skills with the Skills extension (``io.modelcontextprotocol/skills``)
and fallbacks for hosts that lack it; :func:`skillbook.mcp.server.serve` runs one over
stdio or streamable HTTP; :mod:`skillbook.mcp.source` and :mod:`skillbook.mcp.client`
read skills from other servers. See ``docs/mcp.md``.

This ``__init__`` holds the package's exceptions and imports nothing else: naming
:class:`PortInUse` does not import the ``mcp`` SDK.
"""

from __future__ import annotations

from skillbook.errors import SkillbookError


class ServeError(SkillbookError):
    """``serve`` could not start: the address is taken, or the bind needs a token."""


class PortInUse(ServeError, OSError):
    """Another process listens on the address ``serve`` was asked to bind."""

    def __str__(self) -> str:
        return str(self.strerror)
