"""The reload report and snapshot of a session, diffed by position (runtime.reload_report).

The differential property: driven through random edits, additions, deletions, renames,
name swaps, duplicate names and status changes (a gated skill whose binary appears on a
private PATH, a skill disabled in the config), every :class:`ReloadReport` equals what
comparing every skill by name gives (the reference below is the diff the session made
before it patched by position), and the snapshot equals one made afresh. The unit tests
pin down that an edit in place takes the positional path and when it falls back.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from factories import isolated_env, write_skill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillbook.config.file import Config
from skillbook.model import Skill
from skillbook.pipeline.book import Loader, SkillBook
from skillbook.pipeline.cache.skill_memo import PATCH_LIMIT
from skillbook.pipeline.gating.gate import BinaryLookup
from skillbook.pipeline.snapshot import SnapshotSkill
from skillbook.runtime import reload_report
from skillbook.runtime.reload_report import ReloadDiff, ReloadReport, StatusChange
from skillbook.runtime.session import SkillSession

FOLDERS = ("alpha", "beta", "gamma", "delta", "eps")
TOOL = "sb-test-tool"

# One step: (operation, folder, other folder).
Op = tuple[str, str, str]
OPS = st.tuples(
    st.sampled_from(
        [
            "edit",
            "edit",
            "body",
            "add",
            "delete",
            "move",
            "retitle",
            "swap",
            "gated",
            "bin",
            "disable",
        ]
    ),
    st.sampled_from(FOLDERS),
    st.sampled_from(FOLDERS),
)


def reference(old: SkillBook | None, old_prompt: str, new: SkillBook) -> tuple[object, ...]:
    """The session's diff before it patched by position: every skill compared by name."""
    before = {s.name: s for s in old.skills} if old is not None else {}
    after = {s.name: s for s in new.skills}
    old_status = {e.name: e.status for e in old.status.skills} if old is not None else {}
    new_status = {e.name: e.status for e in new.status.skills}
    changed = tuple(
        name
        for name, skill in after.items()
        if name in before
        and before[name] is not skill
        and (before[name] != skill or before[name].parsed != skill.parsed)
    )
    status_changed = tuple(
        StatusChange(name, old_status[name], status)
        for name, status in new_status.items()
        if name in old_status and old_status[name] != status
    )
    return (
        tuple(n for n in after if n not in before),
        tuple(n for n in before if n not in after),
        changed,
        status_changed,
        old_prompt != new.prompt,
    )


def observed(report: ReloadReport) -> tuple[object, ...]:
    return (
        report.added,
        report.removed,
        report.changed,
        report.status_changed,
        report.prompt_changed,
    )


