"""Importing the ``mcp`` SDK for ``skillbook serve`` at less start-up cost.

The SDK's package ``__init__`` modules import everything the SDK has: ``mcp``
imports its client, ``mcp.server`` its high-level ``MCPServer`` framework (and an
HTTP client with it), none of which a server built on the low-level ``Server``
uses; together about a tenth of ``skillbook serve``'s CPU before its first answer.
:func:`server_imports` puts a stand-in for those two packages in ``sys.modules``
while the server's modules are imported: the SDK's submodules load from the
package folders as always, and the stand-in runs the package's real ``__init__``
the first time anything asks it for a name it does not hold yet (``mcp.Client``,
``from mcp.server import MCPServer``), so every import keeps working, only later.

The cyclic garbage collector is paused meanwhile (importing the SDK builds
thousands of pydantic schemas, objects that live as long as the process), and
what was imported is then frozen out of later collections.
"""

from __future__ import annotations

import gc
import importlib.util
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["server_imports"]

#: Packages whose ``__init__`` the server does not need (the SDK's, see the module),
#: parents first.
DEFERRED_PACKAGES = tuple(".".join(parts) for parts in (("mcp",), ("mcp", "server")))


class _DeferredPackage(types.ModuleType):
    """A package whose ``__init__`` runs when a name it lacks is first asked for."""

    def __getattr__(self, name: str) -> Any:
        namespace = self.__dict__
        if not namespace.get("_skillbook_initialised"):
            namespace["_skillbook_initialised"] = True
            spec = self.__spec__
            assert spec is not None and spec.loader is not None
            spec.loader.exec_module(self)
        try:
            return namespace[name]
        except KeyError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None


def _defer(name: str) -> None:
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    package = _DeferredPackage(name)
    package.__spec__ = spec
    package.__loader__ = spec.loader
    package.__file__ = spec.origin
    package.__path__ = list(spec.submodule_search_locations)
    package.__package__ = name
    sys.modules[name] = package
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, package)


@contextmanager
def server_imports() -> Iterator[None]:
    """Import the server's modules inside this block (see the module docstring)."""
    for name in DEFERRED_PACKAGES:
        _defer(name)
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.freeze()
            gc.enable()
