"""skillbook over the Model Context Protocol (needs the ``mcp`` extra: ``mcp>=2.3``).

``build_server(loader_or_session)`` gives an ``mcp`` server publishing the skills with
the Skills extension (``io.modelcontextprotocol/skills``) and fallbacks for hosts that
lack it; ``serve(...)`` runs one over stdio or streamable HTTP. See ``docs/mcp.md``.
The other way round, ``client``, ``remote_source``, ``remote_catalog`` and ``source``
read skills from MCP servers (the ``skills.mcp`` skill source).

Names load lazily: importing ``skillbook.mcp._skillfiles`` (digests, URIs, manifests)
does not import the ``mcp`` SDK.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

_EXPORTS: dict[str, str] = {
    "build_server": "skillbook.mcp.server",
    "bind_http": "skillbook.mcp.server",
    "serve": "skillbook.mcp.server",
    "PortInUse": "skillbook.mcp.server",
    "ServeError": "skillbook.mcp.server",
    "SkillServer": "skillbook.mcp.server",
    "SkillCatalog": "skillbook.mcp._catalog",
    "ServedState": "skillbook.mcp._catalog",
    "EXTENSION_ID": "skillbook.mcp._skillformat",
    "PROTOCOL_REVISION": "skillbook.mcp._skillformat",
}

__all__ = [
    "EXTENSION_ID",
    "PROTOCOL_REVISION",
    "PortInUse",
    "ServeError",
    "ServedState",
    "SkillCatalog",
    "SkillServer",
    "bind_http",
    "build_server",
    "serve",
]

if _typing.TYPE_CHECKING:
    from skillbook.mcp._catalog import ServedState, SkillCatalog
    from skillbook.mcp._skillformat import EXTENSION_ID, PROTOCOL_REVISION
    from skillbook.mcp.server import (
        PortInUse,
        ServeError,
        SkillServer,
        bind_http,
        build_server,
        serve,
    )


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skillbook.mcp' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
