"""The environment one run reads, copied once.

Input: an environment mapping (``os.environ``, a dict, a caller's snapshot). Output:
a private copy a run can keep (:func:`own_env`), so a later change to the caller's
mapping does not change what a loader already read. A mapping that already is such a
copy (an :class:`EnvSnapshot`, e.g. the result cache's recording view) is kept as
is: copying it would lose what it does on each read.

Imports no ``collections`` or ``typing``: the fast path of ``skillbook prompt`` imports it.
"""

from __future__ import annotations

from _collections_abc import Mapping  # collections.abc without importing `collections`

__all__ = ["EnvSnapshot", "own_env"]


class EnvSnapshot(Mapping[str, str]):
    """An environment already copied for one run; :func:`own_env` keeps it as is."""

    __slots__ = ()


def own_env(env: Mapping[str, str]) -> Mapping[str, str]:
    """A private copy of ``env`` (an :class:`EnvSnapshot` already is one)."""
    return env if isinstance(env, EnvSnapshot) else dict(env)
