"""Values kept per skill object between builds: :class:`SkillMemo` and :class:`PositionalMap`.

Input: the skills (or other per-skill values) of one build and a function of one item.
Output: that function's value for every item, the same as calling it on each, computed
only for objects not seen before. Discovery hands back the *same* :class:`Skill` object
for a file that did not change (its parse cache), so a rebuild after one edit meets
ten thousand known objects and one new one.

Two ways to find the known ones, cheapest first:

* by position: when the items come in the same number as last time, the positions
  holding another object than before are found in C-level passes, and only those are
  looked up (a rebuild after an edit: no Python call per unchanged item);
* by object identity (:class:`SkillMemo` only): any other change (a skill added,
  removed or reordered) looks every item up by ``id``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from itertools import compress
from operator import is_not, itemgetter
from typing import Generic, TypeVar

from skillbook.model import Skill

__all__ = ["PATCH_LIMIT", "PositionalMap", "SkillMemo", "moved"]

T = TypeVar("T")
V = TypeVar("V")

#: More changed positions than this and a patch stops paying: a reordering, a new
#: home, a config change. Past it the whole sequence is looked up again.
PATCH_LIMIT = 64

#: The value of a memo entry (skill, value).
_VALUE = itemgetter(1)


def moved(last: Sequence[object], now: Sequence[object]) -> list[int]:
    """The positions where ``now`` holds another object than ``last`` (same lengths),
    found in C-level passes: a rebuild after one edit asks this of every skill."""
    return list(compress(range(len(now)), map(is_not, last, now)))


class PositionalMap(Generic[T, V]):
    """``[fn(x) for x in items]``, reusing the last call's value wherever the same object
    sits at the same position (``fn`` must depend on its item only, and the caller
    keeps one map per function).

    Only the last call is kept: a value is never held for an item that is gone.
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: tuple[tuple[T, ...], tuple[V, ...]] | None = None

    def __call__(
        self,
        items: Sequence[T],
        fn: Callable[[T], V],
        whole: Callable[[tuple[T, ...]], tuple[V, ...]] | None = None,
    ) -> tuple[V, ...]:
        """``fn`` of every item; ``whole`` (if given) answers when no patch can: it must
        give what ``fn`` gives, item by item."""
        now = tuple(items)  # a copy: the caller's list may change after this returns
        last = self._last
        if last is not None and len(last[0]) == len(now):
            changed = moved(last[0], now)
            if len(changed) <= PATCH_LIMIT:
                out = last[1]
                if changed:
                    patched = list(out)
                    for i in changed:
                        patched[i] = fn(now[i])
                    out = tuple(patched)
                self._last = (now, out)
                return out
        out = whole(now) if whole is not None else tuple(map(fn, now))
        self._last = (now, out)
        return out

    def clear(self) -> None:
        self._last = None


class SkillMemo(Generic[V]):
    """Values computed per skill object (status entries, gate verdicts), kept by the
    caller across builds.

    A value is reused only for that very object and only while the config, host, PATH
    lookup and the other inputs named by :meth:`key_on` are the same objects as before;
    anything else is computed again. Binary lookups are cached per PATH anyway, so
    reuse never answers differently from a fresh evaluation by the same loader.
    """

    __slots__ = ("_by_position", "_entries", "_key")

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._entries: dict[int, tuple[Skill, V]] = {}
        #: The last :meth:`get_all`'s skills and values, for the positional patch (kept
        #: in one assignment: a status report made in another thread reads it whole).
        self._by_position = PositionalMap[Skill, V]()

    def key_on(self, key: tuple[object, ...]) -> None:
        old = self._key
        same = (
            old is not None
            and len(old) == len(key)
            and all(a is b or a == b for a, b in zip(old, key, strict=True))
        )
        if not same:
            self._entries.clear()
            self._by_position.clear()
            self._key = key

    def get(self, skill: Skill, compute: Callable[[Skill], V]) -> V:
        hit = self._entries.get(id(skill))
        if hit is not None and hit[0] is skill:
            return hit[1]
        value = compute(skill)
        self._entries[id(skill)] = (skill, value)
        return value

    def get_all(self, skills: Sequence[Skill], compute: Callable[[Skill], V]) -> tuple[V, ...]:
        """:meth:`get` of every skill, in order.

        After an edit only the changed positions are looked up (see the module). Else
        every skill is looked up by ``id``: an entry holds its skill, so no other object
        alive can have that ``id``, and a hit is that very skill. When every skill hits,
        the lookups run in C-level passes too."""
        return self._by_position(
            skills, lambda s: self.get(s, compute), lambda now: self._look_up(now, compute)
        )

    def _look_up(self, skills: tuple[Skill, ...], compute: Callable[[Skill], V]) -> tuple[V, ...]:
        entries = self._entries
        hits = list(map(entries.get, map(id, skills)))
        if None not in hits:
            return tuple(map(_VALUE, hits))  # type: ignore[arg-type]
        out: list[V] = []
        for skill, hit in zip(skills, hits, strict=True):
            if hit is not None:
                out.append(hit[1])
            else:
                value = compute(skill)
                entries[id(skill)] = (skill, value)
                out.append(value)
        return tuple(out)

    def __len__(self) -> int:
        return len(self._entries)

    def prune(self, keep: Collection[Skill]) -> None:
        """Forget skills that are gone once they could double the memo (so it does not
        grow with every edit, and an unchanged rebuild does not walk it).

        A book's status report is made on first use, maybe in another thread while
        a new build prunes: the keys are copied in one step, and a value stored for
        a skill that is gone is only a value nobody asks for until the next prune."""
        if len(self._entries) <= 2 * len(keep):
            return  # a walk over every entry on each edit would cost what the memo saves
        alive = {id(s) for s in keep}
        for k in list(self._entries):
            if k not in alive:
                self._entries.pop(k, None)
