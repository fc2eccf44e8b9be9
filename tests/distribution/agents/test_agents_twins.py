"""The twin-case matrix: skillbook's ``--for`` commands against the real ``skills`` CLI (npm
``skills@1.6.0``), case by case, in twin sandboxes.

Each case runs the same steps in two sandboxes with the same relative layout (``home``,
``project``, ``src`` under their own root, their own HOME, XDG_CONFIG_HOME, TMPDIR and
agent homes such as CLAUDE_CONFIG_DIR or CODEX_HOME): ``skills add``/``remove`` in one,
``skillbook install``/``remove --for`` in the other. Then the trees (paths, file bytes
and modes, links and their targets as written) of HOME and the project, which hold
``skills-lock.json``, must be equal. The deliberate differences (docs/multiple-agents.md)
are the only exceptions, each asserted explicitly: what the ``skills`` CLI does, and
what skillbook does instead.

The agent families are derived from :mod:`skillbook.distribution.agents.table`: one
agent for each kind of project folder (``.agents/skills``, ``.X/skills``, a folder
shared by two agents, nested, not hidden) crossed with each kind of global folder
($HOME, $XDG_CONFIG_HOME, ``~/.agents/skills``, each ``*_HOME`` variable, OpenClaw's
homes, none), plus the agents people name most.

The peer is installed from npm into ``.cache/skills-cli`` on first use; without node and
npm these tests skip, or fail where ``SKILLBOOK_HUB_REQUIRE_SERVICES=1`` (``.ci/run``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from factories import skill_text, write_file

from distribution.agents.twin_sandbox import Tree, TwinSandbox
from skillbook.distribution.agents.table import UNIVERSAL_DIR, Agent, all_agents

pytestmark = pytest.mark.subprocess

#: The variable overriding each ``*_HOME``-style base of the table, for the override cases.
HOME_VARS = {
    "claude": "CLAUDE_CONFIG_DIR",
    "codex": "CODEX_HOME",
    "vibe": "VIBE_HOME",
    "hermes": "HERMES_HOME",
    "autohand": "AUTOHAND_HOME",
    "grok": "GROK_HOME",
    "sarvam": "SARVAM_HOME",
    "config": "XDG_CONFIG_HOME",
}
#: Agents named in the issue, always among the representatives.
NAMED = (
    "claude-code",
    "codex",
    "cursor",
    "gemini-cli",
    "github-copilot",
    "windsurf",
    "cline",
    "opencode",
    "amp",
    "openclaw",
)


def family(agent: Agent) -> tuple[str, str]:
    """(project folder kind, global folder kind) of an agent."""
    folder = agent.project_dir
    if folder == UNIVERSAL_DIR:
        shape = "agents-skills"
    elif sum(a.project_dir == folder for a in all_agents()) > 1:
        shape = "shared"
    elif not folder.startswith("."):
        shape = "not-hidden"
    elif folder.count("/") > 1:
        shape = "nested"
    else:
        shape = "hidden"
    spec = agent.global_spec
    if spec is None:
        glob = "none"
    elif spec == "home:.agents/skills":
        glob = "home-agents-skills"
    elif spec.startswith("home:.config/"):
        glob = "home-dot-config"  # ~/.config even when XDG_CONFIG_HOME says otherwise
    else:
        glob = spec.split(":", 1)[0]
    return shape, glob


def representatives() -> list[Agent]:
    chosen: dict[str, Agent] = {}
    seen: set[tuple[str, str]] = set()
    for agent in all_agents():
        if agent.id == "eve":  # not supported by skillbook yet (docs/agents.md)
            continue
        if family(agent) not in seen or agent.id in NAMED:
            seen.add(family(agent))
            chosen[agent.id] = agent
    return list(chosen.values())


REPS = representatives()


def write_sources(src: Path) -> None:
    """``my-skill`` (subfolders, scripts with their modes, internal links, copy-excluded
    files, names whose order depends on localeCompare) and ``pack`` (two skills)."""
    skill = src / "my-skill"
    write_file(skill / "SKILL.md", skill_text("My Skill", "A demo skill.", body="See docs.\n"))
    write_file(skill / "scripts" / "run.sh", "#!/bin/sh\necho hi\n").chmod(0o755)
    write_file(skill / "scripts" / "lib" / "helper.py", "X = 1\n").chmod(0o640)
    write_file(skill / "docs" / "guide.md", "# Guide\n")
    os.symlink("docs/guide.md", skill / "latest.md")
    os.symlink("scripts", skill / "tools")
    os.symlink("gone.md", skill / "broken.md")
    for name, text in (("Zeta.txt", "z\n"), ("alpha_b.md", "a\n"), ("alpha-b.md", "b\n")):
        write_file(skill / name, text)
    write_file(skill / "metadata.json", "{}\n")
    write_file(skill / ".git" / "HEAD", "ref: refs/heads/main\n")
    write_file(skill / "__pycache__" / "x.pyc", b"\x00")
    for name in ("one", "Two"):
        write_file(
            src / "pack" / name.lower() / "SKILL.md", skill_text(name, "Demo.", body=f"{name}\n")
        )
    # Names whose folder and lock key depend on Unicode lowercasing and trimming.
    # and skills both tools skip: no description, a name that is not valid YAML.
    for folder, name in (("a", "Über Skill_2.0 — ﬁne"), ("b", "..İstanbul.."), ("c", '"!!!"')):
        write_file(
            src / "odd" / folder / "SKILL.md", f"---\nname: {name}\ndescription: Odd.\n---\n"
        )
    write_file(src / "odd" / "d" / "SKILL.md", "---\nname: no-description\n---\nBody.\n")
    write_file(src / "odd" / "e" / "SKILL.md", "---\nname: !!!\ndescription: Bad YAML.\n---\n")


class Sandbox(TwinSandbox):
    """A twin with the sources of :func:`write_sources`, running either tool."""

    def __init__(self, root: Path, env_extra: Mapping[str, str], peer: Path) -> None:
        super().__init__(root, env_extra)
        self.peer = peer
        write_sources(root / "src")

    def skills(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(["node", str(self.peer), *args])

    def skillbook(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run([sys.executable, "-m", "skillbook", *args])

    def text(self, out: str) -> str:
        """Output with this sandbox's root written as ``ROOT``, to compare the twins'."""
        return out.replace(str(self.root), "ROOT")


# -- steps: one description, both tools' command lines ---------------------------------


@dataclass(frozen=True)
class Add:
    agents: tuple[str, ...]
    source: str = "my-skill"
    global_: bool = False
    copy: bool = False

    def flags(self) -> list[str]:
        return ["-g"] * self.global_ + ["--copy"] * self.copy

    def peer(self) -> list[str]:
        return ["add", f"../src/{self.source}", "-y", *self.flags(), "--agent", *self.agents]

    def ours(self) -> list[str]:
        return ["install", f"../src/{self.source}", *self.flags(), *_for(self.agents)]


@dataclass(frozen=True)
class Remove:
    name: str
    agents: tuple[str, ...]
    global_: bool = False

    def peer(self) -> list[str]:
        return ["remove", self.name, "-y", *["-g"] * self.global_, "--agent", *self.agents]

    def ours(self) -> list[str]:
        return ["remove", self.name, *["-g"] * self.global_, *_for(self.agents)]


def _for(agents: Sequence[str]) -> list[str]:
    return [x for agent in agents for x in ("--for", agent)]


@dataclass(frozen=True)
class Case:
    id: str
    steps: tuple[Add | Remove, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    #: Folders made under HOME first (agents that look installed).
    homes: tuple[str, ...] = ()


def run_twins(tmp_path: Path, peer: Path, case: Case) -> tuple[Sandbox, Sandbox]:
    twins = Sandbox(tmp_path / "peer", case.env, peer), Sandbox(tmp_path / "ours", case.env, peer)
    for box in twins:
        for folder in case.homes:
            (box.home / folder).mkdir(parents=True, exist_ok=True)
    for step in case.steps:
        theirs, mine = twins[0].skills(*step.peer()), twins[1].skillbook(*step.ours())
        assert theirs.returncode == 0, (step, theirs.stdout[-1500:], theirs.stderr[-1500:])
        assert mine.returncode == 0, (step, mine.stdout[-1500:], mine.stderr[-1500:])
    return twins


#: Runs skillbook's command lines one after another in one interpreter, each with its own
#: folder and environment, through the same entry point as ``python -m skillbook``: the
#: matrix pays Python's start-up once instead of once per step.
_BATCH = """
import contextlib, io, json, os, sys
from skillbook.cli.entry import main
results = []
for job in json.load(open(sys.argv[1], encoding="utf-8")):
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(job["argv"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    results.append({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
json.dump(results, open(sys.argv[2], "w", encoding="utf-8"))
"""


def run_matrix(root: Path, peer: Path, cases: Sequence[Case]) -> dict[str, tuple[Sandbox, Sandbox]]:
    """Every case's twins: the ``skills`` steps run one process each, then all of
    skillbook's steps in one batch (each sandbox only ever sees its own tool)."""
    built: dict[str, tuple[Sandbox, Sandbox]] = {}
    jobs: list[dict[str, Any]] = []
    for case in cases:
        twins = (
            Sandbox(root / case.id / "peer", case.env, peer),
            Sandbox(root / case.id / "ours", case.env, peer),
        )
        for box in twins:
            for folder in case.homes:
                (box.home / folder).mkdir(parents=True, exist_ok=True)
        for step in case.steps:
            theirs = twins[0].skills(*step.peer())
            assert theirs.returncode == 0, (case.id, step, theirs.stdout[-1500:], theirs.stderr)
            jobs.append({"cwd": str(twins[1].project), "env": twins[1].env, "argv": step.ours()})
        built[case.id] = twins
    (root / "jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", _BATCH, str(root / "jobs.json"), str(root / "results.json")],
        env=jobs[0]["env"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((root / "results.json").read_text(encoding="utf-8"))
    for job, result in zip(jobs, results, strict=True):
        assert result["code"] == 0, (job["argv"], job["cwd"], result)
    return built


def differences(theirs: Tree, mine: Tree) -> list[str]:
    out = [f"only skills: {k}" for k in sorted(theirs.keys() - mine.keys())]
    out += [f"only skillbook: {k}" for k in sorted(mine.keys() - theirs.keys())]
    out += [
        f"differs: {k}: skills {theirs[k]!r:.120} / skillbook {mine[k]!r:.120}"
        for k in sorted(theirs.keys() & mine.keys())
        if theirs[k] != mine[k]
    ]
    return out


def assert_same(twins: tuple[Sandbox, Sandbox]) -> Tree:
    theirs, mine = twins[0].snapshot(), twins[1].snapshot()
    assert differences(theirs, mine) == []
    return theirs


# -- the matrix --------------------------------------------------------------------------


def _single_cases() -> list[Case]:
    cases = []
    for agent in REPS:
        cases.append(Case(f"project-{agent.id}", (Add((agent.id,)),)))
        if agent.global_spec is None:
            continue
        cases.append(Case(f"global-{agent.id}", (Add((agent.id,), global_=True),)))
        base = agent.global_spec.split(":", 1)[0]
        if base in HOME_VARS:
            env = {HOME_VARS[base]: f"{{home}}/custom/{base}"}
            cases.append(
                Case(f"global-{agent.id}-override", (Add((agent.id,), global_=True),), env)
            )
    return cases


MULTI_CASES = [
    Case("project-claude-codex-links", (Add(("claude-code", "codex")),)),
    Case("project-claude-windsurf-two-links", (Add(("claude-code", "windsurf")),)),
    Case("project-two-agents-reading-agents-skills", (Add(("cursor", "codex", "opencode")),)),
    Case("project-two-agents-one-folder", (Add(("qoder", "qoder-cn")),)),
    Case("project-openclaw-and-claude", (Add(("openclaw", "claude-code")),)),
    Case("project-nested-and-not-hidden", (Add(("tabnine-cli", "astrbot")),)),
    Case("project-copy", (Add(("claude-code", "codex", "windsurf"), copy=True),)),
    Case("project-two-skills-in-one-source", (Add(("claude-code", "codex"), source="pack"),)),
    Case("project-odd-names", (Add(("claude-code", "codex"), source="odd"),)),
    Case("global-claude-codex", (Add(("claude-code", "codex"), global_=True),)),
    Case("global-cursor-windsurf-cline", (Add(("cursor", "windsurf", "cline"), global_=True),)),
    Case("global-copy", (Add(("claude-code", "cursor"), global_=True, copy=True),)),
    Case(
        "global-overrides",
        (Add(("claude-code", "codex", "opencode"), global_=True),),
        {
            "CLAUDE_CONFIG_DIR": "{home}/cc",
            "CODEX_HOME": "{home}/cx",
            "XDG_CONFIG_HOME": "{home}/xdg",
        },
    ),
    Case(
        "global-openclaw-clawdbot-home", (Add(("openclaw",), global_=True),), homes=(".clawdbot",)
    ),
    Case(
        "reinstall-copy-links-copy",
        (
            Add(("claude-code",)),
            Add(("claude-code", "codex")),
            Add(("claude-code", "codex"), copy=True),
            Add(("claude-code", "windsurf")),
        ),
    ),
    Case(
        "remove-one-of-two-with-the-other-detected",
        (Add(("claude-code", "codex"), source="pack"), Remove("Two", ("claude-code",))),
        homes=(".codex",),
    ),
    Case(
        "remove-all-named",
        (Add(("claude-code", "codex"), source="pack"), Remove("one", ("claude-code", "codex"))),
    ),
    Case("remove-copy", (Add(("claude-code",)), Remove("My Skill", ("claude-code",)))),
    Case(
        "remove-global",
        (
            Add(("claude-code", "windsurf"), global_=True),
            Remove("My Skill", ("claude-code", "windsurf"), global_=True),
        ),
    ),
    Case("keep-a-foreign-lock-entry", (Add(("claude-code",), source="pack"), Add(("codex",)))),
]


def test_the_families_cover_every_kind_of_folder() -> None:
    kinds = {family(a) for a in all_agents() if a.id != "eve"}
    assert kinds == {family(a) for a in REPS}
    assert {shape for shape, _ in kinds} == {
        "agents-skills",
        "shared",
        "not-hidden",
        "nested",
        "hidden",
    }
    assert len(REPS) >= 20


MATRIX = _single_cases() + MULTI_CASES


@pytest.fixture(scope="module")
def matrix(
    peer: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Sandbox, Sandbox]]:
    return run_matrix(tmp_path_factory.mktemp("matrix"), peer, MATRIX)


@pytest.mark.parametrize("case", MATRIX, ids=lambda c: c.id)
def test_same_tree_and_lock(matrix: dict[str, tuple[Sandbox, Sandbox]], case: Case) -> None:
    tree = assert_same(matrix[case.id])
    assert any(key.endswith("/SKILL.md") for key in tree) or isinstance(case.steps[-1], Remove)
    if not case.steps[-1].global_ and isinstance(case.steps[-1], Add):
        assert "project/skills-lock.json" in tree


def test_the_tree_holds_what_the_source_holds(tmp_path: Path, peer: Path) -> None:
    """The copy checks of the matrix are not vacuous: links followed, modes, exclusions."""
    tree = assert_same(run_twins(tmp_path, peer, Case("one", (Add(("claude-code",)),))))
    base = "project/.claude/skills/my-skill"
    assert tree[f"{base}/scripts/run.sh"][2] == 0o755
    odd = assert_same(run_twins(tmp_path / "odd", peer, Case("odd", (Add(("codex",), "odd"),))))
    assert sorted(k for k in odd if k.count("/") == 3 and k.startswith("project/.agents")) == [
        "project/.agents/skills/ber-skill_2.0-ne",
        "project/.agents/skills/i-stanbul",
        "project/.agents/skills/unnamed-skill",
    ]
    assert tree[f"{base}/scripts/lib/helper.py"][2] == 0o640
    assert tree[f"{base}/latest.md"][:2] == ("file", b"# Guide\n")
    assert tree[f"{base}/tools"] == ("dir",) and f"{base}/tools/lib/helper.py" in tree
    for left_out in ("metadata.json", ".git", "__pycache__", "broken.md"):
        assert f"{base}/{left_out}" not in tree
    lock = json.loads(tree["project/skills-lock.json"][1])
    assert lock["skills"]["My Skill"]["source"] == "../src/my-skill"


# -- the deliberate differences ------------------------------------------------------------


def test_a_link_leaving_the_skill_is_copied_by_skills_and_refused_by_skillbook(
    tmp_path: Path, peer: Path
) -> None:
    twins = Sandbox(tmp_path / "peer", {}, peer), Sandbox(tmp_path / "ours", {}, peer)
    for box in twins:
        write_file(box.root / "secret.txt", "password\n")
        os.symlink("../../secret.txt", box.root / "src" / "my-skill" / "leak.txt")
    theirs = twins[0].skills(*Add(("claude-code",)).peer())
    mine = twins[1].skillbook(*Add(("claude-code",)).ours())
    assert theirs.returncode == 0
    leaked = twins[0].project / ".claude/skills/my-skill/leak.txt"
    assert leaked.read_bytes() == b"password\n" and not leaked.is_symlink()
    # The scan blocks it first; forced past the scan, the copy still refuses the link.
    assert mine.returncode == 1 and "leak.txt points outside the skill" in mine.stderr
    forced = twins[1].skillbook(
        *Add(("claude-code",)).ours(), "--dangerously-force", "--reason", "test"
    )
    assert forced.returncode == 1 and "links outside the skill" in forced.stderr
    assert twins[1].snapshot() == {}


def test_a_self_link_leaves_a_nested_partial_copy_with_skills_and_nothing_with_skillbook(
    tmp_path: Path, peer: Path
) -> None:
    twins = Sandbox(tmp_path / "peer", {}, peer), Sandbox(tmp_path / "ours", {}, peer)
    for box in twins:
        os.symlink(".", box.root / "src" / "my-skill" / "self")
    theirs = twins[0].skills(*Add(("claude-code",)).peer())
    mine = twins[1].skillbook(*Add(("claude-code",)).ours())
    assert theirs.returncode == 0
    assert (twins[0].project / ".claude/skills/my-skill/self/self").is_dir()
    assert mine.returncode == 1, mine.stderr
    assert "links back to a folder that contains it" in mine.stderr
    assert twins[1].snapshot() == {}


def test_remove_for_one_agent_keeps_the_copy_an_undetected_agent_links_to(
    tmp_path: Path, peer: Path
) -> None:
    add = Add(("claude-code", "windsurf"))
    twins = run_twins(tmp_path, peer, Case("links", (add,)))
    step = Remove("My Skill", ("claude-code",))
    assert twins[0].skills(*step.peer()).returncode == 0
    assert twins[1].skillbook(*step.ours()).returncode == 0
    theirs, mine = twins[0].snapshot(), twins[1].snapshot()
    link = "project/.windsurf/skills/my-skill"
    # skills: the shared copy and the lock entry are gone; Windsurf's link dangles.
    assert theirs[link] == ("link", "../../.agents/skills/my-skill")
    assert not (twins[0].root / link).exists()
    assert "project/.agents/skills/my-skill" not in theirs
    assert json.loads(theirs["project/skills-lock.json"][1])["skills"] == {}
    # skillbook: Windsurf keeps its skill, and the lock its entry.
    assert (twins[1].root / link / "SKILL.md").is_file()
    assert "My Skill" in json.loads(mine["project/skills-lock.json"][1])["skills"]
    # Otherwise the same: Claude Code's link is gone in both.
    assert "project/.claude/skills/my-skill" not in theirs.keys() | mine.keys()
    for difference in differences(theirs, mine):
        assert difference.startswith(
            ("only skillbook: project/.agents/skills/my-skill", "differs: project/skills-lock.json")
        ), difference


def test_a_conflicted_lock_is_emptied_by_skills_and_refused_by_skillbook(
    tmp_path: Path, peer: Path
) -> None:
    conflicted = (
        '{\n  "version": 1,\n  "skills": {\n<<<<<<< HEAD\n'
        '    "ours": {"source": "o/r", "sourceType": "github", "computedHash": "aa"}\n'
        "=======\n"
        '    "theirs": {"source": "o/t", "sourceType": "github", "computedHash": "bb"}\n'
        ">>>>>>> topic\n  }\n}\n"
    )
    twins = Sandbox(tmp_path / "peer", {}, peer), Sandbox(tmp_path / "ours", {}, peer)
    for box in twins:
        write_file(box.project / "skills-lock.json", conflicted)
    assert twins[0].skills(*Add(("claude-code",)).peer()).returncode == 0
    lock = json.loads((twins[0].project / "skills-lock.json").read_text())
    assert list(lock["skills"]) == ["My Skill"]  # both sides' entries dropped
    mine = twins[1].skillbook(*Add(("claude-code",)).ours())
    assert mine.returncode == 1
    assert str(twins[1].project / "skills-lock.json") in mine.stderr
    assert (twins[1].project / "skills-lock.json").read_text() == conflicted
    assert set(twins[1].snapshot()) == {"project/skills-lock.json"}


# -- each tool reads what the other wrote --------------------------------------------------


def test_skills_list_sees_what_skillbook_installed(tmp_path: Path, peer: Path) -> None:
    case = Case(
        "list",
        (Add(("claude-code", "codex", "windsurf"), source="pack"), Add(("claude-code",))),
        homes=(".claude", ".codex", ".codeium/windsurf"),
    )
    twins = run_twins(tmp_path, peer, case)
    listed = [box.skills("list", "--json") for box in twins]
    assert all(p.returncode == 0 for p in listed)
    theirs, mine = (json.loads(box.text(p.stdout)) for box, p in zip(twins, listed, strict=True))
    assert mine == theirs
    assert {s["name"] for s in mine} == {"one", "Two", "My Skill"}
    assert any("Claude Code" in s["agents"] for s in mine)


@pytest.mark.parametrize("agent", ["claude-code", "codex", "windsurf"])
def test_skillbook_list_sees_what_skills_installed(tmp_path: Path, peer: Path, agent: str) -> None:
    twins = run_twins(
        tmp_path, peer, Case("list", (Add(("claude-code", "codex", "windsurf"), source="pack"),))
    )
    listed = [box.skillbook("list", "--for", agent, "--json") for box in twins]
    assert all(p.returncode == 0 for p in listed), [p.stderr for p in listed]
    theirs, mine = (json.loads(box.text(p.stdout)) for box, p in zip(twins, listed, strict=True))
    assert mine == theirs
    assert [(s["name"], s["locked"]) for s in theirs["skills"]] == [("one", True), ("two", True)]


def test_use_prints_what_skills_use_prints(tmp_path: Path, peer: Path) -> None:
    twins = run_twins(tmp_path, peer, Case("use", (Add(("claude-code",)), Add(("codex",), "pack"))))
    box = twins[0]
    # The skill with other files: skills names a temporary copy, skillbook the folder itself.
    theirs = box.skills("use", "./.claude/skills/my-skill")
    mine = box.skillbook("use", "My Skill", "--for", "claude-code")
    assert theirs.returncode == 0 and mine.returncode == 0, mine.stderr
    folder = str(box.project / ".claude/skills/my-skill")
    temp = [line for line in theirs.stdout.splitlines() if line.startswith(str(box.root / "tmp"))]
    assert len(temp) == 1 and temp[0].endswith("/my-skill")
    assert mine.stdout == theirs.stdout.replace(temp[0], folder)
    # A skill that is only its SKILL.md: the same bytes, from the workspace's skills too.
    theirs = box.skills("use", "./.agents/skills/two")
    for argv in (("use", "two", "--for", "codex"), ("--workspace", ".", "use", "Two")):
        mine = box.skillbook(*argv)
        assert mine.returncode == 0, mine.stderr
        assert mine.stdout == theirs.stdout
    assert "downloaded to" not in theirs.stdout
