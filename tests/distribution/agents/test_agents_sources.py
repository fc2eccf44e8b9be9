"""Fast lane: ``install --for`` from every source (git over ``file://``, an ``owner/repo``
shorthand pointed at a local git base, ``.zip``/``.tar.gz`` files and a loopback URL, a
loopback registry), ``--skill``, the lock entries of each source type, the ``skills``
CLI's global lock, and ``update --for`` (new versions, local edits, entries the other
tool wrote)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from factories import skill_text, write_skill
from hypothesis import given, settings
from hypothesis import strategies as st

from distribution.registry.clawhub_server import ClawHub, flat_zip
from skillbook.cli.app import cli
from skillbook.distribution.agents import AgentsError
from skillbook.distribution.agents.globallock import (
    git_tree_hash,
    global_lock_path,
    read_global_lock,
)
from skillbook.distribution.agents.lock import computed_hash, read_lock
from skillbook.distribution.agents.ops import Installed, install_for, remove_for
from skillbook.distribution.agents.sources import Fetcher
from skillbook.distribution.agents.table import AgentEnv, get_agent
from skillbook.distribution.agents.update import update_for
from skillbook.distribution.netguard import NetworkPolicy
from skillbook.distribution.registry.endpoint import Endpoint
from skillbook.distribution.registry.installer import InstallOptions

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
EVIL = 'const pool = "stratum+tcp://pool.example:3333";\n'


def agents(*ids: str):  # type: ignore[no-untyped-def]
    found = tuple(get_agent(i) for i in ids)
    assert all(found)
    return found


BETA = "owner/tools/skills/beta"


def put(
    where: AgentEnv,
    source: str | Path = BETA,
    ids: tuple[str, ...] = ("claude-code",),
    *,
    global_: bool = True,
    **options: Any,
) -> list[Installed]:
    """``install_for`` as most tests here call it: linked (not ``--copy``), by default
    ``owner/tools/skills/beta`` for Claude Code in the user's folders."""
    return install_for(source, agents(*ids), where, global_=global_, copy=False, **options)


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    proc = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


def md(name: str, text: str) -> str:
    return skill_text(name, f"The {name} skill.", body=f"{text}\n")


