"""The optional dependencies of selection, imported where used with a helpful error."""

from __future__ import annotations

import importlib.util

from skillbook.selection import SelectionUnavailable

__all__ = ["require"]


def require(module: str, what: str, extra: str = "selection") -> None:
    """Raise :class:`SelectionUnavailable` naming the extra when ``module`` is missing."""
    if importlib.util.find_spec(module) is None:
        raise SelectionUnavailable(
            f'{what} needs the {module!r} package: pip install "skillbook[{extra}]"'
        )
