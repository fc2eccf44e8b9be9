"""Update after a version bump, update with a local edit (refused), verify, remove;
skills installed by OpenClaw (no fingerprint) and the legacy ``.clawdhub`` files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from factories import write_skill

from distribution.registry.clawhub_server import ClawHub
from distribution.registry.conftest import DEMO_V1, DEMO_V2
from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.installer import Installer, InstallOptions
from skillbook.distribution.registry.remove import remove_skill
from skillbook.distribution.registry.updater import update_skills
from skillbook.distribution.registry.verify import verify_skills
from skillbook.distribution.registry.workdir import Workdir


def visible(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).as_posix().startswith(".")
    }


def lock_of(workdir: Workdir) -> dict[str, dict[str, object]]:
    data = json.loads((workdir.root / ".clawhub" / "lock.json").read_text())
    skills = data["skills"]
    assert isinstance(skills, dict)
    return skills


@pytest.fixture
def installed(hub: ClawHub, installer: Installer, options: InstallOptions) -> Path:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    [outcome] = installer.install("demo", options)
    return outcome.target


def test_update_after_a_version_bump(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions, installed: Path
) -> None:
    origin_before = json.loads((installed / ".clawhub" / "origin.json").read_text())
    [same] = update_skills(installer, "demo", options)
    assert (same.ok, same.message, same.changed) == (True, "demo already at 1.0.0", False)
    assert hub.state.routes().count("/api/v1/download") == 1  # a current skill is not fetched again
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    [result] = update_skills(installer, "demo", options)
    assert (result.ok, result.message, result.changed) == (
        True,
        "Updated demo: 1.0.0 -> 1.1.0",
        True,
    )
    assert visible(installed) == DEMO_V2
    origin = json.loads((installed / ".clawhub" / "origin.json").read_text())
    assert origin["installedVersion"] == "1.1.0"
    assert origin["installedAt"] == origin_before["installedAt"]  # kept, as the CLI keeps it
    assert lock_of(workdir)["demo"]["version"] == "1.1.0"
    assert [v.drift.state for v in verify_skills(workdir)] == ["clean"]


def test_update_refuses_a_local_edit_and_verify_names_it(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions, installed: Path
) -> None:
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    write_skill(installed, "demo", "Mine now.", body="")
    (installed / "notes.md").write_text("my notes")
    (installed / "references" / "a.md").unlink()
    [result] = update_skills(installer, "demo", options)
    assert not result.ok
    assert result.code == "registry.local-changes"
    assert result.message.startswith(
        'Skill "demo" has local changes (1 changed, 1 added, 1 removed:'
    )
    assert (installed / "notes.md").read_text() == "my notes"
    # To show the edit and what 1.1.0 changes, both versions were downloaded (not installed).
    assert result.available == "1.1.0" and "updating to 1.1.0 would" in result.message
    downloads = [
        r["query"].get("version") for r in hub.state.requests if r["path"] == "/api/v1/download"
    ]
    assert downloads == ["1.0.0", "1.0.0", "1.1.0"], downloads  # install, then the two
    assert result.local_diff is not None and result.update_diff is not None
    assert "+++ demo/notes.md\n" in result.local_diff
    assert "--- demo@1.0.0/references/a.md\n+++ /dev/null\n" in result.local_diff
    assert "+++ demo@1.1.0/references/b.md\n" in result.update_diff
    [verified] = verify_skills(workdir)
    assert verified.drift.state == "modified"
    assert verified.drift.changed == ("SKILL.md",)
    assert verified.drift.added == ("notes.md",)
    assert verified.drift.removed == ("references/a.md",)
    assert verified.line() == (
        "✗ demo (clawhub 1.0.0): modified "
        "(1 changed, 1 added, 1 removed: SKILL.md, notes.md, references/a.md)"
    )
    [forced] = update_skills(
        installer, "demo", InstallOptions(state_dir=options.state_dir, force=True)
    )
    assert forced.ok and forced.message == "Updated demo: 1.0.0 -> 1.1.0"
    assert visible(installed) == DEMO_V2


def test_dot_files_and_ignored_files_are_not_drift(
    installer: Installer, workdir: Workdir, options: InstallOptions, installed: Path
) -> None:
    (installed / ".DS_Store").write_bytes(b"\0")
    (installed / "node_modules").mkdir()
    (installed / "node_modules" / "x.js").write_text("x")
    [verified] = verify_skills(workdir)
    assert verified.drift.state == "clean"


def test_update_all_and_the_messages_of_openclaw(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions, tmp_path: Path
) -> None:
    assert update_skills(installer, None, options) == []
    [missing] = update_skills(installer, "ghost", options)
    assert missing.message == 'Skill "ghost" is not tracked as a ClawHub install.'
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    hub.state.publish("other", "2.0.0", DEMO_V1)
    installer.install("demo", options)
    installer.install("other", options)
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    del hub.state.skills[("bar-owner", "other")]
    results = update_skills(installer, None, options)
    assert [r.message for r in results if r.ok] == ["Updated demo: 1.0.0 -> 1.1.0"]
    [failed] = [r for r in results if not r.ok]
    assert failed.name == "other"  # one failure does not stop the others
    assert failed.message == f'Skill "other" not found on {hub.url}.'


def as_openclaw_2026_4(workdir: Workdir, installed: Path, *drop: str) -> None:
    """Strip skillbook's records to what OpenClaw 2026.4 writes (no fingerprint of any
    kind: neither the CLI's nor 2026.9's tree digest, no manifest)."""
    tracked = ("fingerprint", "artifact", "skillFile", "fileTreeSha256", *drop)
    origin = installed / ".clawhub" / "origin.json"
    data = json.loads(origin.read_text())
    origin.write_text(json.dumps({k: v for k, v in data.items() if k not in tracked}, indent=2))
    lock = workdir.root / ".clawhub" / "lock.json"
    data = json.loads(lock.read_text())
    data["skills"]["demo"] = {k: data["skills"]["demo"][k] for k in ("version", "installedAt")}
    lock.write_text(json.dumps(data, indent=2))
    (installed / ".skillbook" / "manifest.json").unlink()


def test_a_skill_installed_by_openclaw_without_fingerprint(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions, installed: Path
) -> None:
    # What OpenClaw 2026.4 writes: no fingerprint, no manifest, lock {version, installedAt}.
    as_openclaw_2026_4(workdir, installed, "ownerHandle")
    [verified] = verify_skills(workdir)
    assert verified.drift.state == "unknown"
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    # The registry's /resolve recognises the files as 1.0.0: safe to update.
    [result] = update_skills(installer, "demo", options)
    assert result.ok and result.message == "Updated demo: 1.0.0 -> 1.1.0"
    assert "/api/v1/resolve" in hub.state.routes()


def test_no_fingerprint_and_no_resolve_route_needs_force(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions, installed: Path
) -> None:
    as_openclaw_2026_4(workdir, installed)
    hub.state.resolve_route = False
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    [result] = update_skills(installer, "demo", options)
    assert not result.ok and "cannot be detected" in result.message
    [forced] = update_skills(
        installer, "demo", InstallOptions(state_dir=options.state_dir, force=True)
    )
    assert forced.ok


def test_update_uses_the_registry_recorded_in_origin(
    hub: ClawHub, workdir: Workdir, options: InstallOptions, installed: Path
) -> None:
    from skillbook.distribution.registry.endpoint import Endpoint

    hub.state.publish("demo", "1.1.0", DEMO_V2)
    elsewhere = Installer(workdir, Endpoint("http://127.0.0.1:9", token="secret-token"))
    [result] = update_skills(elsewhere, "demo", options)
    assert result.ok and result.version == "1.1.0"
    # The endpoint's token is never sent to another registry.
    assert all("Authorization" not in r["headers"] for r in hub.state.requests)


def test_legacy_clawdhub_files_are_read(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions, installed: Path
) -> None:
    (workdir.root / ".clawhub").rename(workdir.root / ".clawdhub")
    (installed / ".clawhub").rename(installed / ".clawdhub")
    assert [v.drift.state for v in verify_skills(workdir)] == ["clean"]
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    [result] = update_skills(installer, "demo", options)
    assert result.ok
    # Writes go to .clawhub; the legacy lock's entries come along.
    assert lock_of(workdir)["demo"]["version"] == "1.1.0"


def test_a_malformed_lock_is_never_overwritten(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    lock = workdir.root / ".clawhub" / "lock.json"
    lock.parent.mkdir()
    lock.write_text('{"version": 2, "skills": {"keep": {}}}')
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    with pytest.raises(RegistryError) as info:
        installer.install("demo", options)
    assert info.value.code == "registry.lock-malformed"
    assert lock.read_text() == '{"version": 2, "skills": {"keep": {}}}'


def test_remove_cleans_the_lockfile(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions, installed: Path
) -> None:
    hub.state.publish("other", "1.0.0", DEMO_V1)
    installer.install("other", options)
    removed = remove_skill(workdir, "demo")
    assert removed.target == installed and not installed.exists()
    assert list(lock_of(workdir)) == ["other"]
    assert sorted(p.name for p in (workdir.root / "skills").iterdir()) == ["other"]
    mine = workdir.root / "skills" / "mine"
    write_skill(mine, description="Mine.", body="")
    with pytest.raises(RegistryError) as info:
        remove_skill(workdir, "mine")
    assert info.value.code == "registry.not-tracked"
    assert mine.exists()


def test_an_owner_folder_of_the_clawhub_cli(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions, installed: Path
) -> None:
    # `clawhub install @alice/demo` keeps the skill in skills/@alice/demo, key "@alice/demo".
    owner_dir = workdir.root / "skills" / "@bar-owner"
    owner_dir.mkdir()
    installed.rename(owner_dir / "demo")
    lock = json.loads((workdir.root / ".clawhub" / "lock.json").read_text())
    lock["skills"] = {"@bar-owner/demo": lock["skills"]["demo"]}
    (workdir.root / ".clawhub" / "lock.json").write_text(json.dumps(lock))
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    [result] = update_skills(installer, None, options)
    assert result.ok and result.message == "Updated @bar-owner/demo: 1.0.0 -> 1.1.0"
    assert visible(owner_dir / "demo") == DEMO_V2
    assert lock_of(workdir)["@bar-owner/demo"]["version"] == "1.1.0"
    assert sorted(p.name for p in owner_dir.iterdir()) == ["demo"]
    assert [v.drift.state for v in verify_skills(workdir)] == ["clean"]


@pytest.mark.parametrize("kind", ["file", "fifo", "loop"])
def test_a_skills_path_that_is_not_a_folder_is_a_registry_error(tmp_path: Path, kind: str) -> None:
    """`skills` as a file, a FIFO or a link to itself stopped verify, remove and every
    other registry command with FileExistsError (found by the crash hunt)."""
    skills = tmp_path / "skills"
    if kind == "file":
        skills.write_text("not a folder")
    elif kind == "fifo":
        os.mkfifo(skills)
    else:
        skills.symlink_to("skills")
    workdir = Workdir(tmp_path)
    with pytest.raises(RegistryError) as raised:
        verify_skills(workdir, ())
    assert raised.value.code == "registry.workdir-unusable"
    assert str(skills) in raised.value.message
    with pytest.raises(RegistryError, match="cannot use"):
        remove_skill(workdir, "demo")
    assert skills.is_symlink() or skills.exists()
