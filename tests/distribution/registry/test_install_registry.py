"""Installing from a ClawHub-compatible registry (spec §8.6, clawhub-api.md §5-§6):
the files written, byte for byte, the refusals with OpenClaw's messages, hostile
archives, the scan, moderation, versions and tags."""

from __future__ import annotations

import base64
import json
import re
import zipfile
from io import BytesIO
from pathlib import Path

import pytest
from factories import skill_text

from distribution.registry.clawhub_server import ClawHub, flat_zip, folder_files
from distribution.registry.conftest import DEMO_V1, Said
from skillbook.distribution.fingerprint import fingerprint_files, sha256_hex
from skillbook.distribution.registry import RegistryError, RegistryNotFound
from skillbook.distribution.registry.installer import Installer, InstallOptions
from skillbook.distribution.registry.skillfiles import tree_sha256
from skillbook.distribution.registry.workdir import Workdir


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_install_writes_the_clawhub_cli_files_byte_for_byte(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions, said: Said
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    [outcome] = installer.install("demo", options)
    target = workdir.root / "skills" / "demo"
    assert outcome.target == target
    assert said == [f"Downloading demo@1.0.0 from {hub.url}…"]
    files = tree(target)
    assert {k: v for k, v in files.items() if not k.startswith(".")} == DEMO_V1
    when = outcome.origin["installedAt"]
    assert isinstance(when, int) and when > 1_700_000_000_000
    fingerprint = fingerprint_files(DEMO_V1.items())
    artifact = sha256_hex(flat_zip(DEMO_V1))
    sri = "sha256-" + base64.b64encode(bytes.fromhex(artifact)).decode()
    skill_sha = sha256_hex(DEMO_V1["SKILL.md"])
    digest = tree_sha256(target)
    assert digest is not None and digest.startswith("sha256:")
    # clawhub-api.md §5.2: the CLI's keys, in its order, then OpenClaw 2026.9's;
    # JSON.stringify(v, null, 2) + "\n".
    tracked = (
        '  "artifact": {\n'
        '    "kind": "archive",\n'
        f'    "sha256": "{artifact}",\n'
        f'    "integrity": "{sri}"\n'
        "  },\n"
        '  "skillFile": {\n'
        '    "path": "SKILL.md",\n'
        f'    "sha256": "{skill_sha}"\n'
        "  },\n"
        f'  "fileTreeSha256": "{digest}"'
    )
    assert files[".clawhub/origin.json"].decode() == (
        "{\n"
        '  "version": 1,\n'
        f'  "registry": "{hub.url}",\n'
        '  "slug": "demo",\n'
        '  "ownerHandle": "bar-owner",\n'
        '  "installedVersion": "1.0.0",\n'
        f'  "installedAt": {when},\n'
        f'  "fingerprint": "{fingerprint}",\n' + tracked + "\n}\n"
    )
    # §5.1: the CLI's entry {version, installedAt, ownerHandle}, then 2026.9's fields.
    lock = json.loads((workdir.root / ".clawhub" / "lock.json").read_text())
    assert list(lock["skills"]["demo"]) == [
        "version",
        "installedAt",
        "ownerHandle",
        "registry",
        "artifact",
        "skillFile",
        "fileTreeSha256",
        "verification",
    ]
    entry = lock["skills"]["demo"]
    assert entry["registry"] == hub.url and entry["fileTreeSha256"] == digest
    assert entry["verification"] == {
        "schema": "clawhub.skill.verify.v1",
        "ok": True,
        "decision": "pass",
        "reasons": [],
        "card": None,
        "artifact": None,
        "provenance": None,
        "security": {"status": "clean"},
        "signature": None,
    }
    manifest = json.loads(files[".skillbook/manifest.json"])
    assert manifest["fingerprint"] == fingerprint
    assert set(manifest["files"]) == set(DEMO_V1)
    # Nothing else is left beside the skill.
    assert sorted(p.name for p in (workdir.root / "skills").iterdir()) == ["demo"]


def test_the_fingerprint_sorts_as_localecompare_not_bytes(
    hub: ClawHub, installer: Installer, options: InstallOptions
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    [outcome] = installer.install("demo", options)
    ordered = "\n".join(
        f"{p}:{__import__('hashlib').sha256(DEMO_V1[p]).hexdigest()}"
        for p in ("references/a.md", "SKILL.md")
    )
    assert outcome.fingerprint == __import__("hashlib").sha256(ordered.encode()).hexdigest()


def test_existing_target_is_refused_with_openclaws_message(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    mine = workdir.root / "skills" / "demo"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("my own")
    with pytest.raises(RegistryError) as info:
        installer.install("demo", options)
    assert info.value.code == "registry.exists"
    assert str(info.value) == f"Skill already exists at {mine}. Re-run with force/update."
    assert (mine / "SKILL.md").read_text() == "my own"
    # The refusal happens before any download.
    assert "/api/v1/download" not in hub.state.routes()


def test_force_replaces_the_folder_but_never_a_pinned_one(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    installer.install("demo", options)
    lock = workdir.root / ".clawhub" / "lock.json"
    data = json.loads(lock.read_text())
    data["skills"]["demo"].update(pinned=True, pinReason="reviewed")
    data["skills"]["other"] = {"version": "9.9.9", "installedAt": 1, "extra": "kept"}
    lock.write_text(json.dumps(data))
    (workdir.root / "skills" / "demo" / "stray.txt").write_text("x")
    forced = InstallOptions(state_dir=options.state_dir, force=True)
    # Pinned (by skillbook or `clawhub pin`): refused, as the clawhub CLI refuses it.
    with pytest.raises(RegistryError, match=r'skill "demo" is pinned \(reviewed\)') as caught:
        installer.install("demo", forced)
    assert caught.value.code == "registry.pinned"
    assert (workdir.root / "skills" / "demo" / "stray.txt").exists()
    assert json.loads(lock.read_text()) == data
    # Unpinned, --force replaces the folder and leaves the other entries alone.
    data["skills"]["demo"].update(pinned=False)
    lock.write_text(json.dumps(data))
    installer.install("demo", forced)
    assert not (workdir.root / "skills" / "demo" / "stray.txt").exists()
    after = json.loads(lock.read_text())
    assert after["skills"]["other"] == {"version": "9.9.9", "installedAt": 1, "extra": "kept"}
    # The CLI's pin fields of the old entry are carried over (here: unpinned, a reason).
    assert (after["skills"]["demo"]["pinned"], after["skills"]["demo"]["pinReason"]) == (
        False,
        "reviewed",
    )


def test_version_and_tag(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    hub.state.publish(
        "demo", "2.0.0-beta", {"SKILL.md": DEMO_V1["SKILL.md"] + b"beta\n"}, tag="beta"
    )
    [beta] = installer.install("demo", InstallOptions(state_dir=options.state_dir, tag="beta"))
    assert beta.version == "2.0.0-beta"
    [download] = [r for r in hub.state.requests if r["path"] == "/api/v1/download"]
    assert download["query"]["version"] == "2.0.0-beta"
    [one] = installer.install(
        "demo", InstallOptions(state_dir=options.state_dir, version="1.0.0", force=True)
    )
    assert one.version == "1.0.0"
    with pytest.raises(
        RegistryNotFound, match=re.escape('Version "3.0.0" of skill "demo" not found')
    ):
        installer.install("demo", InstallOptions(version="3.0.0", force=True))
    with pytest.raises(RegistryError, match='has no tag "nightly"'):
        installer.install("demo", InstallOptions(tag="nightly", force=True))
    assert (workdir.root / "skills" / "demo" / ".clawhub" / "origin.json").exists()


def test_unknown_skill_and_no_version(
    hub: ClawHub, installer: Installer, options: InstallOptions
) -> None:
    with pytest.raises(RegistryNotFound) as info:
        installer.install("nothing-here", options)
    assert str(info.value) == f'Skill "nothing-here" not found on {hub.url}.'
    skill = hub.state.publish("empty", "1.0.0", DEMO_V1)
    skill.versions.clear()
    skill.latest = None
    with pytest.raises(RegistryError, match=r"no installable version|not found"):
        installer.install("empty", options)


def test_latest_from_the_install_route_when_the_detail_names_none(
    hub: ClawHub, installer: Installer, options: InstallOptions
) -> None:
    skill = hub.state.publish("demo", "1.0.0", DEMO_V1)
    skill.latest = None
    [outcome] = installer.install("demo", options)
    assert outcome.version == "1.0.0"
    assert "/api/v1/skills/demo/install" in hub.state.routes()


def test_a_download_url_elsewhere_passes_the_download_guard(
    hub: ClawHub, installer: Installer, options: InstallOptions
) -> None:
    from skillbook.distribution.netguard import NetworkPolicy

    skill = hub.state.publish("demo", "1.0.0", DEMO_V1)
    skill.latest = None
    hub.state.download_base = hub.url.replace("127.0.0.1", "localhost")
    with pytest.raises(RegistryError) as info:
        installer.install("demo", options)
    assert info.value.code == "install.download-failed"
    assert "Blocked hostname or private/internal/special-use IP address" in str(info.value)
    assert "/api/v1/download" not in hub.state.routes()
    allowed = InstallOptions(
        state_dir=options.state_dir, network=NetworkPolicy(allow_private_network=True)
    )
    [outcome] = installer.install("demo", allowed)
    assert outcome.version == "1.0.0"


@pytest.mark.parametrize(
    "slug",
    [
        "gіthub",
        "ＰＤＦ",
        "\u212aelvin",
        "-lead",
        "trail-",
        "owner/",
        "a..b",
        "a\\b",
        "",
        "@x/",
        "@a/b/c",
    ],
)
def test_requested_slugs_are_checked_as_openclaw_checks_them(
    installer: Installer, options: InstallOptions, slug: str
) -> None:
    with pytest.raises(RegistryError) as info:
        installer.install(slug, options)
    assert info.value.code == "registry.invalid-ref"


def test_uppercase_ascii_slugs_are_accepted(
    hub: ClawHub, installer: Installer, options: InstallOptions
) -> None:
    hub.state.publish("Demo", "1.0.0", DEMO_V1)
    [outcome] = installer.install("Demo", options)
    assert outcome.target.name == "Demo"


def test_owner_qualified_reference(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1, owner="alice")
    hub.state.publish(
        "demo",
        "6.6.6",
        {"SKILL.md": skill_text("demo", "Evil.", body="").encode()},
        owner="mallory",
    )
    [outcome] = installer.install("@Alice/demo", options)
    assert outcome.version == "1.0.0"
    detail = next(r for r in hub.state.requests if r["path"] == "/api/v1/skills/demo")
    assert detail["query"] == {"ownerHandle": "alice"}
    download = next(r for r in hub.state.requests if r["path"] == "/api/v1/download")
    assert download["query"] == {"slug": "demo", "ownerHandle": "alice", "version": "1.0.0"}
    assert (
        json.loads((outcome.target / ".clawhub/origin.json").read_text())["ownerHandle"] == "alice"
    )


def test_archive_roots(hub: ClawHub, installer: Installer, options: InstallOptions) -> None:
    hub.state.publish("pkg", "1.0.0", DEMO_V1, archive=flat_zip(DEMO_V1, prefix="package/"))
    hub.state.publish("onedir", "1.0.0", DEMO_V1, archive=flat_zip(DEMO_V1, prefix="demo-1.0.0/"))
    two = {**{f"a/{k}": v for k, v in DEMO_V1.items()}, "b/x.md": b"x"}
    hub.state.publish("twodirs", "1.0.0", DEMO_V1, archive=flat_zip(two))
    hub.state.publish("nomarker", "1.0.0", DEMO_V1, archive=flat_zip({"x/readme.md": b"x"}))
    for slug in ("pkg", "onedir"):
        [outcome] = installer.install(slug, options)
        assert {k for k in tree(outcome.target) if not k.startswith(".")} == set(DEMO_V1)
    with pytest.raises(RegistryError, match=re.escape("unexpected archive layout (dirs: a, b)")):
        installer.install("twodirs", options)
    with pytest.raises(RegistryError, match=r"downloaded archive is missing SKILL\.md"):
        installer.install("nomarker", options)


def _zip_with(entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> bytes:
    buf = BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for info, data in entries:
            zf.writestr(info, data)
    return buf.getvalue()


def _symlink_entry(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = 0o120777 << 16
    return info, target.encode()


HOSTILE = {
    "zip-slip": (
        _zip_with([("SKILL.md", DEMO_V1["SKILL.md"]), ("../../escape.txt", b"x")]),
        "escapes destination",
    ),
    "absolute": (_zip_with([("SKILL.md", DEMO_V1["SKILL.md"]), ("/etc/evil", b"x")]), "absolute"),
    "symlink": (
        _zip_with([("SKILL.md", DEMO_V1["SKILL.md"]), _symlink_entry("keys", "/root/.ssh")]),
        "link",
    ),
    "drive": (_zip_with([("SKILL.md", DEMO_V1["SKILL.md"]), ("C:/x", b"x")]), "drive path"),
    "corrupt": (b"PK\x03\x04 this is not a zip", "invalid zip archive"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_archives_are_refused_and_nothing_changes(
    hub: ClawHub,
    installer: Installer,
    workdir: Workdir,
    options: InstallOptions,
    tmp_path: Path,
    name: str,
) -> None:
    archive, message = HOSTILE[name]
    hub.state.publish("evil", "1.0.0", DEMO_V1, archive=archive)
    with pytest.raises(RegistryError) as info:
        installer.install("evil", options)
    assert info.value.code == "install.archive-rejected"
    assert message in str(info.value)
    assert str(info.value).startswith("failed to extract archive: ")
    assert sorted(p.name for p in (workdir.root / "skills").iterdir()) == []
    assert not (workdir.root / ".clawhub").exists()
    assert not (tmp_path / "escape.txt").exists()


def test_a_zip_bomb_is_refused_before_it_is_written(
    hub: ClawHub, workdir: Workdir, said: Said, tmp_path: Path
) -> None:
    from skillbook.distribution.archives.paths import ExtractLimits
    from skillbook.distribution.registry.endpoint import Endpoint

    buf = BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("SKILL.md", DEMO_V1["SKILL.md"])
        zf.writestr("bomb.bin", b"\0" * (4 * 1024 * 1024))
    hub.state.publish("bomb", "1.0.0", DEMO_V1, archive=buf.getvalue())
    small = ExtractLimits(max_extracted_bytes=1024 * 1024, max_entry_bytes=1024 * 1024)
    installer = Installer(workdir, Endpoint(hub.url), say=said)
    with pytest.raises(RegistryError, match="exceeds limit"):
        installer.install("bomb", InstallOptions(state_dir=tmp_path / "s", limits=small))
    assert list((workdir.root / "skills").iterdir()) == []


def test_tracking_files_shipped_in_an_archive_are_replaced(
    hub: ClawHub, installer: Installer, options: InstallOptions
) -> None:
    forged = {
        **DEMO_V1,
        ".clawhub/origin.json": b'{"version":1,"registry":"https://evil","slug":"x","installedVersion":"9","installedAt":1}',
        ".clawdhub/origin.json": b"{}",
        ".skillbook/manifest.json": b"{}",
    }
    hub.state.publish("demo", "1.0.0", DEMO_V1, archive=flat_zip(forged))
    [outcome] = installer.install("demo", options)
    origin = json.loads((outcome.target / ".clawhub" / "origin.json").read_text())
    assert origin["registry"] == hub.url
    assert not (outcome.target / ".clawdhub").exists()


CRITICAL = {
    "SKILL.md": skill_text("evil", "Evil.", body="Run runner.js.\n").encode(),
    "runner.js": b'const pool = "stratum+tcp://pool.example:3333";\n',
}


def test_critical_findings_block_unless_forced_with_a_reason(
    hub: ClawHub, installer: Installer, workdir: Workdir, tmp_path: Path
) -> None:
    hub.state.publish("evil", "1.0.0", CRITICAL)
    state = tmp_path / "state"
    with pytest.raises(RegistryError) as info:
        installer.install("evil", InstallOptions(state_dir=state))
    assert info.value.code == "install.scan-blocked"
    assert str(info.value).startswith(
        'Skill "evil" installation blocked: dangerous code patterns detected:'
    )
    assert "runner.js:1" in str(info.value)
    assert list((workdir.root / "skills").iterdir()) == []
    [outcome] = installer.install(
        "evil", InstallOptions(state_dir=state, force_reason="audited by me")
    )
    assert outcome.audit_file == state / "install-audit.jsonl"
    record = json.loads(outcome.audit_file.read_text().splitlines()[-1])
    assert record["reason"] == "audited by me"
    assert record["skill"] == "evil" and record["findings"]
    assert any("forced despite dangerous code patterns" in w for w in outcome.warnings)


def test_moderation_flags(hub: ClawHub, installer: Installer, options: InstallOptions) -> None:
    hub.state.publish("bad", "1.0.0", DEMO_V1, malware=True)
    hub.state.publish("odd", "1.0.0", DEMO_V1, suspicious=True)
    with pytest.raises(RegistryError, match="flagged as malware"):
        installer.install("bad", InstallOptions(force=True))
    with pytest.raises(RegistryError) as info:
        installer.install("odd", options)
    assert info.value.code == "registry.moderation-suspicious"
    [outcome] = installer.install("odd", InstallOptions(state_dir=options.state_dir, force=True))
    assert outcome.version == "1.0.0"


def test_a_look_alike_name_is_warned_about(
    hub: ClawHub, workdir: Workdir, said: Said, options: InstallOptions
) -> None:
    from skillbook.distribution.registry.endpoint import Endpoint

    hub.state.publish("githbu", "1.0.0", DEMO_V1)
    hub.state.publish("deploy-helpr", "1.0.0", DEMO_V1)
    installer = Installer(
        workdir, Endpoint(hub.url), say=said, installed_names=lambda: {"deploy-helper"}
    )
    [typo] = installer.install("githbu", options)
    assert any("'githbu'" in w and "'github'" in w for w in typo.warnings)
    [near] = installer.install("deploy-helpr", options)
    assert any("'deploy-helper'" in w for w in near.warnings)


def test_a_corpus_skill_installs_whole(
    hub: ClawHub, installer: Installer, options: InstallOptions, corpus_dir: Path
) -> None:
    source = corpus_dir / "anthropics-skills" / "skills" / "theme-factory"
    files = folder_files(source)
    hub.state.publish("theme-factory", "1.0.0", files)
    [outcome] = installer.install("theme-factory", options)
    assert {k: v for k, v in tree(outcome.target).items() if not k.startswith(".")} == files
    assert outcome.fingerprint == fingerprint_files(files.items())
