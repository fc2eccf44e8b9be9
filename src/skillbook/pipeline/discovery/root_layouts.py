"""Root layouts beside one skill per child folder: nested, grouped, hidden, standalone.

Input: a root folder being scanned by :class:`~skillbook.pipeline.discovery.root_scanner.RootScanner`.
Output: the folder skills are really read from (``<root>/skills`` when it holds
skills, OpenClaw's ``resolveNestedSkillsRoot``), the skills of grouped folders
(``group/leaf/SKILL.md``, when ``skills.load.grouped`` asks for them) and of
standalone Markdown files, and the diagnostics that say why skills in other places
(hidden folders, grouped folders, a misnamed ``skill.md``, broken or looping links)
are not loaded. Reading one skill folder stays the scanner's and its reader's job:
:meth:`Layouts.groups` is handed the scanner's candidate loader.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from skillbook.base import listing as _listing
from skillbook.base.js import js_sorted
from skillbook.diagnostics import info, warning
from skillbook.model import Skill
from skillbook.pipeline.cache.scan_reads import touch
from skillbook.pipeline.discovery import scan_fs
from skillbook.pipeline.discovery.learned import is_learned_subdir
from skillbook.pipeline.discovery.root_containment import Containment
from skillbook.pipeline.discovery.skill_reader import (
    SKILL_FILE,
    SkillReader,
    is_standalone_candidate,
    limit_list,
)

NESTED_ROOT_NAME = "skills"
#: The limit named in over-limit diagnostics.
MAX_LOADED_KEY = "skills.limits.maxSkillsLoadedPerSource"


#: How the scanner loads one candidate folder: (folder, source label, where) to its
#: skills, or None when it holds no SKILL.md.
LoadCandidate = Callable[[str, str, dict[str, str]], list[Skill] | None]


class Layouts:
    """The layout handling of one scan: its reader (diagnostics, standalone files),
    limits, containment and the ``skills.load.grouped`` switch."""

    __slots__ = ("containment", "grouped", "limits", "reader")

    def __init__(self, reader: SkillReader, containment: Containment, *, grouped: bool) -> None:
        self.reader = reader
        self.limits = reader.limits
        self.containment = containment
        self.grouped = grouped

    def nested_root(self, root_dir: str) -> str:
        """``resolveNestedSkillsRoot``: use ``<root>/skills`` if a child of it is a skill."""
        nested = os.path.join(root_dir, NESTED_ROOT_NAME)
        if not scan_fs.is_dir(nested):
            return root_dir
        scan = max(0, self.limits.max_candidates_per_root)
        for name in scan_fs.list_child_dirs(nested).dirs[:scan]:
            if scan_fs.has_file(os.path.join(nested, name, SKILL_FILE)):
                break
        else:
            return root_dir
        hidden = [
            n
            for n in scan_fs.list_child_dirs(root_dir).dirs
            if n != NESTED_ROOT_NAME and scan_fs.has_file(os.path.join(root_dir, n, SKILL_FILE))
        ]
        if hidden:
            self.reader.add(
                warning,
                "discover.nested-root",
                f"Detected nested skills root at {nested}; it is used instead of {root_dir}, "
                f"so these skill folders directly in {root_dir} are not loaded: "
                f"{limit_list(hidden)}",
                nested,
            )
        else:
            self.reader.add(
                info, "discover.nested-root", f"Detected nested skills root at {nested}", nested
            )
        return nested

    def report_listing(self, base_dir: str, listing: _listing.Listing) -> None:
        for name in listing.broken_links:
            self.reader.add(
                warning,
                "discover.unreadable",
                f"{name} is a broken symbolic link; skipped",
                os.path.join(base_dir, name),
            )
        for name in listing.looped_links:
            self.reader.add(
                warning,
                "discover.symlink-loop",
                f"{name} is a symbolic link that loops back to itself (it resolves to no "
                "folder); skipped: remove it or point it at a skill folder",
                os.path.join(base_dir, name),
            )
        self.report_hidden(base_dir, listing)

    def report_hidden(self, base_dir: str, listing: _listing.Listing) -> None:
        for name in listing.hidden_dirs:
            hidden_dir = os.path.join(base_dir, name)
            if scan_fs.has_file(os.path.join(hidden_dir, SKILL_FILE)):
                found = [name]
            else:
                found = [
                    f"{name}/{leaf}"
                    for leaf in js_sorted(scan_fs.list_child_dirs(hidden_dir).dirs)
                    if scan_fs.has_file(os.path.join(hidden_dir, leaf, SKILL_FILE))
                ]
            if found:
                self.reader.add(
                    warning,
                    "discover.hidden-dir",
                    f"skill folders under the hidden folder {name}/ are not discovered "
                    f"({limit_list(found)}); move them out, or add {hidden_dir} to "
                    "`skills.load.extraDirs`",
                    hidden_dir,
                )

    def check_case(self, skill_dir: str) -> None:
        touch(skill_dir)
        try:
            names = os.listdir(skill_dir)
        except OSError:
            return
        self.report_case(skill_dir, names)

    def report_case(self, folder: str, names: Iterable[str]) -> None:
        """``discover.skill-md-case`` for each of ``names`` (a listing of ``folder``)
        that is ``SKILL.md`` in another casing."""
        for name in names:
            if name.lower() == "skill.md" and name != SKILL_FILE:
                self.reader.add(
                    warning,
                    "discover.skill-md-case",
                    f"found {name}, but only a file named exactly SKILL.md is a skill; rename it",
                    os.path.join(folder, name),
                )

    def group_leaves(self, group_dir: str) -> list[str]:
        """The skill folders one level below a folder without a SKILL.md."""
        return [
            leaf
            for leaf in js_sorted(scan_fs.list_child_dirs(group_dir).dirs)
            if scan_fs.has_file(os.path.join(group_dir, leaf, SKILL_FILE))
        ]

    def groups(
        self,
        groups: list[tuple[str, list[str]]],
        loaded: list[Skill],
        label: str,
        where: dict[str, str],
        load: LoadCandidate,
    ) -> None:
        """Grouped folders: loaded with ``load`` when ``skills.load.grouped`` asks, else reported."""
        max_loaded = self.limits.max_skills_loaded_per_source
        for group_dir, leaves in groups:
            group = os.path.basename(group_dir)
            if is_learned_subdir(label, where["root_dir"], group_dir):
                continue  # learned skills: a source of their own (skillbook.pipeline.discovery.learned)
            if not self.grouped:
                self.reader.add(
                    warning,
                    "discover.grouped-layout",
                    f"{group}/ has no SKILL.md but holds skill folders one level down "
                    f"({limit_list([f'{group}/{leaf}' for leaf in leaves])}); they are not "
                    "loaded: set `skills.load.grouped: true` to load them",
                    group_dir,
                )
                continue
            for index, leaf in enumerate(leaves):
                if len(loaded) >= max_loaded:
                    self.reader.add(
                        warning,
                        "discover.over-limit",
                        f"the `{MAX_LOADED_KEY}` limit of {max_loaded} is reached; grouped skill "
                        f"folders not loaded: {limit_list(leaves[index:])}",
                        group_dir,
                    )
                    return
                leaf_dir = os.path.join(group_dir, leaf)
                if self.containment.contained(leaf_dir, **where) is None:
                    continue
                loaded.extend(load(leaf_dir, label, where) or [])

    def standalone(
        self, base_dir: str, base_real: str, files: Iterable[str], loaded: list[Skill], label: str
    ) -> None:
        """Standalone Markdown files of the root (mixed/legacy mode), after its folders."""
        max_loaded = self.limits.max_skills_loaded_per_source
        for name in js_sorted(files):
            if not is_standalone_candidate(name) or len(loaded) >= max_loaded:
                continue
            path = os.path.join(base_dir, name)
            found = self.reader.load_standalone(path, base_dir, base_real, label)
            if found is None:
                continue
            self.reader.add(
                info,
                "discover.standalone-md",
                f"loaded the standalone Markdown file {name} as skill {found.name!r} ({label})",
                path,
                skill=found.name,
            )
            loaded.append(found)
