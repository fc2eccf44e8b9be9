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

Two more costs of that import are cut while the block runs (issue 22: ``serve``'s
start-up was 2.4× a ``prompt --no-cache`` process, most of it the SDK's import):

- pydantic models are created with ``defer_build``: a model's validator and
  serializer are built when it is first used, not when its class is created, so
  the hundreds of protocol models of both protocol versions that no request of this
  process uses are never built (:func:`_deferred_models`);
- the SDK's ``Model.model_rebuild()`` calls at module level (and pydantic's own when
  a generic model is parametrized) leave a deferred model deferred: it is built on
  first use like the others, its forward references resolved from its module then
  (:func:`_deferred_rebuilds`);
- the SDK's module-level ``TypeAdapter`` objects (the JSON-RPC message union, the
  per-era request, notification and result unions, the auth routes' adapters: 9
  of them, about a tenth of the import) are created deferred as well: each builds
  its validator the first time it validates or serialises, so the adapters the
  requests of this process never use (the auth routes', the client side's unions)
  are never built (:func:`_deferred_adapters`);
- the string annotations pydantic evaluates become ``typing.ForwardRef`` objects,
  each compiling its string on Python 3.11: 2,300 compilations of 585 distinct
  strings. Code objects are immutable, so equal strings share one compilation
  (:func:`_shared_compilations`).

Both are undone when the block ends: later imports see the defaults.
"""

from __future__ import annotations

import gc
import importlib.util
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["collector_paused", "server_imports"]

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
def _deferred_models() -> Iterator[None]:
    """pydantic's ``defer_build`` as the default of the models created in the block."""
    try:
        from pydantic._internal import _config
    except ImportError:  # another pydantic: nothing to defer
        yield
        return
    defaults = getattr(_config, "config_defaults", None)
    if not isinstance(defaults, dict) or "defer_build" not in defaults:
        yield
        return
    before = defaults["defer_build"]
    defaults["defer_build"] = True
    try:
        yield
    finally:
        defaults["defer_build"] = before


@contextmanager
def _deferred_rebuilds() -> Iterator[None]:
    """``Model.model_rebuild()`` calls of the block leave a deferred model deferred.

    The SDK's modules call it at module level (forward references to classes defined
    further down) and pydantic calls it when a generic model is parametrized; either
    would build the model's validator now. A deferred model resolves the same names
    from its module when first used, so the build can wait. pydantic's own rebuild on
    first use (``raise_errors=False``) and forced rebuilds go through unchanged.
    """
    try:
        from pydantic import BaseModel
    except ImportError:  # no pydantic: nothing to defer
        yield
        return
    held = vars(BaseModel).get("model_rebuild")
    if not isinstance(held, classmethod):  # another pydantic
        yield
        return
    rebuild = held.__func__

    def deferred(cls: Any, *, force: bool = False, raise_errors: bool = True, **kw: Any) -> Any:
        config = cls.model_config
        if (
            not force
            and raise_errors
            and not cls.__pydantic_complete__
            and config.get("defer_build", True) is True
        ):
            return None
        kw.setdefault("_parent_namespace_depth", 2)
        if kw["_parent_namespace_depth"] > 0 and "_types_namespace" not in kw:
            kw["_parent_namespace_depth"] += 1  # this wrapper is one frame more
        return rebuild(cls, force=force, raise_errors=raise_errors, **kw)

    BaseModel.model_rebuild = classmethod(deferred)  # type: ignore[method-assign,assignment,arg-type]
    try:
        yield
    finally:
        BaseModel.model_rebuild = held  # type: ignore[method-assign,assignment]


@contextmanager
def _deferred_adapters() -> Iterator[None]:
    """``TypeAdapter`` objects created in the block defer their build (pydantic's own
    ``defer_build``, which an adapter otherwise takes only from an explicit config)
    unless their config says ``defer_build=False``."""
    try:
        from pydantic import TypeAdapter
    except ImportError:  # no pydantic: nothing to defer
        yield
        return
    prop = vars(TypeAdapter).get("_defer_build")
    if not isinstance(prop, property) or prop.fget is None:  # another pydantic
        yield
        return

    def deferred(adapter: Any) -> bool:
        config = adapter._config if adapter._config is not None else adapter._model_config
        return not config or config.get("defer_build", True) is True

    TypeAdapter._defer_build = property(deferred)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        TypeAdapter._defer_build = prop  # type: ignore[method-assign,assignment]


@contextmanager
def _shared_compilations() -> Iterator[None]:
    """``typing``'s calls to ``compile`` (``ForwardRef``) memoised by source while the
    block runs: a name in ``typing``'s globals is found before the builtin."""
    import typing

    if "compile" in vars(typing):  # someone else's: leave it
        yield
        return
    memo: dict[tuple[str, str, str], Any] = {}
    plain = compile

    def shared(source: Any, filename: Any, mode: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not isinstance(source, str) or not isinstance(filename, str):
            return plain(source, filename, mode, *args, **kwargs)
        key = (source, filename, mode)
        code = memo.get(key)
        if code is None:
            code = memo[key] = plain(source, filename, mode)
        return code

    typing.compile = shared  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del typing.compile  # type: ignore[attr-defined]


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while the block runs, then what it made frozen
    out of later collections (when the collector was on before).

    For work that builds objects living as long as the process: the SDK's classes
    and schemas, the first book and served catalog (about 55,000 objects for 1,000
    skills, whose allocation would otherwise trigger full collections over
    everything imported so far: about a seventh of the catalog's build)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.freeze()
            gc.enable()


@contextmanager
def server_imports() -> Iterator[None]:
    """Import the server's modules inside this block (see the module docstring)."""
    for name in DEFERRED_PACKAGES:
        _defer(name)
    with (
        collector_paused(),
        _deferred_models(),
        _deferred_rebuilds(),
        _deferred_adapters(),
        _shared_compilations(),
    ):
        yield