@pytest.fixture
def where(tmp_path: Path) -> AgentEnv:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return AgentEnv({"HOME": str(home)}, project)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """remote/owner/tools.git (a working repository): skills/alpha ("Alpha"), skills/beta."""
    root = tmp_path / "remote" / "owner" / "tools.git"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for folder, name in (("alpha", "Alpha"), ("beta", "beta")):
        (root / "skills" / folder / "scripts").mkdir(parents=True)
        (root / "skills" / folder / "SKILL.md").write_text(md(name, "v1"))
        (root / "skills" / folder / "scripts" / "run.sh").write_text("echo v1\n")
        (root / "skills" / folder / "scripts" / "run.sh").chmod(0o755)
    (root / "README.md").write_text("not a skill\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    return root


@pytest.fixture
def hub() -> Iterator[ClawHub]:
    server = ClawHub()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def fetcher(tmp_path: Path, hub: ClawHub) -> Fetcher:
    options = InstallOptions(
        state_dir=tmp_path / "state",
        git_base=(tmp_path / "remote").as_uri(),
        network=NetworkPolicy(allow_private_network=True),
    )
    return Fetcher(Endpoint(hub.url), options, env={**os.environ, **GIT_ENV})


def commit_v2(repo: Path) -> None:
    (repo / "skills/alpha/SKILL.md").write_text(md("Alpha", "v2"))
    (repo / "skills/alpha/new.md").write_text("new in v2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")


# -- git ---------------------------------------------------------------------------------


def test_git_url_project_one_agent_and_the_lock_entry(
    where: AgentEnv, repo: Path, fetcher: Fetcher
) -> None:
    url = repo.as_uri()
    done = put(where, url, global_=False, picks=("Alpha",), fetcher=fetcher)
    assert [d.name for d in done] == ["Alpha"]
    placed = where.project / ".claude/skills/alpha"
    assert (placed / "SKILL.md").read_text() == md("Alpha", "v1")
    assert os.stat(placed / "scripts/run.sh").st_mode & 0o111
    assert not (where.project / ".claude/skills/beta").exists()
    # The other tool's spelling for a generic git URL, keys in its order.
    entry = read_lock(where.project)["Alpha"]
    assert list(entry.items()) == [
        ("source", url),
        ("sourceUrl", url),
        ("sourceType", "git"),
        ("skillPath", "skills/alpha/SKILL.md"),
        ("computedHash", computed_hash(repo / "skills/alpha")),
    ]
    # A file:// URL has no owner/repo: the other tool records nothing globally either.
    assert not global_lock_path(where).exists()


def test_git_without_skill_installs_every_skill_for_two_agents(
    where: AgentEnv, repo: Path, fetcher: Fetcher
) -> None:
    done = put(where, repo.as_uri(), ("claude-code", "codex"), global_=False, fetcher=fetcher)
    assert sorted(d.name for d in done) == ["Alpha", "beta"]
    for folder in ("alpha", "beta"):
        assert (where.project / ".agents/skills" / folder / "SKILL.md").is_file()
        link = where.project / ".claude/skills" / folder
        assert os.readlink(link) == f"../../.agents/skills/{folder}"
    assert sorted(read_lock(where.project)) == ["Alpha", "beta"]


def test_shorthand_global_two_agents_writes_the_global_lock(
    where: AgentEnv, repo: Path, fetcher: Fetcher
) -> None:
    put(where, BETA, ("claude-code", "codex"), fetcher=fetcher)
    assert (where.home / ".agents/skills/beta/SKILL.md").is_file()
    assert os.readlink(where.home / ".claude/skills/beta") == "../../.agents/skills/beta"
    assert not (where.project / "skills-lock.json").exists()
    path = where.home / ".agents/.skill-lock.json"
    text = path.read_text()
    assert not text.endswith("\n")  # JSON.stringify(lock, null, 2)
    lock = json.loads(text)
    assert lock["version"] == 3 and lock["dismissed"] == {}
    entry = lock["skills"]["beta"]
    assert list(entry)[:5] == ["source", "sourceType", "sourceUrl", "skillPath", "skillFolderHash"]
    assert entry["source"] == "owner/tools" and entry["sourceType"] == "github"
    assert entry["sourceUrl"] == "https://github.com/owner/tools.git"
    assert entry["skillPath"] == "skills/beta/SKILL.md"
    # GitHub entries record the folder's git tree id, as GitHub's tree API gives it.
    assert entry["skillFolderHash"] == git(repo, "rev-parse", "HEAD:skills/beta")
    assert entry["installedAt"] == entry["updatedAt"]
    assert entry["installedAt"].endswith("Z") and len(entry["installedAt"]) == 24


def test_git_tree_hash_matches_git(repo: Path, tmp_path: Path) -> None:
    (repo / "skills/alpha/empty").mkdir()  # git keeps no empty folders
    assert git_tree_hash(repo / "skills") == git(repo, "rev-parse", "HEAD:skills")
    # The whole checkout: .git is left out.
    assert git_tree_hash(repo) == git(repo, "rev-parse", "HEAD^{tree}")


def test_the_global_lock_keeps_what_the_other_tool_wrote(
    where: AgentEnv, repo: Path, fetcher: Fetcher
) -> None:
    path = where.home / ".agents/.skill-lock.json"
    path.parent.mkdir(parents=True)
    foreign = {
        "version": 3,
        "skills": {
            "theirs": {
                "source": "o/r",
                "sourceType": "github",
                "sourceUrl": "https://github.com/o/r.git",
                "skillPath": "SKILL.md",
                "skillFolderHash": "f" * 40,
                "pluginName": "p",
                "futureKey": {"kept": [1, 2]},
                "installedAt": "2025-01-01T00:00:00.000Z",
                "updatedAt": "2025-01-01T00:00:00.000Z",
            },
            "7": {"source": "o/seven", "sourceType": "github"},
        },
        "dismissed": {"findSkillsPrompt": True},
        "lastSelectedAgents": ["claude-code"],
        "somethingNew": 1,
    }
    path.write_text(json.dumps(foreign, indent=2))
    put(where, fetcher=fetcher)
    lock = json.loads(path.read_text())
    assert list(lock) == ["version", "skills", "dismissed", "lastSelectedAgents", "somethingNew"]
    assert list(lock["skills"]) == ["7", "theirs", "beta"]
    for key, value in foreign.items():
        if key != "skills":
            assert lock[key] == value
    assert lock["skills"]["theirs"] == foreign["skills"]["theirs"]  # type: ignore[index]
    first = lock["skills"]["beta"]["installedAt"]
    # A reinstall keeps installedAt (the other tool's rule).
    put(where, fetcher=fetcher)
    assert json.loads(path.read_text())["skills"]["beta"]["installedAt"] == first


def test_xdg_state_home_moves_the_global_lock(tmp_path: Path, repo: Path, fetcher: Fetcher) -> None:
    where = AgentEnv(
        {"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "xdg")}, tmp_path
    )
    put(where, fetcher=fetcher)
    assert (tmp_path / "xdg/skills/.skill-lock.json").is_file()
    assert not (tmp_path / "home/.agents/.skill-lock.json").exists()


@pytest.mark.parametrize(
    "content", ["{oops", '{"version": 2, "skills": {}}', '{"version": 3}', "[]"]
)
def test_an_unusable_global_lock_is_refused_before_anything_is_placed(
    where: AgentEnv, repo: Path, fetcher: Fetcher, content: str
) -> None:
    path = where.home / ".agents/.skill-lock.json"
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(AgentsError) as caught:
        put(where, fetcher=fetcher)
    assert caught.value.code == "agents.global-lock-invalid"
    assert str(path) in caught.value.message
    assert path.read_text() == content
    assert not (where.home / ".claude").exists()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=64),
        _JSON.map(lambda v: json.dumps(v).encode()),
        st.builds(
            lambda v, skills: json.dumps({"version": v, "skills": skills}).encode(),
            st.one_of(st.integers(0, 5), st.floats(allow_nan=False), st.text(max_size=3)),
            st.dictionaries(st.text(max_size=4), _JSON, max_size=3),
        ),
    )
)
def test_any_global_lock_is_read_or_refused_with_its_code(tmp_path_factory, content: bytes) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path_factory.mktemp("home")
    where = AgentEnv({"HOME": str(home)}, home)
    path = global_lock_path(where)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    try:
        lock = read_global_lock(where)
    except AgentsError as exc:
        assert exc.code == "agents.global-lock-invalid" and str(path) in exc.message
        return
    assert lock["version"] >= 3 and isinstance(lock["skills"], dict)
    # What is read is written back unchanged, every key kept, plus the new entry.
    from skillbook.distribution.agents.globallock import update_global_lock

    update_global_lock(where, add={"zz-new": {"source": "o/r", "sourceType": "github"}})
    text = path.read_text(encoding="utf-8")
    again = json.loads(text, parse_constant=pytest.fail)  # JSON.parse must read it back
    assert {k: v for k, v in again.items() if k != "skills"} == {
        k: v for k, v in lock.items() if k != "skills"
    }
    assert {k: v for k, v in again["skills"].items() if k != "zz-new"} == {
        k: v for k, v in lock["skills"].items() if k != "zz-new"
    }


