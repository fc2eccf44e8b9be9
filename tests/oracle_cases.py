"""Helpers for the corpus and oracle conformance tests (not a test module).

Input: one folder of the public corpus (``../shared/corpus/<source>``). Output:
its skill roots (:func:`skill_roots`), a sandbox that lays the source out as an
OpenClaw machine would see it (:func:`materialise`: workspace, ``.agents``,
extra, bundled, managed and personal folders, stub binaries), the matching
oracle request fields and skillbook ``env``, and a JSON differ that names every
difference as one line (:func:`diff_json`).

Both sides get the same folders, the same ``PATH`` (one folder of stub
executables) and the same extra environment variables, so every difference is a
difference of the two implementations.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from factories import stub_bins

#: The public corpus beside the checkout (``<repo>/../shared/corpus``), as in conftest.
CORPUS = (Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus").resolve()
SKILL_FILE = "SKILL.md"
#: Executables on ``PATH`` for both sides (stubs that are never run).
STUB_BINS: tuple[str, ...] = ("curl", "git", "gh", "jq", "python3", "node", "uv", "tmux", "ffmpeg")
#: Variables set for both sides, so some ``requires.env`` gates pass.
SHARED_ENV: Mapping[str, str] = {"NOTION_API_KEY": "stub-notion", "OPENAI_API_KEY": "stub-openai"}
#: Legacy manifest keys skillbook reads after ``openclaw`` (OpenClaw's baseline does not).
LEGACY_MANIFEST_KEYS = frozenset({"clawdbot", "clawdis", "moltbot"})


class OracleLike(Protocol):
    """The ``oracle`` fixture (tests/conftest.py): runs one request or a batch."""

    def run(self, request: dict[str, Any] | list[dict[str, Any]], timeout: float = ...) -> Any: ...


def sources(corpus: Path) -> list[str]:
    """The corpus's source folders, sorted."""
    return sorted(p.name for p in corpus.iterdir() if p.is_dir())


def skill_files(folder: Path) -> list[Path]:
    """Every ``SKILL.md`` under ``folder`` (hidden folders included), sorted."""
    return sorted(folder.rglob(SKILL_FILE))


def skill_roots(source_dir: Path) -> list[Path]:
    """Folders that hold skill folders: the parent of every skill folder, sorted.

    A parent that is itself a skill still counts (loading it as a root yields only
    that skill, which exercises the "root is a skill" path).
    """
    return sorted({md.parent.parent for md in skill_files(source_dir)})


def is_skill_dir(folder: Path) -> bool:
    return (folder / SKILL_FILE).is_file()


def has_bom(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(3) == b"\xef\xbb\xbf"


# --------------------------------------------------------------------------- layout


@dataclass(frozen=True, slots=True)
class Layout:
    """Where a source's roots go, as paths relative to the source folder."""

    source: str
    workspace: str | None = None
    project: str | None = None
    extras: tuple[str, ...] = ()
    bundled: str | None = None
    managed: str | None = None
    personal: str | None = None

    def placed(self) -> set[str]:
        return {
            p
            for p in (self.workspace, self.project, self.bundled, self.managed, self.personal)
            if p is not None
        }


#: Sources whose roots fill more than the workspace: every source label gets used.
_SPECIAL: dict[str, dict[str, Any]] = {
    # ClawHub keeps its skills in <repo>/.agents/skills: the project source.
    "openclaw-clawhub": {"project": ".agents/skills"},
    # OpenClaw's own: bundled skills, a managed root, custodian skills in the workspace.
    "openclaw-openclaw": {
        "workspace": "custodian-skills",
        "bundled": "skills",
        "managed": "extensions/memory-wiki/skills",
    },
    # Dot-folders: the curated set is the workspace, the others are extra dirs.
    "openai-skills": {"workspace": "skills/.curated"},
    # ClawHub backup (skills/<owner>/<slug>): one owner is the workspace.
    "openclaw-skills": {"workspace": "skills/steipete"},
    # Plugins: one plugin's skills in the workspace, one in ~/.agents/skills.
    "wshobson-agents": {
        "workspace": "plugins/python-development/skills",
        "personal": "plugins/conductor/skills",
    },
}


def layout_for(source_dir: Path) -> Layout:
    """The source's biggest root is the workspace's ``skills``; the rest are extra dirs."""
    roots = [r.relative_to(source_dir).as_posix() for r in skill_roots(source_dir)]
    special = _SPECIAL.get(source_dir.name, {})
    if not special:
        counts = {r: sum(1 for c in (source_dir / r).iterdir() if is_skill_dir(c)) for r in roots}
        special = {"workspace": max(roots, key=lambda r: (counts[r], -len(r)))}
    base = Layout(source_dir.name, **special)
    extras = tuple(r for r in roots if r not in base.placed())
    return Layout(
        source=base.source,
        workspace=base.workspace,
        project=base.project,
        extras=extras,
        bundled=base.bundled,
        managed=base.managed,
        personal=base.personal,
    )


# --------------------------------------------------------------------------- sandbox


@dataclass(frozen=True, slots=True)
class Sandbox:
    """A source laid out on disk for both implementations."""

    layout: Layout
    root: Path
    src: Path
    home: Path
    state: Path
    bundled: Path
    bin: Path
    workspace: Path
    extra_dirs: tuple[str, ...] = field(default=())

    def skillbook_env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "SKILLBOOK_STATE_DIR": str(self.state),
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(self.bundled),
            "PATH": str(self.bin),
            **SHARED_ENV,
        }

    def oracle_fields(self) -> dict[str, Any]:
        """The sandbox fields of an oracle request (read from a batch's first request)."""
        return {
            "home": str(self.home),
            "stateDir": str(self.state),
            "bundledDir": str(self.bundled),
            "path": [str(self.bin)],
            "env": dict(SHARED_ENV),
            "cwd": str(self.root),
            "omitMeta": True,
        }

    def base_config(self) -> dict[str, Any]:
        if not self.extra_dirs:
            return {}
        return {"skills": {"load": {"extraDirs": list(self.extra_dirs)}}}


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dest, symlinks=True)


