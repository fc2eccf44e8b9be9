"""A cheaper ``__init__`` for the frozen, slotted dataclasses a cold build makes per file.

A frozen dataclass stores each field through ``object.__setattr__`` looked up on every
call; a build of 10,000 skills makes about six such objects per file (the skill, its
parsed file, frontmatter, manifest, ...), and their ``__init__`` was ~5 % of it.
:func:`fast_init` swaps in an ``__init__`` with the same signature (names, order,
defaults, default factories) that stores each field through its slot descriptor,
bound once. The class, its fields, ``__eq__``, ``__repr__``, ``__hash__``,
``dataclasses.replace`` and immutability (assignment still raises
``FrozenInstanceError``) are unchanged; a differential test compares every decorated
class with the ``__init__`` dataclasses generated.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

_T = TypeVar("_T")

#: The ``__init__`` dataclasses generated, kept for the differential tests.
ORIGINAL_INITS: dict[type[Any], Any] = {}


def fast_init(cls: type[_T]) -> type[_T]:
    """Give the frozen, slotted dataclass ``cls`` an ``__init__`` that stores through slots.

    Only plain classes qualify: frozen, ``slots=True``, no ``__post_init__``, no
    ``InitVar`` or ``init=False`` field (anything else raises ``TypeError``, at import).
    """
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} is not a frozen, slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has __post_init__")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    original = cls.__dict__["__init__"]
    code = original.__code__
    # The generated signature must be exactly (self, *fields): no InitVar, no init=False
    # field, no keyword-only field.
    if code.co_kwonlyargcount or code.co_varnames[1 : code.co_argcount] != tuple(
        f.name for f in fields
    ):
        raise TypeError(f"{cls.__name__} has an __init__ other than its fields")
    scope: dict[str, Any] = {"_MISSING": _MISSING}
    signature: list[str] = []
    body: list[str] = []
    for i, f in enumerate(fields):
        scope[f"_set{i}"] = cls.__dict__[f.name].__set__
        if f.default is not dataclasses.MISSING:
            scope[f"_default{i}"] = f.default
            signature.append(f"{f.name}=_default{i}")
        elif f.default_factory is not dataclasses.MISSING:
            # As dataclasses does: a sentinel default, the factory called per instance.
            scope[f"_factory{i}"] = f.default_factory
            signature.append(f"{f.name}=_MISSING")
            body.append(f"    if {f.name} is _MISSING: {f.name} = _factory{i}()")
        else:
            signature.append(f.name)
        body.append(f"    _set{i}(self, {f.name})")
    source = f"def __init__(self, {', '.join(signature)}):\n" + "\n".join(body or ["    pass"])
    exec(source, scope)  # the source holds only field names and generated locals
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    ORIGINAL_INITS[cls] = original
    type.__setattr__(cls, "__init__", init)
    return cls


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory default>"


_MISSING: Any = _Missing()