def test_remove_global_drops_the_global_lock_entry(
    where: AgentEnv, repo: Path, fetcher: Fetcher
) -> None:
    put(where, fetcher=fetcher)
    remove_for("beta", agents("claude-code"), where, global_=True)
    assert read_global_lock(where)["skills"] == {}
    assert not (where.home / ".claude/skills/beta").exists()


# -- archives ----------------------------------------------------------------------------


def _tar_gz(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_a_zip_file_project_one_agent(where: AgentEnv, tmp_path: Path, fetcher: Fetcher) -> None:
    archive = tmp_path / "demo.zip"
    archive.write_bytes(flat_zip({"SKILL.md": md("Demo", "zip").encode(), "a/b.txt": b"b\n"}))
    [done] = install_for(
        str(archive), agents("cursor"), where, global_=False, copy=False, fetcher=fetcher
    )
    assert (where.project / ".agents/skills/demo/a/b.txt").read_bytes() == b"b\n"
    entry = read_lock(where.project)["Demo"]
    assert entry["source"] == str(archive) and entry["sourceType"] == "archive"
    assert len(entry["sha256"]) == 64 and entry["computedHash"] == done.computed_hash


def test_a_tar_gz_url_global_two_agents(where: AgentEnv, hub: ClawHub, fetcher: Fetcher) -> None:
    hub.state.static["/demo.tar.gz"] = _tar_gz({"SKILL.md": md("Demo", "tar").encode()})
    url = f"{hub.url}/demo.tar.gz"
    install_for(
        url, agents("claude-code", "gemini-cli"), where, global_=True, copy=False, fetcher=fetcher
    )
    assert (where.home / ".agents/skills/demo/SKILL.md").is_file()
    assert os.readlink(where.home / ".claude/skills/demo") == "../../.agents/skills/demo"
    entry = read_global_lock(where)["skills"]["Demo"]
    assert entry["source"] == url and entry["sourceType"] == "archive"
    assert entry["skillFolderHash"] == computed_hash(where.home / ".agents/skills/demo")


# -- the registry ------------------------------------------------------------------------


def test_a_registry_slug_project_and_global(
    where: AgentEnv, hub: ClawHub, fetcher: Fetcher
) -> None:
    hub.state.publish("demo", "1.0.0", {"SKILL.md": md("demo", "v1").encode()})
    install_for("demo", agents("claude-code"), where, global_=False, copy=False, fetcher=fetcher)
    assert (where.project / ".claude/skills/demo/SKILL.md").read_text() == md("demo", "v1")
    entry = read_lock(where.project)["demo"]
    assert list(entry.items())[:4] == [
        ("source", "demo"),
        ("sourceType", "clawhub"),
        ("registry", hub.url),
        ("version", "1.0.0"),
    ]
    # No tracking folders of skillbook's own installs in the agent's copy.
    assert sorted(p.name for p in (where.project / ".claude/skills/demo").iterdir()) == ["SKILL.md"]
    install_for(
        "demo", agents("claude-code", "codex"), where, global_=True, copy=False, fetcher=fetcher
    )
    assert read_global_lock(where)["skills"]["demo"]["version"] == "1.0.0"
    assert (where.home / ".agents/skills/demo/SKILL.md").is_file()


# -- the scan and --skill ------------------------------------------------------------------


def test_a_blocked_skill_places_nothing_from_any_source(
    where: AgentEnv, repo: Path, fetcher: Fetcher
) -> None:
    (repo / "skills/beta/miner.js").write_text(EVIL)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "evil")
    with pytest.raises(AgentsError) as caught:
        put(where, repo.as_uri(), ("claude-code", "codex"), global_=False, fetcher=fetcher)
    assert caught.value.code == "install.scan-blocked"
    assert list(where.project.iterdir()) == []
    # The clean one alone still installs.
    put(where, repo.as_uri(), global_=False, picks=("alpha",), fetcher=fetcher)
    assert (where.project / ".claude/skills/alpha").is_dir()


