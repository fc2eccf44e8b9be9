"""The last merge of local skills, reused after an edit: :class:`MergeMemo`.

Input: the skills every local root loaded, in load order, as discovery hands them to the
merge; whether real folders are de-duplicated and whether the winners are sorted by name.
Output: the merged (and maybe sorted) skills, as :func:`skillbook.pipeline.discovery.discover` would merge
them, or None when the merge must run.

Nearly always no two skills share a name or a real folder: the merge then keeps every
skill in load order, and only the name sort (OpenClaw 2026.9) reorders them. When the
next build's skills differ from such a merge's only at a few positions, and each new
skill there has the name and real folder of the one it replaced, no name can collide
and no folder can repeat that did not before: the merge is the same, and the name
order the same permutation. A rebuild after one edit then pays C-level passes instead
of hashing ten thousand names and paths.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillbook.model import Skill
from skillbook.pipeline.cache.skill_memo import PATCH_LIMIT, moved

__all__ = ["MergeMemo"]


class MergeMemo:
    """One loader's last merge in which every name and real folder was distinct."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        #: (skills loaded, the name order as positions or None, dedupe, sort): set in one
        #: assignment, so a reader in another thread sees one merge whole.
        self._last: tuple[tuple[Skill, ...], tuple[int, ...] | None, bool, bool] | None = None

    def reuse(
        self, loaded: Sequence[Skill], *, dedupe_realpath: bool, sort_by_name: bool
    ) -> list[Skill] | None:
        """The merge of ``loaded`` when the last one answers it, else None."""
        last = self._last
        if (
            last is None
            or len(last[0]) != len(loaded)
            or last[2] != dedupe_realpath
            or last[3] != sort_by_name
        ):
            return None
        before = last[0]
        changed = moved(before, loaded)
        if len(changed) > PATCH_LIMIT:
            return None
        for i in changed:
            old, new = before[i], loaded[i]
            if old.name != new.name or old.real_dir != new.real_dir:
                return None
        now = tuple(loaded)
        self._last = (now, last[1], dedupe_realpath, sort_by_name)
        order = last[1]
        return list(now) if order is None else list(map(now.__getitem__, order))

    def remember(
        self,
        loaded: Sequence[Skill],
        order: Sequence[int] | None,
        *,
        dedupe_realpath: bool,
        sort_by_name: bool,
    ) -> None:
        """Keep a merge that kept every skill of ``loaded`` (``order``: the positions in
        name order when sorted)."""
        kept = tuple(order) if order is not None else None
        self._last = (tuple(loaded), kept, dedupe_realpath, sort_by_name)

    def forget(self) -> None:
        """A merge that hid or dropped a skill: the next one runs in full."""
        self._last = None
