"""Other sources, one model: a git repository (``file://``, made in the test, several
skills and tags), a local folder, ``.zip`` and ``.tar.gz`` archives; the same archive
rules, the same scan, origins recorded in ``.skillbook/`` in the lock file format."""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from factories import skill_text

from distribution.registry.conftest import DEMO_V1, Said
from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.endpoint import Endpoint
from skillbook.distribution.registry.installer import Installer, InstallOptions
from skillbook.distribution.registry.updater import update_skills
from skillbook.distribution.registry.verify import verify_skills
from skillbook.distribution.registry.workdir import Workdir

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def skill_md(name: str, text: str = "") -> str:
    return skill_text(name, f"The {name} skill.", body=f"{text}\n")


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    proc = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """owner/tools.git: skills/alpha, skills/beta, nested/deep/gamma; tag v1, then a commit."""
    root = tmp_path / "remote" / "owner" / "tools"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for rel, name in (
        ("skills/alpha", "alpha"),
        ("skills/beta", "beta"),
        ("nested/deep/gamma", "gamma-skill"),
    ):
        (root / rel).mkdir(parents=True)
        (root / rel / "SKILL.md").write_text(skill_md(name, "v1"))
    (root / "skills/alpha/helper.md").write_text("helper v1\n")
    (root / "README.md").write_text("not a skill\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    git(root, "tag", "v1")
    (root / "skills/alpha/SKILL.md").write_text(skill_md("alpha", "v2"))
    git(root, "commit", "-qam", "two")
    return root


@pytest.fixture
def local(workdir: Workdir, said: Said) -> Installer:
    return Installer(workdir, Endpoint("http://127.0.0.1:9"), say=said)


def url(repo: Path) -> str:
    return repo.as_uri()


def test_a_repository_with_several_skills_lists_them_and_installs_the_named_ones(
    repo: Path, local: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    with pytest.raises(RegistryError) as info:
        local.install(url(repo), options)
    assert info.value.code == "registry.choose-skills"
    assert "holds 3 skills: alpha, beta, gamma" in info.value.message
    assert list((workdir.root / "skills").iterdir()) == []
    named = InstallOptions(state_dir=options.state_dir, skills=("alpha", "gamma-skill"))
    outcomes = local.install(url(repo), named)
    assert [o.name for o in outcomes] == ["alpha", "gamma"]
    head = git(repo, "rev-parse", "HEAD")
    assert all(o.version == head for o in outcomes)
    alpha = workdir.root / "skills" / "alpha"
    assert (alpha / "SKILL.md").read_text() == skill_md("alpha", "v2")
    origin = json.loads((alpha / ".skillbook" / "origin.json").read_text())
    assert list(origin) == [
        "version",
        "source",
        "slug",
        "installedVersion",
        "installedAt",
        "fingerprint",
    ]
    assert origin["source"] == {
        "kind": "git",
        "url": url(repo),
        "commit": head,
        "subpath": "skills/alpha",
    }
    lock = json.loads((workdir.root / ".skillbook" / "lock.json").read_text())
    assert lock["version"] == 1 and list(lock["skills"]) == ["alpha", "gamma"]
    assert lock["skills"]["alpha"]["source"] == origin["source"]
    # Nothing goes where a ClawHub client would "update" it from the registry by name.
    assert not (workdir.root / ".clawhub").exists()
    with pytest.raises(RegistryError, match='No skill "zeta"'):
        local.install(url(repo), InstallOptions(skills=("zeta",), force=True))


def test_a_tag_a_subpath_and_an_update_to_a_new_commit(
    repo: Path, local: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    from skillbook.distribution.registry.refs import GitRef

    ref = GitRef(url(repo), "skills/alpha", "v1")
    [outcome] = local.install(ref, options)
    assert (outcome.target / "SKILL.md").read_text() == skill_md("alpha", "v1")
    assert outcome.version == git(repo, "rev-parse", "v1^{commit}")
    [same] = update_skills(local, "alpha", options)
    assert same.message == f"alpha already at {outcome.version[:12]}"
    # A branch moves: the update fetches the newest commit.
    [branch] = local.install(GitRef(url(repo), "skills/beta"), options)
    (repo / "skills/beta/SKILL.md").write_text(skill_md("beta", "v3"))
    git(repo, "commit", "-qam", "three")
    [moved] = update_skills(local, "beta", options)
    new = git(repo, "rev-parse", "HEAD")
    assert moved.message == f"Updated beta: {branch.version[:12]} -> {new[:12]}"
    assert (workdir.root / "skills/beta/SKILL.md").read_text() == skill_md("beta", "v3")
    assert [v.drift.state for v in verify_skills(workdir)] == ["clean", "clean"]


def test_the_owner_repo_shorthand(
    repo: Path, local: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    base = (repo.parent.parent).as_uri()
    # owner/repo/path@ref, with the git host pointed at the test's folder.
    repo_git = repo.parent / "tools.git"
    repo.rename(repo_git)
    with_base = InstallOptions(state_dir=options.state_dir, git_base=base)
    [outcome] = local.install("owner/tools/skills/beta@v1", with_base)
    assert outcome.name == "beta"
    source = json.loads((outcome.target / ".skillbook/origin.json").read_text())["source"]
    assert source["url"] == f"{base}/owner/tools.git" and source["ref"] == "v1"


def test_links_in_a_repository_are_refused(
    repo: Path, local: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    (repo / "skills/beta/keys").symlink_to("/etc/passwd")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "link")
    with pytest.raises(RegistryError) as info:
        local.install(url(repo), InstallOptions(state_dir=options.state_dir, skills=("beta",)))
    assert info.value.code == "install.archive-rejected"
    assert "tree entry is a link: keys" in info.value.message
    assert list((workdir.root / "skills").iterdir()) == []


def test_a_bad_repository_fails_cleanly(
    tmp_path: Path, local: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    with pytest.raises(RegistryError) as info:
        local.install((tmp_path / "nowhere").as_uri(), options)
    assert info.value.code == "registry.git-failed"
    assert list((workdir.root / "skills").iterdir()) == []


def test_a_local_folder(
    tmp_path: Path, local: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    source = tmp_path / "src" / "my-skill"
    (source / "scripts").mkdir(parents=True)
    (source / "SKILL.md").write_text(skill_md("my-skill"))
    (source / "scripts" / "run.sh").write_text("echo hi\n")
    (source / "scripts" / "run.sh").chmod(0o755)
    [outcome] = local.install(f"{source}", options)
    assert outcome.kind == "folder" and outcome.version == "local"
    assert (outcome.target / "scripts" / "run.sh").read_text() == "echo hi\n"
    assert os.access(outcome.target / "scripts" / "run.sh", os.X_OK)
    [same] = update_skills(local, "my-skill", options)
    assert same.message == "my-skill already at local"
    (source / "SKILL.md").write_text(skill_md("my-skill", "more"))
    [changed] = update_skills(local, "my-skill", options)
    assert changed.ok and (outcome.target / "SKILL.md").read_text() == skill_md("my-skill", "more")


def _tar_gz(files: dict[str, bytes], *, link: str | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        if link is not None:
            info = tarfile.TarInfo(link)
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd"
            tf.addfile(info)
    return buf.getvalue()


def test_archives_zip_and_tar_gz(
    tmp_path: Path, local: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    zipped = tmp_path / "demo.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        for name, data in DEMO_V1.items():
            zf.writestr(f"demo-main/{name}", data)
    [z] = local.install(str(zipped), options)
    assert z.name == "demo" and z.kind == "archive"
    assert (z.target / "references" / "a.md").read_bytes() == DEMO_V1["references/a.md"]
    tgz = tmp_path / "other.tar.gz"
    tgz.write_bytes(_tar_gz({f"package/{k}": v for k, v in DEMO_V1.items()}))
    [t] = local.install(str(tgz), options)
    assert t.name == "other" and (t.target / "SKILL.md").read_bytes() == DEMO_V1["SKILL.md"]
    source = json.loads((t.target / ".skillbook" / "origin.json").read_text())["source"]
    assert source["kind"] == "archive" and len(source["sha256"]) == 64
    evil = tmp_path / "evil.tgz"
    evil.write_bytes(_tar_gz(dict(DEMO_V1), link="keys"))
    with pytest.raises(RegistryError) as info:
        local.install(str(evil), options)
    assert info.value.code == "install.archive-rejected"
    escape = tmp_path / "escape.tar.gz"
    escape.write_bytes(_tar_gz({"SKILL.md": DEMO_V1["SKILL.md"], "../../up.txt": b"x"}))
    with pytest.raises(RegistryError, match="escapes destination"):
        local.install(str(escape), options)
    assert sorted(p.name for p in (workdir.root / "skills").iterdir()) == ["demo", "other"]


def test_an_archive_url_goes_through_the_download_guard(
    tmp_path: Path, local: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    from distribution.registry.clawhub_server import ClawHub, flat_zip
    from skillbook.distribution.netguard import NetworkPolicy

    hub = ClawHub()
    try:
        hub.state.static["/demo.zip"] = flat_zip(DEMO_V1)
        # Loopback is refused by default (an archive URL may come from anywhere) …
        with pytest.raises(RegistryError) as info:
            local.install(f"{hub.url}/demo.zip", options)
        assert info.value.code == "install.download-failed"
        assert hub.state.requests == []
        # … and allowed by the install policy (skills.install.policy.allowPrivateNetwork).
        allowed = InstallOptions(
            state_dir=options.state_dir, network=NetworkPolicy(allow_private_network=True)
        )
        [outcome] = local.install(f"{hub.url}/demo.zip", allowed)
        assert outcome.name == "demo" and outcome.kind == "archive"
        source = json.loads((outcome.target / ".skillbook/origin.json").read_text())["source"]
        assert source["url"] == f"{hub.url}/demo.zip"
    finally:
        hub.close()


def test_a_token_in_a_git_url_never_reaches_messages_or_records(
    local: Installer, said: Said, options: InstallOptions
) -> None:
    with pytest.raises(RegistryError) as info:
        local.install("https://bob:ghp_secret@127.0.0.1:9/r.git", options)
    assert info.value.code == "registry.git-failed"
    assert "ghp_secret" not in info.value.message
    assert said == ["Fetching https://127.0.0.1:9/r.git…"]