def make_stub_bins(folder: Path, names: Iterable[str] = STUB_BINS) -> Path:
    return stub_bins(folder, names)


def materialise(source_dir: Path, tmp: Path, layout: Layout | None = None) -> Sandbox:
    """Copy the source under ``tmp`` and place its roots as ``layout`` says.

    The workspace lives under HOME (so prompt paths are written ``~/…``); the extra
    dirs stay outside it, in the copy of the whole source. Copies, not symlinks:
    a symlinked root changes what containment checks see.
    """
    lay = layout if layout is not None else layout_for(source_dir)
    root = tmp.resolve()
    src = root / "src" / source_dir.name
    _copy(source_dir, src)
    home = root / "home"
    state = root / "state"
    bundled = root / "bundled"
    workspace = home / "ws"
    for folder in (home, state, bundled, workspace):
        folder.mkdir(parents=True, exist_ok=True)
    if lay.workspace is not None:
        _copy(src / lay.workspace, workspace / "skills")
    if lay.project is not None:
        _copy(src / lay.project, workspace / ".agents" / "skills")
    if lay.bundled is not None:
        bundled.rmdir()
        _copy(src / lay.bundled, bundled)
    if lay.managed is not None:
        _copy(src / lay.managed, state / "skills")
    if lay.personal is not None:
        _copy(src / lay.personal, home / ".agents" / "skills")
    bin_dir = make_stub_bins(root / "bin")
    return Sandbox(
        layout=lay,
        root=root,
        src=src,
        home=home,
        state=state,
        bundled=bundled,
        bin=bin_dir,
        workspace=workspace,
        extra_dirs=tuple(str(src / rel) for rel in lay.extras),
    )


# --------------------------------------------------------------------------- configs


def deep_merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


@dataclass(frozen=True, slots=True)
class Case:
    """One configuration run on both sides."""

    id: str
    config: dict[str, Any]
    agent: str | None = None
    skill_filter: tuple[str, ...] | None = None

    def oracle_request(self, op: str, sandbox: Sandbox) -> dict[str, Any]:
        req: dict[str, Any] = {
            **sandbox.oracle_fields(),
            "op": op,
            "id": f"{self.id}:{op}",
            "workspace": str(sandbox.workspace),
            "config": self.config,
        }
        if self.agent is not None:
            req["agentId"] = self.agent
        if self.skill_filter is not None:
            req["skillFilter"] = list(self.skill_filter)
        return req


# --------------------------------------------------------------------------- diffs


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=False)
    return text if len(text) <= 160 else text[:157] + "..."


def diff_json(ours: Any, theirs: Any, where: str = "") -> list[str]:
    """Every place where two JSON values differ (key order of objects included)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out: list[str] = []
        if list(ours) != list(theirs) and set(ours) == set(theirs):
            out.append(f"{where}: key order ours={list(ours)} oracle={list(theirs)}")
        for key in list(theirs) + [k for k in ours if k not in theirs]:
            if key not in ours:
                out.append(f"{where}.{key}: missing in ours (oracle={_show(theirs[key])})")
            elif key not in theirs:
                out.append(f"{where}.{key}: only in ours ({_show(ours[key])})")
            else:
                out.extend(diff_json(ours[key], theirs[key], f"{where}.{key}"))
        return out
    if isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            return [f"{where}: ours={_show(ours)} oracle={_show(theirs)}"]
        out = []
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            out.extend(diff_json(a, b, f"{where}[{i}]"))
        return out
    if type(ours) is not type(theirs) or ours != theirs:
        return [f"{where}: ours={_show(ours)} oracle={_show(theirs)}"]
    return []


def diff_status(
    ours: Mapping[str, Any], theirs: Mapping[str, Any], *, label: str
) -> tuple[list[str], set[str]]:
    """Differences of two status reports, matched by ``filePath``.

    Returns the difference lines and the file paths that appear on one side only.
    """
    out = diff_json(
        {k: v for k, v in ours.items() if k != "skills"},
        {k: v for k, v in theirs.items() if k != "skills"},
        label,
    )
    our_by_path = {e["filePath"]: e for e in ours["skills"]}
    their_by_path = {e["filePath"]: e for e in theirs["skills"]}
    one_sided = set(our_by_path) ^ set(their_by_path)
    for path in sorted(one_sided):
        side = "ours" if path in our_by_path else "oracle"
        out.append(f"{label}: skill {path} only in {side}")
    common_ours = [p for p in our_by_path if p in their_by_path]
    common_theirs = [p for p in their_by_path if p in our_by_path]
    if common_ours != common_theirs:
        out.append(f"{label}: skill order differs")
    for path in common_theirs:
        out.extend(diff_json(our_by_path[path], their_by_path[path], f"{label}[{path}]"))
    return out, one_sided