def test_skill_picks_from_a_local_folder_of_skills(where: AgentEnv, tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    for name in ("one", "Two", "three"):
        write_skill(pack / name.lower(), name=name)
    done = install_for(
        pack, agents("claude-code"), where, global_=False, copy=False, picks=("Two", "three")
    )
    assert sorted(d.name for d in done) == ["Two", "three"]
    assert sorted(p.name for p in (where.project / ".claude/skills").iterdir()) == [
        "three",
        "two",
    ]
    with pytest.raises(AgentsError) as caught:
        install_for(pack, agents("claude-code"), where, global_=False, copy=False, picks=("nope",))
    assert (
        caught.value.code == "agents.skill-not-found"
        and "(it holds: Two, one, three)" in caught.value.message
    )


# -- update --------------------------------------------------------------------------------


def test_update_picks_up_a_new_commit_and_then_is_current(
    where: AgentEnv, repo: Path, fetcher: Fetcher
) -> None:
    chosen = agents("claude-code", "codex")
    install_for(
        repo.as_uri(), chosen, where, global_=False, copy=False, picks=("Alpha",), fetcher=fetcher
    )
    commit_v2(repo)
    [result] = update_for("Alpha", chosen, where, global_=False, force=False, fetcher=fetcher)
    assert result.ok and result.changed, result.message
    shared = where.project / ".agents/skills/alpha"
    assert (shared / "new.md").read_text() == "new in v2\n"
    assert os.path.islink(where.project / ".claude/skills/alpha")
    assert read_lock(where.project)["Alpha"]["computedHash"] == computed_hash(repo / "skills/alpha")
    [again] = update_for(None, chosen, where, global_=False, force=False, fetcher=fetcher)
    assert again.ok and not again.changed and again.message == "Alpha is up to date"


def test_update_refuses_a_local_edit_with_the_diff_unless_forced(
    where: AgentEnv, repo: Path, fetcher: Fetcher
) -> None:
    chosen = agents("claude-code")
    install_for(
        repo.as_uri(), chosen, where, global_=False, copy=False, picks=("Alpha",), fetcher=fetcher
    )
    placed = where.project / ".claude/skills/alpha"
    (placed / "scripts/run.sh").write_text("echo mine\n")
    commit_v2(repo)
    before = read_lock(where.project)
    [result] = update_for("Alpha", chosen, where, global_=False, force=False, fetcher=fetcher)
    assert not result.ok and result.code == "agents.local-changes"
    assert result.diff is not None
    assert "-echo mine" in result.diff and "+echo v1" in result.diff and "+new in v2" in result.diff
    assert (placed / "scripts/run.sh").read_text() == "echo mine\n"
    assert read_lock(where.project) == before
    [forced] = update_for("Alpha", chosen, where, global_=False, force=True, fetcher=fetcher)
    assert forced.ok and forced.changed
    assert (placed / "scripts/run.sh").read_text() == "echo v1\n"


def test_update_of_a_registry_skill_and_a_blocked_new_version(
    where: AgentEnv, hub: ClawHub, fetcher: Fetcher
) -> None:
    hub.state.publish("demo", "1.0.0", {"SKILL.md": md("demo", "v1").encode()})
    chosen = agents("claude-code")
    install_for("demo", chosen, where, global_=True, copy=False, fetcher=fetcher)
    hub.state.publish("demo", "2.0.0", {"SKILL.md": md("demo", "v2").encode()})
    [result] = update_for("demo", chosen, where, global_=True, force=False, fetcher=fetcher)
    assert result.ok and result.changed, result.message
    assert (where.home / ".claude/skills/demo/SKILL.md").read_text() == md("demo", "v2")
    entry = read_global_lock(where)["skills"]["demo"]
    assert entry["version"] == "2.0.0"
    hub.state.publish(
        "demo", "3.0.0", {"SKILL.md": md("demo", "v3").encode(), "miner.js": EVIL.encode()}
    )
    [blocked] = update_for("demo", chosen, where, global_=True, force=True, fetcher=fetcher)
    assert not blocked.ok and blocked.code == "install.scan-blocked"
    assert (where.home / ".claude/skills/demo/SKILL.md").read_text() == md("demo", "v2")
    assert read_global_lock(where)["skills"]["demo"]["version"] == "2.0.0"


def test_update_of_an_entry_the_other_tool_wrote_online(
    where: AgentEnv, repo: Path, fetcher: Fetcher
) -> None:
    """A global GitHub entry whose skillFolderHash is the git tree id (what the other
    tool records when it reaches GitHub's API), with a key skillbook does not know."""
    skill = where.home / ".claude/skills/beta"
    skill.parent.mkdir(parents=True)
    git(repo, "worktree", "add", "-q", str(where.home / "wt"), "HEAD")
    os.rename(where.home / "wt/skills/beta", skill)
    path = where.home / ".agents/.skill-lock.json"
    path.parent.mkdir(parents=True)
    entry = {
        "source": "owner/tools",
        "sourceType": "github",
        "sourceUrl": "https://github.com/owner/tools.git",
        "skillPath": "skills/beta/SKILL.md",
        "skillFolderHash": git(repo, "rev-parse", "HEAD:skills/beta"),
        "pluginName": "tools",
        "installedAt": "2025-01-01T00:00:00.000Z",
        "updatedAt": "2025-01-01T00:00:00.000Z",
    }
    path.write_text(json.dumps({"version": 3, "skills": {"beta": entry}, "dismissed": {}}))
    (repo / "skills/beta/SKILL.md").write_text(md("beta", "v2"))
    git(repo, "commit", "-qam", "beta two")
    [result] = update_for(
        "beta", agents("claude-code"), where, global_=True, force=False, fetcher=fetcher
    )
    assert result.ok and result.changed, result.message
    assert (skill / "SKILL.md").read_text() == md("beta", "v2")
    after = read_global_lock(where)["skills"]["beta"]
    assert after["skillFolderHash"] == git(repo, "rev-parse", "HEAD:skills/beta")
    assert after["pluginName"] == "tools" and after["installedAt"] == entry["installedAt"]
    assert after["updatedAt"] != entry["updatedAt"]


def test_update_of_a_local_entry_and_of_an_unknown_kind(where: AgentEnv, tmp_path: Path) -> None:
    source = tmp_path / "src" / "my-skill"
    write_skill(source, name="My Skill", body="v1\n")
    chosen = agents("claude-code")
    install_for(source, chosen, where, global_=False, copy=False)
    write_skill(source, name="My Skill", body="v2\n")
    [result] = update_for("My Skill", chosen, where, global_=False, force=False, fetcher=None)
    assert result.ok and result.changed
    assert "v2" in (where.project / ".claude/skills/my-skill/SKILL.md").read_text()
    lock = read_lock(where.project)
    lock["My Skill"]["sourceType"] = "well-known"
    (where.project / "skills-lock.json").write_text(json.dumps({"version": 1, "skills": lock}))
    [refused] = update_for("my-skill", chosen, where, global_=False, force=False, fetcher=None)
    assert not refused.ok and refused.code == "agents.update-unsupported"
    with pytest.raises(AgentsError) as caught:
        update_for("nope", chosen, where, global_=False, force=False, fetcher=None)
    assert caught.value.code == "agents.not-installed"


# -- the CLI -------------------------------------------------------------------------------


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hub: ClawHub) -> Path:
    for name in list(os.environ):
        if name.startswith(("SKILLBOOK_", "OPENCLAW_", "CLAWHUB", "CLAWDHUB", "XDG_")):
            monkeypatch.delenv(name)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAWHUB_URL", hub.url)
    monkeypatch.setenv("SKILLBOOK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SKILLBOOK_GIT_BASE_URL", (tmp_path / "remote").as_uri())
    monkeypatch.chdir(project)
    return project


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_cli_install_update_with_an_edit_and_force(shell: Path, repo: Path) -> None:
    code, out, err = run("install", "owner/tools", "--skill", "Alpha", "--for", "claude-code")
    assert code == 0, err
    assert out == f"Installed Alpha for claude-code -> {shell}/.claude/skills/alpha\n"
    assert read_lock(shell)["Alpha"]["sourceType"] == "github"
    code, out, err = run("update", "--for", "claude-code")
    assert code == 0 and out == "Alpha is up to date\n", err
    (shell / ".claude/skills/alpha/SKILL.md").write_text("mine\n")
    commit_v2(repo)
    code, out, err = run("update", "Alpha", "--for", "claude-code")
    assert code == 1
    assert "was edited in" in err and "--force" in err
    assert out.startswith("# Your edit of Alpha (the folder -> the new version):\n")
    assert "-mine" in out
    code, out, err = run("update", "Alpha", "--for", "claude-code", "--force", "--json")
    assert code == 0, err
    [result] = json.loads(out)["results"]
    assert result["ok"] and result["changed"]
    assert (shell / ".claude/skills/alpha/new.md").is_file()


