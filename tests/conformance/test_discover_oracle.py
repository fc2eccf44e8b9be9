"""Differential test: our discovery against OpenClaw's own ``loadWorkspaceSkillEntries``.

Each scenario is run through the oracle's ``entries`` op (with ``home``, ``stateDir``
and ``bundledDir`` pointing at the same folders we use) and through
:func:`skillbook.pipeline.discovery.discover.discover`; names, descriptions, paths, sources and order
must be identical. The one deliberate difference is a SKILL.md with a UTF-8 BOM,
which skillbook loads and OpenClaw cannot.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import skill_text, write_skill, write_skills
from oracle_support import run_batch

from skillbook.config.limits import Limits
from skillbook.config.paths import Paths
from skillbook.pipeline.discovery.discover import (
    DiscoverOptions,
    Discovery,
    discover,
    resolve_roots,
)

pytestmark = pytest.mark.oracle

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
ESCAPE_MESSAGE = "Skipping escaped skill path outside its configured root."
OVERSIZED_MESSAGES = (
    "Skipping skill due to oversized SKILL.md.",
    "Skipping skills root due to oversized SKILL.md.",
)


#: The tests that run OpenClaw's code; the ``oracle`` fixture finds it or skips.
requires_oracle = pytest.mark.usefixtures("oracle")


def run_oracle(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return run_batch(requests)


# -- fixtures -----------------------------------------------------------------------------


class World:
    """One home / state / bundled / outside layout shared by the oracle and us."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.state = base / "state"
        self.bundled = base / "bundled"
        self.outside = base / "outside"
        for d in (self.home, self.state, self.bundled, self.outside):
            d.mkdir(parents=True, exist_ok=True)
        self.paths = Paths.from_env(
            {
                "HOME": str(self.home),
                "SKILLBOOK_STATE_DIR": str(self.state),
                "SKILLBOOK_BUNDLED_SKILLS_DIR": str(self.bundled),
            },
            cwd=base,
        )

    def request(
        self, workspace: Path, extra_dirs: list[str], limits: dict[str, int] | None = None
    ) -> dict[str, Any]:
        config: dict[str, Any] = {"skills": {"load": {"extraDirs": extra_dirs}}}
        if limits:
            config["skills"]["limits"] = limits
        return {
            "op": "entries",
            "workspace": str(workspace),
            "home": str(self.home),
            "stateDir": str(self.state),
            "bundledDir": str(self.bundled),
            "config": config,
            "omitMeta": True,
        }

    def ours(
        self, workspace: Path, extra_dirs: list[str], limits: dict[str, int] | None = None
    ) -> Discovery:
        lim = Limits(
            **{
                _snake(k): v
                for k, v in (limits or {}).items()
                if _snake(k) in Limits.__dataclass_fields__
            }
        )
        roots = resolve_roots(workspace, self.paths, extra_dirs=extra_dirs, cwd=self.base)
        return discover(roots, options=DiscoverOptions(limits=lim))


def _snake(camel: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in camel)


