"""``skillbook install --for`` against the real ``skills`` CLI (npm ``skills@1.6.0``).

Twin sandboxes (their own HOME, XDG folders, project and skill source at the same
relative places): the peer runs ``skills add ../src/my-skill -y --agent …`` in one,
skillbook runs ``install ../src/my-skill --for …`` in the other, and the trees (files
with their bytes, link targets) and ``skills-lock.json`` must be the same. The peer is
installed from npm into ``.cache/skills-cli`` on first use; without node and npm these
tests skip, or fail where ``SKILLBOOK_HUB_REQUIRE_SERVICES=1`` (``.ci/run``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from factories import skill_text, write_file
from hypothesis import given, settings
from hypothesis import strategies as st

from distribution.agents.twin_sandbox import Tree, TwinSandbox
from distribution.hub.processes import unavailable

pytestmark = pytest.mark.subprocess


def write_skill(root: Path) -> None:
    """A skill whose hash depends on localeCompare order, with a copy-excluded file."""
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(skill_text("My Skill", "A demo skill.", body="Body.\n"))
    (root / "scripts").mkdir()
    (root / "scripts" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "scripts" / "run.sh").chmod(0o755)
    (root / "Zeta.txt").write_text("z\n")
    (root / "alpha_b.md").write_text("a\n")
    (root / "alpha-b.md").write_text("b\n")
    (root / "metadata.json").write_text("{}\n")


class Sandbox(TwinSandbox):
    """A twin with ``src/my-skill`` and ``src/pack`` (``one``, ``Two``) to install."""

    def __init__(self, root: Path, env_extra: Mapping[str, str]) -> None:
        super().__init__(root, env_extra)
        write_skill(root / "src" / "my-skill")
        for name in ("one", "Two"):
            folder = root / "src" / "pack" / name.lower()
            write_file(folder / "SKILL.md", skill_text(name, "Demo.", body=f"{name}\n"))


def compare(
    tmp_path: Path,
    peer: Path,
    agents: list[str],
    flags: list[str] = (),  # type: ignore[assignment]
    env: Mapping[str, str] | None = None,
    lock: str | None = None,
) -> Tree:
    twins = Sandbox(tmp_path / "peer", env or {}), Sandbox(tmp_path / "ours", env or {})
    if lock is not None:
        for box in twins:
            (box.project / "skills-lock.json").write_text(lock)
    twins[0].must(["node", str(peer), "add", "../src/my-skill", "-y", *flags, "--agent", *agents])
    ours = [sys.executable, "-m", "skillbook", "install", "../src/my-skill", *flags]
    for agent in agents:
        ours += ["--for", agent]
    twins[1].must(ours)
    theirs, mine = twins[0].snapshot(), twins[1].snapshot()
    assert mine == theirs
    return theirs


def test_one_agent_gets_a_real_copy(tmp_path: Path, peer: Path) -> None:
    tree = compare(tmp_path, peer, ["claude-code"])
    assert tree["project/.claude/skills/my-skill"] == ("dir",)
    assert "project/.claude/skills/my-skill/metadata.json" not in tree
    lock = json.loads(tree["project/skills-lock.json"][1])
    assert lock["skills"]["My Skill"]["source"] == "../src/my-skill"


def test_agents_with_different_folders_share_agents_skills_through_links(
    tmp_path: Path, peer: Path
) -> None:
    tree = compare(tmp_path, peer, ["claude-code", "codex"])
    assert tree["project/.claude/skills/my-skill"] == ("link", "../../.agents/skills/my-skill")


def test_an_agent_reading_agents_skills_is_served_by_it(tmp_path: Path, peer: Path) -> None:
    tree = compare(tmp_path, peer, ["cursor"])
    assert tree["project/.agents/skills/my-skill"] == ("dir",)
    compare(tmp_path / "two", peer, ["cursor", "windsurf", "claude-code"])


def test_global_with_claude_config_dir(tmp_path: Path, peer: Path) -> None:
    tree = compare(
        tmp_path, peer, ["claude-code"], ["-g"], env={"CLAUDE_CONFIG_DIR": "{home}/cc-config"}
    )
    assert tree["home/cc-config/skills/my-skill"] == ("dir",)
    compare(tmp_path / "two", peer, ["claude-code", "codex"], ["-g"])


def test_copy_puts_real_folders_everywhere(tmp_path: Path, peer: Path) -> None:
    tree = compare(tmp_path, peer, ["claude-code", "codex"], ["--copy"])
    assert tree["project/.claude/skills/my-skill"] == ("dir",)


def test_entries_the_peer_wrote_are_kept(tmp_path: Path, peer: Path) -> None:
    foreign = {
        "version": 1,
        "skills": {
            "zeta": {
                "source": "o/r",
                "sourceType": "github",
                "computedHash": "ab",
                "skillPath": "x/SKILL.md",
            },
            "Alpha": {"source": str(tmp_path), "sourceType": "local", "computedHash": "cd"},
            "42": {"source": "o/r", "sourceType": "github", "computedHash": "ef"},
        },
    }
    tree = compare(tmp_path, peer, ["claude-code"], lock=json.dumps(foreign))
    assert list(json.loads(tree["project/skills-lock.json"][1])["skills"]) == [
        "42",
        "Alpha",
        "My Skill",
        "zeta",
    ]


def test_a_folder_of_skills_installs_them_all(tmp_path: Path, peer: Path) -> None:
    twins = Sandbox(tmp_path / "peer", {}), Sandbox(tmp_path / "ours", {})
    twins[0].must(["node", str(peer), "add", "../src/pack", "-y", "--agent", "claude-code"])
    twins[1].must(
        [sys.executable, "-m", "skillbook", "install", "../src/pack", "--for", "claude-code"]
    )
    assert twins[1].snapshot() == twins[0].snapshot()
    assert "project/.claude/skills/two/SKILL.md" in twins[0].snapshot()


def test_remove_keeps_the_shared_copy_while_a_detected_agent_uses_it(
    tmp_path: Path, peer: Path
) -> None:
    twins = Sandbox(tmp_path / "peer", {}), Sandbox(tmp_path / "ours", {})
    for box in twins:
        (box.home / ".codex").mkdir()  # Codex is installed; Claude Code is not.
    node = ["node", str(peer)]
    ours = [sys.executable, "-m", "skillbook"]
    twins[0].must([*node, "add", "../src/pack", "-y", "--agent", "claude-code", "codex"])
    twins[1].must([*ours, "install", "../src/pack", "--for", "claude-code", "--for", "codex"])
    twins[0].must([*node, "remove", "Two", "-y", "--agent", "claude-code"])
    twins[1].must([*ours, "remove", "Two", "--for", "claude-code"])
    after_one = twins[0].snapshot()
    assert twins[1].snapshot() == after_one
    assert "project/.agents/skills/two/SKILL.md" in after_one
    assert "project/.claude/skills/two" not in after_one
    twins[0].must([*node, "remove", "one", "-y", "--agent", "claude-code", "codex"])
    twins[1].must([*ours, "remove", "one", "--for", "claude-code", "--for", "codex"])
    after_two = twins[0].snapshot()
    assert twins[1].snapshot() == after_two
    assert "project/.agents/skills/one" not in after_two


def test_reinstalling_turns_copies_into_links_and_back(tmp_path: Path, peer: Path) -> None:
    twins = Sandbox(tmp_path / "peer", {}), Sandbox(tmp_path / "ours", {})
    steps = (["claude-code"], ["claude-code", "codex"], ["claude-code", "codex", "--copy"])
    for step in steps:
        agents = [a for a in step if not a.startswith("-")]
        flags = [a for a in step if a.startswith("-")]
        twins[0].must(
            ["node", str(peer), "add", "../src/my-skill", "-y", *flags, "--agent", *agents]
        )
        ours = [sys.executable, "-m", "skillbook", "install", "../src/my-skill", *flags]
        twins[1].must(ours + [x for a in agents for x in ("--for", a)])
        assert twins[1].snapshot() == twins[0].snapshot(), step


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.text(alphabet=[chr(c) for c in range(32, 127)], max_size=6), min_size=2, max_size=12
    )
)
def test_locale_key_sorts_as_node_local_compare(names: list[str]) -> None:
    from skillbook.distribution.agents.lock import js_locale_key

    if shutil.which("node") is None:
        unavailable("node is needed to compare with localeCompare")
    script = "const a=JSON.parse(process.argv[1]);a.sort((x,y)=>x.localeCompare(y));console.log(JSON.stringify(a))"
    out = subprocess.run(
        ["node", "-e", script, json.dumps(names)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    theirs = json.loads(out.stdout)
    ours = sorted(names, key=js_locale_key)
    # Strings localeCompare finds equal may come in either order: compare by key.
    assert [js_locale_key(n) for n in ours] == [js_locale_key(n) for n in theirs]
    assert sorted(theirs) == sorted(names)


def test_node_is_really_there(peer: Path) -> None:
    assert shutil.which("node") is not None and peer.is_file()