def test_cli_registry_slug_global_and_bad_flags(shell: Path, hub: ClawHub) -> None:
    hub.state.publish("demo", "1.0.0", {"SKILL.md": md("demo", "v1").encode()})
    code, out, err = run("install", "demo", "-g", "--for", "claude-code", "--json")
    assert code == 0, err
    [installed] = json.loads(out)["installed"]
    assert installed["name"] == "demo"
    assert read_global_lock(AgentEnv({"HOME": str(shell.parent / "home")}, shell))["skills"]
    code, out, err = run("list", "--for", "claude-code", "-g", "--json")
    assert code == 0, err
    [listed] = json.loads(out)["skills"]
    assert listed["name"] == "demo" and listed["locked"]  # from the global lock
    code, _, err = run("install", "demo", "--for", "claude-code", "--name", "x")
    assert code == 2 and "--for does not take --name" in err
    code, _, err = run("update", "demo", "--for", "claude-code", "--version", "1.0.0")
    assert code == 2
    code, _, err = run("install", "nope-not-there", "--for", "claude-code")
    assert code == 1


def test_update_sees_through_what_copies_leave_out(where: AgentEnv, tmp_path: Path) -> None:
    """The lock's hash covers metadata.json and skips links; the copy holds no
    metadata.json and a link's target bytes. Neither counts as an edit."""
    source = tmp_path / "src" / "s"
    write_skill(source, name="s", body="v1\n", files={"a.md": "a\n", "metadata.json": "{}\n"})
    (source / "b.md").symlink_to("a.md")
    chosen = agents("claude-code")
    install_for(source, chosen, where, global_=False, copy=False)
    placed = where.project / ".claude/skills/s"
    assert not (placed / "metadata.json").exists() and not (placed / "b.md").is_symlink()
    assert computed_hash(placed) != read_lock(where.project)["s"]["computedHash"]
    write_skill(source, name="s", body="v2\n")
    [result] = update_for("s", chosen, where, global_=False, force=False, fetcher=None)
    assert result.ok and result.changed, result.message
    assert "v2" in (placed / "SKILL.md").read_text()
    (placed / "a.md").write_text("edited\n")
    write_skill(source, name="s", body="v3\n")
    [refused] = update_for("s", chosen, where, global_=False, force=False, fetcher=None)
    assert refused.code == "agents.local-changes"