def theirs_rows(result: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    return [
        (
            e["skill"]["name"],
            e["skill"]["description"],
            e["skill"]["filePath"],
            e["skill"]["baseDir"],
            e["skill"]["source"],
        )
        for e in result["result"]["entries"]
    ]


def our_rows(d: Discovery) -> list[tuple[str, str, str, str, str]]:
    return [(s.name, s.description, str(s.file_path), str(s.base_dir), s.source) for s in d.skills]


def describe_diff(ours: list[Any], theirs: list[Any]) -> str:
    lines = []
    for row in ours:
        if row not in theirs:
            lines.append(f"  only ours:   {row}")
    for row in theirs:
        if row not in ours:
            lines.append(f"  only theirs: {row}")
    if not lines:
        lines.append(
            f"  order differs:\n  ours:   {[r[0] for r in ours]}\n  theirs: {[r[0] for r in theirs]}"
        )
    return "\n".join(lines)


def escapes_theirs(result: dict[str, Any]) -> set[str]:
    return {log["meta"]["path"] for log in result["logs"] if log.get("message") == ESCAPE_MESSAGE}


def oversized_theirs(result: dict[str, Any]) -> set[str]:
    return {
        log["meta"]["filePath"]
        for log in result["logs"]
        if log.get("message") in OVERSIZED_MESSAGES
    }


def oversized_ours(d: Discovery) -> set[str]:
    return {str(x.path) for x in d.diagnostics if x.code == "discover.file-too-large"}


def escapes_ours(d: Discovery) -> set[str]:
    return {
        str(x.path)
        for x in d.diagnostics
        if x.code in ("discover.symlink-escape", "discover.path-escape")
    }


# -- the synthetic tree -------------------------------------------------------------------


def build_tree(w: World) -> tuple[Path, list[str]]:
    b = w.base
    out = w.outside
    write_skill(out / "evil", "evil")
    (out / "real.md").write_text(skill_text("linked-out", "desc"))

    # personal, managed, bundled
    write_skill(w.home / ".agents" / "skills" / "personal-only", None)
    write_skill(w.home / ".agents" / "skills" / "shared", "shared", "from personal")
    managed = w.state / "skills"
    write_skill(managed / "managed-only", None)
    write_skill(managed / "shared", "shared", "from managed")
    write_skill(managed / "Zed", None, "capital")
    write_skill(w.bundled / "bundled-only", None)
    write_skill(w.bundled / "shared", "shared", "from bundled")
    (w.bundled / "esc-link").symlink_to(out / "evil")

    # extra 1: a zoo of edge cases
    e1 = b / "extra1"
    write_skill(e1 / "extra-only", None)
    write_skill(e1 / "shared", "shared", "from extra")
    write_skill(e1 / "b-invalid", "b-invalid", None)
    write_skill(e1 / "b-invalid" / "g2", None)
    write_skill(e1 / "b-invalid" / "G1", None)
    write_skill(e1 / "b-invalid" / ".g0", None)
    (e1 / "sym-md").mkdir(parents=True)
    (e1 / "sym-md" / "real.md").write_text(skill_text("sym-md", "desc"))
    (e1 / "sym-md" / "SKILL.md").symlink_to(e1 / "sym-md" / "real.md")
    write_skill(e1 / "sym-md" / "inner", "inner-of-sym-md")
    (e1 / "sym-md-out").mkdir()
    (e1 / "sym-md-out" / "SKILL.md").symlink_to(out / "real.md")
    (e1 / "dir-md" / "SKILL.md").mkdir(parents=True)
    write_skill(e1 / "dir-md" / "child", "child-of-dir-md")
    write_skill(e1 / "empty", text=b"")
    write_skill(e1 / ".hidden", None)
    write_skill(e1 / "node_modules", None)
    write_skill(e1 / "group" / "leaf1", None)
    write_skill(e1 / "big", "big", "large", raw="x: " + "y" * 300_000 + "\n")
    write_skill(e1 / "at-limit-ok", "small")
    (e1 / "broken").symlink_to(b / "missing")
    write_skill(e1 / "store" / "real", "aliased", "via link")
    (e1 / "link-in").symlink_to(e1 / "store" / "real")
    write_skill(e1 / "crlf", text="---\r\nname: crlf\r\ndescription: windows  \r\n---\r\nbody\r\n")
    write_skill(e1 / "quoted", "'  spaced  '", '"quoted desc"')
    write_skill(
        e1 / "block", text="---\nname: block\ndescription: |\n  line one\n  line two\n---\n"
    )
    write_skill(
        e1 / "colon", text="---\nname: colon\ndescription: Use anime style IMPORTANT: Must\n---\n"
    )
    write_skill(e1 / "unterminated", text="---\nname: unterminated\ndescription: never closed\n")
    write_skill(e1 / "latin1", text=b"---\nname: latin1\ndescription: caf\xe9 au lait\n---\n")

    # extra 2: the root is a skill; extra 3: nested skills/; extra 5: invalid root
    write_skill(b / "extra2", "root-skill")
    write_skill(b / "extra2" / "child", "hidden-by-root")
    write_skill(b / "extra3" / "skills" / "n1", None)
    write_skill(b / "extra3" / "skills" / "N2", None)
    write_skill(b / "extra3" / "d1", None)
    write_skill(b / "extra5", None, None)
    write_skill(b / "extra5" / "c2", None)
    write_skill(b / "extra5" / "C1", None)
    write_skill(w.home / "tilde-extra" / "tilde-skill", None)

    ws = b / "ws"
    write_skill(ws / ".agents" / "skills" / "project-only", None)
    write_skill(ws / ".agents" / "skills" / "shared", "shared", "from project")
    wss = ws / "skills"
    names = ("ws-only", "Upper", "lower", "_under", "10-num", "9-num", "a.b", "a-b", "a_b")
    write_skills(wss, names, name=None)
    write_skill(wss / "unicode-ünï", None, "accents")
    write_skill(wss / "shared", "shared", "from workspace")
    (wss / "link-out").symlink_to(out / "evil")
    write_skill(wss / "store" / "target", "target-skill")
    (wss / "link-inside").symlink_to(wss / "store" / "target")
    extra = [
        str(e1),
        str(b / "extra2"),
        str(b / "extra3"),
        str(b / "does-not-exist"),
        str(b / "extra5"),
        "  ~/tilde-extra  ",
        "",
    ]
    return ws, extra


@pytest.fixture()
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def _compare(
    w: World,
    cases: list[tuple[str, Path, list[str], dict[str, int] | None]],
    *,
    allowed_extra: frozenset[str] = frozenset(),
) -> list[tuple[Discovery, dict[str, Any]]]:
    results = run_oracle([w.request(ws, extra, lim) for _, ws, extra, lim in cases])
    problems = []
    pairs = []
    for (label, ws, extra, lim), result in zip(cases, results, strict=True):
        d = w.ours(ws, extra, lim)
        pairs.append((d, result))
        ours = [r for r in our_rows(d) if r[0] not in allowed_extra]
        theirs = theirs_rows(result)
        if ours != theirs:
            problems.append(f"{label}:\n{describe_diff(ours, theirs)}")
        if escapes_ours(d) != escapes_theirs(result):
            problems.append(
                f"{label}: escape warnings differ: ours={sorted(escapes_ours(d))} "
                f"theirs={sorted(escapes_theirs(result))}"
            )
    assert not problems, "\n".join(problems)
    return pairs


@requires_oracle
def test_synthetic_tree_matches_openclaw(world: World) -> None:
    ws, extra = build_tree(world)
    pairs = _compare(
        world,
        [
            ("defaults", ws, extra, None),
            (
                "tight limits",
                ws,
                extra,
                {
                    "maxSkillsLoadedPerSource": 3,
                    "maxCandidatesPerRoot": 4,
                    "maxSkillFileBytes": 200,
                },
            ),
            ("file cap", ws, extra, {"maxSkillFileBytes": 40}),
            ("limit 1", ws, extra, {"maxSkillsLoadedPerSource": 1, "maxCandidatesPerRoot": 1}),
            ("limit 0", ws, extra, {"maxSkillsLoadedPerSource": 0}),
            ("no workspace skills", world.base / "empty-ws", [], None),
        ],
    )
    # The comparisons above were not vacuous.
    (defaults, d_result), (_, t_result) = pairs[0], pairs[2]
    assert len(defaults.skills) > 25
    assert len(escapes_theirs(d_result)) == 3
    assert oversized_theirs(d_result) and len(oversized_theirs(t_result)) > 5


@requires_oracle
def test_bom_is_the_one_deliberate_difference(world: World) -> None:
    ws = world.base / "ws"
    write_skill(ws / "skills" / "plain", "plain")
    write_skill(ws / "skills" / "bom", text="\ufeff" + skill_text("bom-skill", "has a BOM"))
    [result] = run_oracle([world.request(ws, [])])
    d = world.ours(ws, [])
    assert theirs_rows(result) == [r for r in our_rows(d) if r[0] != "bom-skill"]
    assert [s.name for s in d.skills] == ["bom-skill", "plain"]


@requires_oracle
def test_alias_without_name_matches_with_dedupe_off(world: World) -> None:
    ws = world.base / "ws"
    write_skill(ws / "skills" / "orig", None, "no name")
    (ws / "skills" / "alias").symlink_to(ws / "skills" / "orig")
    [result] = run_oracle([world.request(ws, [])])
    roots = resolve_roots(ws, world.paths, cwd=world.base)
    d = discover(roots, options=DiscoverOptions(dedupe_realpath=False))
    assert our_rows(d) == theirs_rows(result)
    # Default: loaded once (documented deviation).
    assert [s.name for s in discover(roots).skills] == ["orig"]


@requires_oracle
def test_locale_compare_punctuation_order(world: World) -> None:
    """The grandchild fallback sorts full paths with localeCompare: `a_b` before `a-b`."""
    root = world.base / "extra"
    write_skill(root, None, None)
    write_skills(root, ["a-b", "a_b", "a.b", "a b", "a~b", "a$b", "a1"], name=None)
    _compare(world, [("punctuation", world.base / "ws", [str(root)], None)])


def _corpus_sources() -> Iterator[Path]:
    if not CORPUS.is_dir():
        return
    yield from sorted(p for p in CORPUS.iterdir() if p.is_dir())


@requires_oracle
@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS}")
def test_corpus_roots_match_openclaw(world: World) -> None:
    cases: list[tuple[str, Path, list[str], dict[str, int] | None]] = []
    for src in _corpus_sources():
        subdirs = sorted(str(p) for p in src.iterdir() if p.is_dir())
        # As a workspace (its skills/ and .agents/skills/ roots), and every top-level
        # folder and the source itself as extra dirs (nested-root heuristic included).
        cases.append((f"{src.name} as workspace", src, [], None))
        cases.append((f"{src.name} as extra dirs", world.base / "ws", [str(src), *subdirs], None))
        # Dot-folders too: adding `skills/.curated` as an extra dir is the advice we give.
        owners = [str(p) for sub in subdirs for p in sorted(Path(sub).iterdir()) if p.is_dir()]
        cases.append((f"{src.name} second level", world.base / "ws", owners, None))
        cases.append(
            (
                f"{src.name} small limits",
                src,
                owners,
                {
                    "maxSkillsLoadedPerSource": 2,
                    "maxCandidatesPerRoot": 3,
                    "maxSkillFileBytes": 4000,
                },
            )
        )
    assert cases
    _compare(world, cases)
