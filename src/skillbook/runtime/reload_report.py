"""What one rebuild changed: :class:`ReloadReport`, and :class:`ReloadDiff` that makes it.

Input: the book (and snapshot) a session held and the book a rebuild made. Output: a
:class:`ReloadReport` naming the skills added, removed, changed and whose status
changed, and whether the prompt text changed. Never reads a file.

A rebuild after an edit hands back the very same skill objects (the parse cache) and
status entries (the status memo) everywhere but at the edited positions. There the
diff is taken from those positions alone, found in C-level passes
(:func:`skillbook.pipeline.cache.skill_memo.moved`), and gives what comparing every skill by name
gives: a position whose name changed is a removal and an addition, a name that moved
between two changed positions is neither. Whenever the books are not positionally
comparable (a skill added or removed, more than
:data:`~skillbook.pipeline.cache.skill_memo.PATCH_LIMIT` positions, names not known to be distinct)
every skill is compared by name instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skillbook.model import Skill
from skillbook.pipeline.cache.skill_memo import PATCH_LIMIT, moved
from skillbook.pipeline.gating.status import StatusEntry

if TYPE_CHECKING:
    from skillbook.pipeline.book import SkillBook
    from skillbook.pipeline.snapshot import SkillSnapshot

__all__ = ["ReloadDiff", "ReloadReport", "StatusChange"]

Names = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StatusChange:
    """A skill whose eligibility status (``ready``, ``needs-setup``, …) changed."""

    name: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class ReloadReport:
    """What one rebuild changed, by skill name (names in the new book's order;
    ``removed`` in the old book's)."""

    book: SkillBook
    version: int
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    #: Same name, different description, file, source, frontmatter or body.
    changed: tuple[str, ...] = ()
    status_changed: tuple[StatusChange, ...] = ()
    prompt_changed: bool = False
    #: SKILL.md files read and parsed by this rebuild (parse-cache misses).
    reparsed: int = 0
    #: Paths the watcher reported and the rebuild looked at, or None: a full stat walk.
    hinted: tuple[str, ...] | None = None

    @property
    def empty(self) -> bool:
        """Nothing a model or a user could notice changed."""
        return not (
            self.added or self.removed or self.changed or self.status_changed or self.prompt_changed
        )


class ReloadDiff:
    """Diffs each book against the one before; a session keeps one between rebuilds.

    It remembers the names of the last book it was given when they were all distinct:
    what makes a positional diff of the next book exact.
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        #: (the last new book's skills, their names) when no name was there twice.
        self._last: tuple[tuple[Skill, ...], set[str]] | None = None

    def diff(
        self,
        old: SkillBook | None,
        old_snapshot: SkillSnapshot | None,
        new: SkillBook,
        *,
        version: int,
        reparsed: int,
        hinted: tuple[str, ...] | None = None,
    ) -> ReloadReport:
        """The report of ``new`` against ``old`` (None: the first build)."""
        last = self._last
        known = last[1] if old is not None and last is not None and last[0] is old.skills else None
        self._last = None  # until the names of ``new`` are known
        before = old.skills if old is not None else ()
        patched = _by_position(before, new.skills, known) if known is not None else None
        if patched is not None:
            added, removed, changed = patched
            names: set[str] | None = known
            distinct = True
        else:
            added, removed, changed, old_names, names = _by_name(before, new.skills)
            distinct = old_names is not None and names is not None
        if names is not None:
            self._last = (new.skills, names)
        statuses: tuple[StatusChange, ...] = ()
        if old is not None:
            entries, new_entries = old.status.skills, new.status.skills
            # Entries are of distinct skills when both books' names are distinct.
            found = _statuses_by_position(entries, new_entries) if distinct else None
            statuses = found if found is not None else _statuses_by_name(entries, new_entries)
        old_prompt = old_snapshot.prompt if old_snapshot is not None else ""
        return ReloadReport(
            book=new,
            version=version,
            added=added,
            removed=removed,
            changed=changed,
            status_changed=statuses,
            prompt_changed=old_prompt != new.prompt,  # a memcmp, even for megabytes
            reparsed=reparsed,
            hinted=hinted,
        )


def _patchable(before: Sequence[object], after: Sequence[object]) -> list[int] | None:
    """The positions where ``after`` holds another object, when few enough to patch."""
    if len(before) != len(after):
        return None
    at = moved(before, after)
    return at if len(at) <= PATCH_LIMIT else None


def _by_position(
    before: Sequence[Skill], after: Sequence[Skill], names: set[str]
) -> tuple[Names, Names, Names] | None:
    """(added, removed, changed) from the positions holding another skill, or None.

    ``names``: those of ``before``, all distinct; updated to ``after``'s on success."""
    at = _patchable(before, after)
    if at is None:
        return None
    gone = {before[i].name: before[i] for i in at}
    came = {after[i].name: after[i] for i in at}
    # Every other position holds the skill it held: a name of ``before`` not given up
    # at a changed position is still there, and taking it again would make a duplicate.
    if len(came) != len(at) or any(n in names and n not in gone for n in came):
        return None
    added = tuple(n for n in came if n not in gone)
    removed = tuple(n for n in gone if n not in came)
    changed = tuple(n for n, s in came.items() if n in gone and _differs(gone[n], s))
    names.difference_update(removed)
    names.update(added)
    return added, removed, changed


def _by_name(
    before: Sequence[Skill], after: Sequence[Skill]
) -> tuple[Names, Names, Names, set[str] | None, set[str] | None]:
    """(added, removed, changed, ``before``'s names, ``after``'s names) comparing every
    skill by name; a side's names are None when one is there twice."""
    old = {s.name: s for s in before}
    new = {s.name: s for s in after}
    changed = tuple(
        name for name, skill in new.items() if name in old and _differs(old[name], skill)
    )
    return (
        tuple(n for n in new if n not in old),
        tuple(n for n in old if n not in new),
        changed,
        set(old) if len(old) == len(before) else None,
        set(new) if len(new) == len(after) else None,
    )


def _statuses_by_position(
    before: Sequence[StatusEntry], after: Sequence[StatusEntry]
) -> tuple[StatusChange, ...] | None:
    """The status changes at the positions holding another entry (the status memo hands
    back the same entry for an unchanged skill), or None; entries of distinct names."""
    at = _patchable(before, after)
    if at is None:
        return None
    old = {before[i].name: before[i].status for i in at}
    return tuple(
        StatusChange(e.name, old[e.name], e.status)
        for e in map(after.__getitem__, at)
        if e.name in old and old[e.name] != e.status
    )


def _statuses_by_name(
    before: Sequence[StatusEntry], after: Sequence[StatusEntry]
) -> tuple[StatusChange, ...]:
    old = {e.name: e.status for e in before}
    new = {e.name: e.status for e in after}
    return tuple(
        StatusChange(name, old[name], status)
        for name, status in new.items()
        if name in old and old[name] != status
    )


def _differs(a: Skill, b: Skill) -> bool:
    if a is b:
        return False
    # Skill equality leaves out the parsed file; a body edit must still count.
    return a != b or (a.parsed is not b.parsed and a.parsed != b.parsed)