def test_a_forced_install_leaves_its_audit_line_first(where: AgentEnv, tmp_path: Path) -> None:
    source = write_skill(tmp_path / "src" / "evil", name="evil", files={"miner.js": EVIL})
    state = tmp_path / "state"
    put(where, source, global_=False, force_reason="reviewed it", state_dir=state)
    assert (where.project / ".claude/skills/evil/miner.js").is_file()
    [line] = (state / "install-audit.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["skill"] == "evil" and record["reason"] == "reviewed it"
    assert record["kind"] == "agents:local" and record["findings"]


GH = "https://github.com/o/r.git"
GL = "https://gitlab.com/g/r.git"
OTHER = "https://git.example.com/team/repo.git"
SCP = "git@github.com:o/r.git"


@pytest.mark.parametrize(
    ("raw", "project", "glob"),
    [
        (
            "o/r/skills/x",
            {"source": "o/r", "sourceType": "github"},
            {"source": "o/r", "sourceType": "github", "sourceUrl": GH},
        ),
        (
            "https://github.com/o/r/tree/main/skills/x",
            {"source": "o/r", "ref": "main", "sourceType": "github"},
            {"source": "o/r", "sourceType": "github", "sourceUrl": GH, "ref": "main"},
        ),
        (
            "ssh://git@github.com/o/r.git",
            {"source": "o/r", "sourceType": "github"},
            {"source": "o/r", "sourceType": "github", "sourceUrl": GH},
        ),
        (
            "https://gitlab.com/g/r",
            {"source": GL, "sourceUrl": GL, "sourceType": "gitlab"},
            {"source": GL, "sourceType": "gitlab", "sourceUrl": GL},
        ),
        (
            OTHER,
            {"source": OTHER, "sourceUrl": OTHER, "sourceType": "git"},
            {"source": OTHER, "sourceType": "git", "sourceUrl": OTHER},
        ),
        (
            SCP,
            {"source": SCP, "sourceUrl": SCP, "sourceType": "git"},
            {"source": SCP, "sourceType": "git", "sourceUrl": SCP},
        ),
        (
            "file:///srv/r.git",
            {"source": "file:///srv/r.git", "sourceUrl": "file:///srv/r.git", "sourceType": "git"},
            None,
        ),
    ],
)
def test_git_lock_entries_are_spelt_as_the_other_tool_spells_them(
    raw: str, project: dict[str, str], glob: dict[str, str] | None
) -> None:
    """What ``skills add RAW`` records (read from skills@1.6.0's source parsing), for forms
    the tests cannot fetch offline."""
    from skillbook.distribution.agents.sources import _git_entries
    from skillbook.distribution.registry.refs import GitRef, parse_ref

    ref = parse_ref(raw)
    assert isinstance(ref, GitRef)
    got_project, got_global, tree = _git_entries(raw, ref.public_url, ref.ref, "x/SKILL.md")
    assert list(got_project.items()) == [*project.items(), ("skillPath", "x/SKILL.md")]
    if glob is None:
        assert got_global is None
    else:
        assert got_global == {**glob, "skillPath": "x/SKILL.md"}
        assert list(got_global)[:3] == ["source", "sourceType", "sourceUrl"]
    assert tree == (project["sourceType"] == "github")


def test_update_does_not_write_through_a_link_leading_elsewhere(
    where: AgentEnv, tmp_path: Path
) -> None:
    source = write_skill(tmp_path / "src" / "s", name="s", body="v1\n")
    chosen = agents("claude-code")
    install_for(source, chosen, where, global_=False, copy=False)
    placed = where.project / ".claude/skills/s"
    elsewhere = write_skill(tmp_path / "precious", name="s", body="mine\n")
    import shutil

    shutil.rmtree(placed)
    placed.symlink_to(elsewhere)
    write_skill(source, name="s", body="v2\n")
    [result] = update_for("s", chosen, where, global_=False, force=True, fetcher=None)
    assert not result.ok and result.code == "agents.not-installed"
    assert "mine" in (elsewhere / "SKILL.md").read_text()
