"""Copy bundled or managed skills into a workspace to edit them (OpenPocket's ``skills load``).

Input: a loaded :class:`~skillbook.pipeline.book.SkillBook` and skill names (or all). Output:
``<workspace>/skills/<folder>`` holding a copy of each skill, a
``.skillbook-origin.json`` in it recording what was copied (each file's size and
sha256), and a :class:`LoadOutcome` per skill. The copy then shadows the original
(workspace skills win), so edits take effect.

A copy whose files still match its record is refreshed silently when the original
changed; a copy that was edited (or a folder this command did not make) is never
overwritten unless ``force``, and the outcome names the changed files. Each copy is
built beside its destination and swapped in atomically (:mod:`skillbook.distribution.swap`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbook import diagnostics as dg
from skillbook.base.locks import folder_lock
from skillbook.diagnostics import Diagnostic
from skillbook.distribution import swap
from skillbook.distribution.sync import SyncError
from skillbook.distribution.sync.copytree import CopyError, copy_skill
from skillbook.distribution.sync.listing import TreeEntry, list_tree
from skillbook.errors import SkillNotFound
from skillbook.model import Skill, Source
from skillbook.pipeline.book import SkillBook

#: The record of what ``load`` copied, inside the copy.
ORIGIN_FILE = ".skillbook-origin.json"
#: Sources ``load`` copies from, highest precedence first.
LOAD_SOURCES: tuple[str, ...] = (Source.MANAGED.value, Source.BUNDLED.value)


@dataclass(frozen=True, slots=True)
class LoadOutcome:
    """What happened to one skill.

    ``action``: ``loaded`` (new copy), ``refreshed`` (an unedited copy replaced by the
    changed original), ``unchanged`` (the copy already matches), ``refused`` (the copy
    was edited; nothing written) or ``replaced`` (an edited copy overwritten, ``force``).
    ``changed`` lists the files that differ from what was loaded (added, removed or edited).
    """

    name: str
    source: str
    source_dir: Path
    folder: Path
    action: str
    changed: tuple[str, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        return self.action != "refused"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "from": str(self.source_dir),
            "folder": str(self.folder),
            "action": self.action,
            "changed": list(self.changed),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


def loadable_skills(book: SkillBook, sources: Sequence[str] = LOAD_SOURCES) -> list[Skill]:
    """The skills ``load`` can copy, one per name (managed before bundled), in load order."""
    chosen: dict[str, Skill] = {}
    for skill in book.discovery.loaded:
        if skill.source not in sources:
            continue
        held = chosen.get(skill.name)
        if held is None or sources.index(skill.source) < sources.index(held.source):
            chosen[skill.name] = skill
    return list(chosen.values())


def load_skills(
    book: SkillBook,
    names: Sequence[str] | None = None,
    *,
    force: bool = False,
    sources: Sequence[str] = LOAD_SOURCES,
) -> tuple[LoadOutcome, ...]:
    """Copy the named skills (``None``: all loadable) into ``<workspace>/skills``.

    A name matches a skill's name or its folder name. Raises :class:`SkillNotFound`
    for a name no source in ``sources`` has (nothing is copied then), and
    :class:`SyncError` without a workspace.
    """
    if book.workspace is None:
        raise SyncError("load needs a workspace to copy skills into")
    available = loadable_skills(book, sources)
    if names is None:
        picked = available
    else:
        picked = []
        for name in names:
            found = [s for s in available if name in (s.name, s.base_dir.name)]
            if not found:
                raise SkillNotFound(name)
            picked.extend(s for s in found if s not in picked)
    skills_dir = book.workspace / "skills"
    skills_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(skills_dir):
        return tuple(_load_one(skill, skills_dir, force=force) for skill in picked)


def _load_one(skill: Skill, skills_dir: Path, *, force: bool) -> LoadOutcome:
    folder_name = skill.base_dir.name
    if folder_name in ("", ".", "..") or folder_name.startswith("."):
        raise SyncError(f"cannot load {skill.name}: its folder name {folder_name!r} is not usable")
    dest = skills_dir / folder_name
    notes = [_leftover(left) for left in swap.recover(dest)]
    staging = swap.make_staging(dest)
    try:
        os.rmdir(staging)  # copy_skill creates the folder itself
        copy_skill(str(skill.base_dir), str(staging), links="sandbox")
        fresh = list_tree(staging)
        record = {
            "version": 1,
            "name": skill.name,
            "source": skill.source,
            "from": str(skill.base_dir),
            "files": [e.to_json() for e in fresh],
        }
        (staging / ORIGIN_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        action, changed = _decide(dest, fresh, force=force)
        if action in ("unchanged", "refused"):
            swap.remove_tree(staging)
        else:
            swap.replace_tree(
                staging,
                dest,
                on_cleanup_error=lambda old, exc: notes.append(_cleanup_failed(old, exc)),
            )
    except CopyError as exc:
        swap.remove_tree(staging)
        raise SyncError(f"cannot copy {skill.name} from {skill.base_dir}: {exc}") from exc
    except BaseException:
        swap.remove_tree(staging)
        raise
    where = {"path": dest, "skill": skill.name}
    shown = ", ".join(changed)
    if action == "refused":
        notes.append(
            dg.error(
                "load.edited",
                f"{dest} differs from what was loaded ({shown}); it was not overwritten. "
                "Pass --force (force=True) to replace it and discard those changes.",
                **where,
            )
        )
    elif action == "replaced":
        notes.append(
            dg.warning(
                "load.replaced",
                f"{dest} was replaced although it differed from what was loaded; "
                f"changes discarded: {shown}",
                **where,
            )
        )
    return LoadOutcome(
        name=skill.name,
        source=skill.source,
        source_dir=skill.base_dir,
        folder=dest,
        action=action,
        changed=changed,
        diagnostics=tuple(notes),
    )


def _decide(dest: Path, fresh: list[TreeEntry], *, force: bool) -> tuple[str, tuple[str, ...]]:
    if not os.path.lexists(dest):
        return "loaded", ()
    changed: tuple[str, ...] = (dest.name,)
    if dest.is_dir() and not dest.is_symlink():
        current = list_tree(dest, skip={ORIGIN_FILE})
        if current == fresh:
            return "unchanged", ()
        recorded = _recorded(dest)
        if recorded is None:
            # Not made by load (or its record is gone): every file counts as the user's.
            if not current:
                return "loaded", ()
            changed = tuple(e.path for e in current)
        else:
            changed = _differences(recorded, current)
            if not changed:
                return "refreshed", ()
    return ("replaced" if force else "refused"), changed


def _recorded(dest: Path) -> list[TreeEntry] | None:
    """The files ``load`` recorded in ``dest``, or ``None`` without a readable record."""
    try:
        data = json.loads((dest / ORIGIN_FILE).read_text(encoding="utf-8"))
        return [TreeEntry.from_json(e) for e in data["files"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _differences(recorded: list[TreeEntry], current: list[TreeEntry]) -> tuple[str, ...]:
    before = {e.path: e for e in recorded}
    after = {e.path: e for e in current}
    paths = sorted(set(before) | set(after))
    return tuple(p for p in paths if before.get(p) != after.get(p))


def _cleanup_failed(old: Path, exc: OSError) -> Diagnostic:
    return dg.warning(
        "sync.cleanup-failed",
        f"the new copy is in place, but the previous one ({old.name}) could not be "
        f"removed: {exc.strerror or exc}; the next load removes it",
        path=old,
    )


def _leftover(left: swap.Leftover) -> Diagnostic:
    code = "sync.leftover-removed" if left.action == "removed" else "sync.recovered"
    return dg.warning(
        code, f"{left.action} {left.path.name}, left behind by an interrupted load", path=left.path
    )
