"""``install --for`` from a git repository against the real ``skills`` CLI (``skills@1.6.0``).

The one remote source both tools install offline: a repository on disk reached through
a ``file://`` URL (the peer reads a plain path as a local folder). Twin sandboxes as in
test_agents_peer.py, one repository shared by both so the URL in the locks is the same;
the trees, links, ``skills-lock.json`` and the global lock (which neither writes for a
URL without ``owner/repo``) must match.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from factories import skill_text

from distribution.agents.test_agents_peer import Sandbox
from distribution.agents.twin_sandbox import Tree

pytestmark = pytest.mark.subprocess

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)


@pytest.fixture
def url(tmp_path: Path) -> str:
    """A repository with two skills (one with a script, a metadata.json and a subfolder)."""
    root = tmp_path / "remote" / "owner" / "tools.git"
    (root / "skills" / "alpha" / "scripts").mkdir(parents=True)
    (root / "skills" / "beta").mkdir(parents=True)
    (root / "skills/alpha/SKILL.md").write_text(skill_text("Alpha", "The alpha skill.", body="A\n"))
    (root / "skills/alpha/scripts/run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "skills/alpha/scripts/run.sh").chmod(0o755)
    (root / "skills/alpha/metadata.json").write_text("{}\n")
    (root / "skills/beta/SKILL.md").write_text(skill_text("beta", "The beta skill.", body="B\n"))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    return root.as_uri()


def compare(tmp_path: Path, peer: Path, url: str, args: list[str], agents: list[str]) -> Tree:
    twins = Sandbox(tmp_path / "peer", {}), Sandbox(tmp_path / "ours", {})
    twins[0].must(["node", str(peer), "add", url, "-y", *args, "--agent", *agents])
    ours = [sys.executable, "-m", "skillbook", "install", url, *args]
    twins[1].must(ours + [x for a in agents for x in ("--for", a)])
    theirs, mine = twins[0].snapshot(), twins[1].snapshot()
    assert mine == theirs
    for box in twins:
        assert not (box.root / "state/skills/.skill-lock.json").exists()
    return theirs


def test_one_skill_of_a_repository_for_one_agent(tmp_path: Path, peer: Path, url: str) -> None:
    tree = compare(tmp_path, peer, url, ["--skill", "Alpha"], ["claude-code"])
    assert tree["project/.claude/skills/alpha"] == ("dir",)
    assert "project/.claude/skills/beta" not in tree


def test_every_skill_for_two_agents_through_links(tmp_path: Path, peer: Path, url: str) -> None:
    tree = compare(tmp_path, peer, url, [], ["claude-code", "codex"])
    assert tree["project/.claude/skills/beta"] == ("link", "../../.agents/skills/beta")


def test_copies_for_two_agents(tmp_path: Path, peer: Path, url: str) -> None:
    tree = compare(tmp_path, peer, url, ["--copy", "--skill", "beta"], ["claude-code", "cursor"])
    assert tree["project/.claude/skills/beta"] == ("dir",)


def test_global_for_two_agents(tmp_path: Path, peer: Path, url: str) -> None:
    tree = compare(tmp_path, peer, url, ["-g"], ["claude-code", "codex"])
    assert tree["home/.claude/skills/alpha"] == ("link", "../../.agents/skills/alpha")


def test_update_of_what_the_peer_installed_matches_a_fresh_peer_install(
    tmp_path: Path, peer: Path, url: str
) -> None:
    """The peer installs v1; after a new commit skillbook's ``update --for`` gives the
    tree and lock the peer gives when it installs v2 afresh."""
    updated, fresh = Sandbox(tmp_path / "updated", {}), Sandbox(tmp_path / "fresh", {})
    add = ["node", str(peer), "add", url, "-y", "--skill", "Alpha", "--agent", "claude-code"]
    updated.must(add)
    repo = Path(url.removeprefix("file://"))
    (repo / "skills/alpha/SKILL.md").write_text(
        skill_text("Alpha", "The alpha skill.", body="A2\n")
    )
    (repo / "skills/alpha/new.md").write_text("new\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    updated.must([sys.executable, "-m", "skillbook", "update", "--for", "claude-code"])
    fresh.must(add)
    after = updated.snapshot()
    assert after == fresh.snapshot()
    assert "project/.claude/skills/alpha/new.md" in after


def test_a_repository_that_is_one_skill(tmp_path: Path, peer: Path) -> None:
    root = tmp_path / "remote" / "solo.git"
    (root / "docs").mkdir(parents=True)
    (root / "SKILL.md").write_text(skill_text("Solo Skill", "One skill.", body="S\n"))
    (root / "docs" / "guide.md").write_text("guide\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    tree = compare(tmp_path, peer, root.as_uri(), [], ["claude-code", "gemini-cli"])
    lock = json.loads(tree["project/skills-lock.json"][1])
    assert lock["skills"]["Solo Skill"]["skillPath"] == "SKILL.md"
    assert tree["project/.claude/skills/solo-skill"] == ("link", "../../.agents/skills/solo-skill")