class Workspace:
    """A workspace's ``skills`` root, a private PATH folder, and the loader's config."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "ws" / "skills"
        self.bin = tmp / "bin"
        self.bin.mkdir()
        self.env = isolated_env(tmp, path=str(self.bin))
        self.step = 0
        self.disabled: set[str] = set()
        for name in FOLDERS[:3]:
            self.write(name)

    def write(self, folder: str, name: str | None = None, *, gated: bool = False) -> None:
        self.step += 1
        path = self.root / folder
        metadata = {"openclaw": {"requires": {"bins": [TOOL]}}} if gated else None
        write_skill(path, name or folder, f"{folder} {self.step}", metadata=metadata)
        # A distinct mtime per write: two same-size writes within one clock tick look
        # unchanged to any stat-based cache.
        stamp = 1_700_000_000_000_000_000 + self.step * 1_000_000_000
        os.utime(path / "SKILL.md", ns=(stamp, stamp))

    def name_in(self, folder: str) -> str | None:
        md = self.root / folder / "SKILL.md"
        if not md.is_file():
            return None
        line = next(x for x in md.read_text().splitlines() if x.startswith("name: "))
        return line.removeprefix("name: ")

    def apply(self, op: Op, loader: Loader) -> None:
        kind, folder, other = op
        here, there = self.root / folder, self.root / other
        present = (here / "SKILL.md").is_file()
        if kind == "edit" and present:
            self.write(folder, self.name_in(folder))
        elif kind == "body" and present:
            md = here / "SKILL.md"
            md.write_text(md.read_text() + f"More {self.step}.\n")
            self.step += 1
            os.utime(md, ns=(1_800_000_000_000_000_000 + self.step,) * 2)
        elif kind == "add" and not here.exists():
            self.write(folder)
        elif kind == "delete" and here.exists():
            shutil.rmtree(here)
        elif kind == "move" and present and not there.exists():
            here.rename(there)  # the name stays, the file moves
        elif kind == "retitle" and present:
            self.write(folder, other)  # maybe a name another folder holds
        elif kind == "swap" and present and (there / "SKILL.md").is_file() and folder != other:
            mine, theirs = self.name_in(folder), self.name_in(other)
            self.write(folder, theirs)
            self.write(other, mine)
        elif kind == "gated" and present:
            self.write(folder, self.name_in(folder), gated=True)
        elif kind == "bin":
            tool = self.bin / TOOL
            if tool.exists():
                tool.unlink()
            else:
                tool.write_text("#!/bin/sh\n")
                tool.chmod(0o755)
            # A lookup made afresh (as a new process makes it): PATH answers are cached.
            loader.bins = BinaryLookup.for_host(loader.host)
        elif kind == "disable":
            self.disabled ^= {folder}
            entries = {n: {"enabled": False} for n in sorted(self.disabled)}
            loader.config = Config.from_mapping({"skills": {"entries": entries}})

    def loader(self, tmp: Path, compat: str, mode: str) -> Loader:
        entries = {n: {"enabled": False} for n in sorted(self.disabled)}
        config = Config.from_mapping({"skills": {"entries": entries}})
        return Loader(
            self.root.parent,
            config=config,
            env=self.env,
            cwd=tmp,
            cache=False,
            compat=compat,
            mode=mode,
        )


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(st.lists(OPS, min_size=1, max_size=3), min_size=1, max_size=6),
    compat=st.sampled_from(["openclaw-2026.4", "openclaw-2026.9"]),
    mode=st.sampled_from(["openclaw", "strict"]),
)
def test_each_report_and_snapshot_equal_the_full_comparison(
    tmp_path_factory: pytest.TempPathFactory, steps: list[list[Op]], compat: str, mode: str
) -> None:
    tmp = tmp_path_factory.mktemp("reload")
    ws = Workspace(tmp)
    loader = ws.loader(tmp, compat, mode)
    with SkillSession(loader, watch=False) as session:
        book, snapshot = session.current(), session.snapshot()
        for batch in steps:
            for op in batch:
                ws.apply(op, loader)
            report = session.reload()
            assert observed(report) == reference(book, snapshot.prompt, report.book)
            book, snapshot = report.book, session.snapshot()
            assert snapshot == report.book.snapshot(version=report.version)
            fresh = ws.loader(tmp, compat, mode).load()
            assert snapshot.to_json() == fresh.snapshot(version=report.version).to_json()


# ------------------------------------------------------------------ the positional path


@pytest.fixture
def big(tmp_path: Path) -> Iterator[tuple[Workspace, SkillSession]]:
    """A session on more skills than :data:`PATCH_LIMIT`, first build done."""
    ws = Workspace(tmp_path)
    for i in range(PATCH_LIMIT + 16):
        ws.write(f"skill-{i:03d}")
    with SkillSession(ws.loader(tmp_path, "openclaw-2026.4", "openclaw"), watch=False) as s:
        s.current()
        yield ws, s


class Calls:
    """Counts the calls of the full comparisons (the fallback of the positional diff)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.by_name = 0
        self.statuses_by_name = 0
        by_name, statuses = reload_report._by_name, reload_report._statuses_by_name

        def counted_by_name(*args: object, **kw: object) -> object:
            self.by_name += 1
            return by_name(*args, **kw)  # type: ignore[arg-type]

        def counted_statuses(*args: object, **kw: object) -> object:
            self.statuses_by_name += 1
            return statuses(*args, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(reload_report, "_by_name", counted_by_name)
        monkeypatch.setattr(reload_report, "_statuses_by_name", counted_statuses)


def reloaded(session: SkillSession) -> ReloadReport:
    """``session.reload()``, checked against the full comparison."""
    last = session.last_report  # what the session holds (current() would rebuild first)
    assert last is not None
    report = session.reload()
    assert observed(report) == reference(last.book, last.book.prompt, report.book)
    return report


def test_an_edit_in_place_is_diffed_by_position(
    big: tuple[Workspace, SkillSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, session = big
    calls = Calls(monkeypatch)
    ws.write("skill-007", gated=True)  # changed, and no longer ready (TOOL is absent)
    report = reloaded(session)
    assert report.changed == ("skill-007",) and report.added == report.removed == ()
    assert report.status_changed == (StatusChange("skill-007", "ready", "needs-setup"),)
    assert report.prompt_changed
    # Two positions exchange their names: changed, in the new book's order.
    ws.write("skill-003", "skill-004")
    ws.write("skill-004", "skill-003")
    swapped = reloaded(session)
    assert swapped.changed == ("skill-004", "skill-003")
    assert swapped.added == swapped.removed == ()
    # A position whose name changed: a removal and an addition.
    ws.write("skill-010", "renamed")
    renamed = reloaded(session)
    assert (renamed.added, renamed.removed, renamed.changed) == (("renamed",), ("skill-010",), ())
    assert (calls.by_name, calls.statuses_by_name) == (0, 0)


def test_snapshot_records_are_made_for_edited_skills_only(
    big: tuple[Workspace, SkillSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, session = big
    made: list[str] = []
    of = SnapshotSkill.of

    def counted(skill: Skill) -> SnapshotSkill:
        made.append(skill.name)
        return of(skill)

    monkeypatch.setattr(SnapshotSkill, "of", staticmethod(counted))
    ws.write("skill-020")
    report = reloaded(session)
    assert made == ["skill-020"]
    assert session.snapshot() == report.book.snapshot(version=report.version)


def test_additions_and_removals_compare_every_skill_by_name(
    big: tuple[Workspace, SkillSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, session = big
    calls = Calls(monkeypatch)
    ws.write("zeta")
    assert reloaded(session).added == ("zeta",)
    assert (calls.by_name, calls.statuses_by_name) == (1, 1)
    # A name taken twice: one folder wins it, and the book has one skill fewer.
    ws.write("skill-001", "skill-002")
    report = reloaded(session)
    assert report.removed == ("skill-001",) and report.added == ()
    assert calls.by_name == 2


def test_a_config_change_compares_every_status(
    big: tuple[Workspace, SkillSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, session = big
    calls = Calls(monkeypatch)
    ws.apply(("disable", "skill-005", ""), session.loader)
    report = reloaded(session)
    assert report.status_changed == (StatusChange("skill-005", "ready", "disabled"),)
    # The skills are the same objects: only the statuses are compared in full.
    assert (calls.by_name, calls.statuses_by_name) == (0, 1)


def test_a_new_name_held_by_an_unchanged_position_is_not_patched(tmp_path: Path) -> None:
    """Discovery merges names, so only a caller's own skills can hold one twice."""
    ws = Workspace(tmp_path)
    skills = ws.loader(tmp_path, "openclaw-2026.4", "openclaw").load().skills
    alpha, beta, gamma = skills
    names = {"alpha", "beta", "gamma"}
    assert (
        reload_report._by_position(skills, (alpha, replace(beta, name="gamma"), gamma), names)
        is None
    )
    assert names == {"alpha", "beta", "gamma"}  # left as it was
    patched = reload_report._by_position(
        skills, (replace(beta, name="alpha"), replace(alpha, name="beta"), gamma), names
    )
    assert patched == ((), (), ("alpha", "beta"))


def test_the_first_report_of_a_diff_names_every_skill(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    book = ws.loader(tmp_path, "openclaw-2026.4", "openclaw").load()
    report = ReloadDiff().diff(None, None, book, version=1, reparsed=3)
    assert report.added == ("alpha", "beta", "gamma") and report.prompt_changed
