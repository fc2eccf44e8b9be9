"""The same registry, three clients: OpenClaw 2026.4.12's own ClawHub install code
(driven from the oracle's ``node_modules``), the real ``clawhub`` CLI 0.23.3 (installed
from npm into ``.cache/clawhub-cli`` on first use) and skillbook. The files each writes
are compared byte for byte (``installedAt`` aside), and each one updates what another
installed (clawhub-api.md §5, spec §8.6)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cached_tools import CLAWHUB_CACHE, CLAWHUB_VERSION, npm_cli
from factories import skill_text, write_skill
from oracle_support import Oracle

from distribution.registry.clawhub_server import ClawHub
from distribution.registry.conftest import DEMO_V1, DEMO_V2
from skillbook.distribution.registry.endpoint import Endpoint
from skillbook.distribution.registry.installer import Installer, InstallOptions
from skillbook.distribution.registry.updater import update_skills
from skillbook.distribution.registry.verify import verify_skills
from skillbook.distribution.registry.workdir import Workdir

_WHEN = re.compile(r'"installedAt": \d+')
#: What skillbook records for OpenClaw 2026.9 beside the CLI's fields (compared with
#: 2026.9 itself in test_registry_oracle9.py).
OC9_ORIGIN = ("artifact", "skillFile", "fileTreeSha256")
OC9_LOCK = ("registry", *OC9_ORIGIN, "verification")

DRIVER = """
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
const [dist, op, workspaceDir, slug, baseUrl] = process.argv.slice(2);
const file = readdirSync(dist).find(
  (f) => f.startsWith("skills-clawhub-") && readFileSync(path.join(dist, f), "utf8").includes("installSkillFromClawHub as t"),
);
const mod = await import(path.join(dist, file));
const logger = { info: () => {}, warn: () => {} };
const result = op === "install"
  ? await mod.t({ workspaceDir, slug, baseUrl, logger })
  : await mod.i({ workspaceDir, slug, baseUrl, logger });
console.log(JSON.stringify(result));
"""


def openclaw(oracle: Oracle, tmp: Path, op: str, workspace: Path, slug: str, base: str) -> Any:
    driver = tmp / "driver.mjs"
    driver.write_text(DRIVER)
    dist = oracle.root / "node_modules" / "openclaw" / "dist"
    proc = subprocess.run(
        ["node", str(driver), str(dist), op, str(workspace), slug, base],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(proc.stdout)


def without(text: str, *keys: str) -> str:
    data = json.loads(text)
    for entry in (data, *data.get("skills", {}).values()):
        for key in keys:
            entry.pop(key, None)
    return _WHEN.sub('"installedAt": 0', json.dumps(data, indent=2) + "\n")


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).parts[0].startswith(".")
    }


def ours(hub: ClawHub, root: Path, state: Path) -> Installer:
    root.mkdir(exist_ok=True)
    return Installer(Workdir(root), Endpoint(hub.url))


def test_openclaw_2026_4_and_skillbook_write_the_same_files(
    oracle: Oracle, hub: ClawHub, tmp_path: Path
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    theirs, mine = tmp_path / "openclaw", tmp_path / "skillbook"
    theirs.mkdir()
    result = openclaw(oracle, tmp_path, "install", theirs, "demo", hub.url)
    assert result["ok"] is True and result["version"] == "1.0.0"
    ours(hub, mine, tmp_path / "s").install("demo", InstallOptions(state_dir=tmp_path / "s"))
    skill_t, skill_m = theirs / "skills" / "demo", mine / "skills" / "demo"
    assert files(skill_t) == files(skill_m) == DEMO_V1
    # OpenClaw 2026.4 writes the CLI's keys minus ownerHandle and fingerprint, same order.
    origin_t = (skill_t / ".clawhub" / "origin.json").read_text()
    origin_m = (skill_m / ".clawhub" / "origin.json").read_text()
    assert without(origin_t) == without(origin_m, "ownerHandle", "fingerprint", *OC9_ORIGIN)
    lock_t = (theirs / ".clawhub" / "lock.json").read_text()
    lock_m = (mine / ".clawhub" / "lock.json").read_text()
    assert without(lock_t) == without(lock_m, "ownerHandle", *OC9_LOCK)


def test_each_updates_what_the_other_installed(
    oracle: Oracle, hub: ClawHub, tmp_path: Path
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    by_openclaw, by_skillbook = tmp_path / "a", tmp_path / "b"
    by_openclaw.mkdir()
    openclaw(oracle, tmp_path, "install", by_openclaw, "demo", hub.url)
    ours(hub, by_skillbook, tmp_path / "s").install(
        "demo", InstallOptions(state_dir=tmp_path / "s")
    )
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    # skillbook updates OpenClaw's install (no fingerprint: /resolve vouches for 1.0.0).
    installer = ours(hub, by_openclaw, tmp_path / "s")
    assert [v.drift.state for v in verify_skills(installer.workdir)] == ["unknown"]
    [result] = update_skills(installer, "demo", InstallOptions(state_dir=tmp_path / "s"))
    assert result.message == "Updated demo: 1.0.0 -> 1.1.0"
    # OpenClaw updates skillbook's install, from the registry recorded in origin.json.
    [theirs] = openclaw(oracle, tmp_path, "update", by_skillbook, "demo", "http://127.0.0.1:9")
    assert (
        theirs["ok"] is True
        and theirs["previousVersion"] == "1.0.0"
        and theirs["version"] == "1.1.0"
    )
    assert files(by_skillbook / "skills" / "demo") == DEMO_V2
    # Non-registry installs stay out of OpenClaw's lock: its `update --all` never sees them.
    source = tmp_path / "mine"
    write_skill(source, description="Mine.", body="")
    ours(hub, by_skillbook, tmp_path / "s").install(
        str(source), InstallOptions(state_dir=tmp_path / "s")
    )
    assert list(json.loads((by_skillbook / ".clawhub/lock.json").read_text())["skills"]) == ["demo"]


@pytest.fixture(scope="session")
def clawhub_cli() -> Iterator[Path]:
    """The real ``clawhub`` CLI's entry script, installed from npm on first use (never at
    collection) by the installer the registry's real-client tests use."""
    found = npm_cli(
        CLAWHUB_CACHE, "clawhub", CLAWHUB_VERSION, Path("clawhub", "bin", "clawdhub.js")
    )
    if isinstance(found, str):
        pytest.skip(found)
    yield found


def cli(
    entry: Path, hub: ClawHub, home: Path, workdir: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "CLAWHUB_REGISTRY": hub.url,
        "CLAWHUB_DISABLE_TELEMETRY": "1",
        "NO_COLOR": "1",
    }
    return subprocess.run(
        ["node", str(entry), "--workdir", str(workdir), "--no-input", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


@pytest.mark.oracle
def test_the_clawhub_cli_and_skillbook_write_the_same_files(
    clawhub_cli: Path, hub: ClawHub, tmp_path: Path
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    theirs, mine = tmp_path / "cli", tmp_path / "skillbook"
    theirs.mkdir()
    done = cli(clawhub_cli, hub, tmp_path / "home", theirs, "install", "demo")
    assert done.returncode == 0, done.stderr
    ours(hub, mine, tmp_path / "s").install("demo", InstallOptions(state_dir=tmp_path / "s"))
    skill_t, skill_m = theirs / "skills" / "demo", mine / "skills" / "demo"
    assert files(skill_t) == files(skill_m)
    # Byte for byte, fingerprint and ownerHandle included (only the time differs), once
    # OpenClaw 2026.9's fields, which the CLI's schema lets through, are set aside.
    for rel in (".clawhub/origin.json",):
        origin_m = without((skill_m / rel).read_text(), *OC9_ORIGIN)
        assert without((skill_t / rel).read_text()) == origin_m
    lock_m = without((mine / ".clawhub/lock.json").read_text(), *OC9_LOCK)
    assert without((theirs / ".clawhub/lock.json").read_text()) == lock_m
    # The CLI's update recognises skillbook's install (fingerprint → /resolve) …
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    updated = cli(clawhub_cli, hub, tmp_path / "home", mine, "update", "demo")
    assert updated.returncode == 0, updated.stderr
    assert files(skill_m) == DEMO_V2
    # … and skillbook's the CLI's; a locally edited one is refused by both.
    installer = ours(hub, theirs, tmp_path / "s")
    assert [v.drift.state for v in verify_skills(installer.workdir)] == ["clean"]
    write_skill(skill_t, "demo", "edited", body="")
    [refused] = update_skills(installer, "demo", InstallOptions(state_dir=tmp_path / "s"))
    assert not refused.ok and refused.code == "registry.local-changes"
    theirs_refused = cli(clawhub_cli, hub, tmp_path / "home", theirs, "update", "demo")
    assert "local changes (no match)" in theirs_refused.stdout + theirs_refused.stderr


@pytest.mark.oracle
def test_pins_hold_across_the_clawhub_cli_and_skillbook(
    clawhub_cli: Path, hub: ClawHub, tmp_path: Path
) -> None:
    from skillbook.distribution.registry.pins import set_pin

    other = {**DEMO_V1, "SKILL.md": skill_text("other", "Other.", body="").encode()}
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    hub.state.publish("other", "1.0.0", other)
    root = tmp_path / "ws"
    installer = ours(hub, root, tmp_path / "s")
    for slug in ("demo", "other"):
        installer.install(slug, InstallOptions(state_dir=tmp_path / "s"))
    set_pin(installer.workdir, "demo", pinned=True, reason="audited")
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    hub.state.publish("other", "1.1.0", DEMO_V2)
    # The CLI skips the skill skillbook pinned …
    done = cli(clawhub_cli, hub, tmp_path / "home", root, "update", "--all")
    assert done.returncode == 0, done.stderr
    assert "Skipped 1 pinned skill: demo" in done.stdout + done.stderr
    lock = json.loads((root / ".clawhub/lock.json").read_text())["skills"]
    assert (lock["demo"]["version"], lock["other"]["version"]) == ("1.0.0", "1.1.0")
    assert lock["demo"]["pinned"] is True and lock["demo"]["pinReason"] == "audited"
    # … and skillbook honours a pin the CLI set, after the CLI's unpin of the other.
    assert cli(clawhub_cli, hub, tmp_path / "home", root, "unpin", "demo").returncode == 0
    assert cli(clawhub_cli, hub, tmp_path / "home", root, "pin", "other").returncode == 0
    results = update_skills(installer, None, InstallOptions(state_dir=tmp_path / "s"))
    by_name = {r.name: r for r in results}
    assert by_name["other"].skipped and by_name["other"].code == "registry.pinned"
    assert by_name["demo"].message == "Updated demo: 1.0.0 -> 1.1.0"


@pytest.mark.oracle
def test_the_github_content_hash_is_the_clis(clawhub_cli: Path, tmp_path: Path) -> None:
    from skillbook.distribution.fingerprint import github_content_hash

    rows = [
        ("SKILL.md", 12, "AB" * 32),
        ("references/a.md", 3, "cd" * 32),
        ("_meta.json", 0, "ef" * 32),
    ]
    skills = clawhub_cli.parents[1] / "dist" / "skills.js"
    script = tmp_path / "hash.mjs"
    files = [{"path": p, "size": n, "sha256": h} for p, n, h in rows]
    script.write_text(
        f'const m = await import("{skills}");\n'
        f"console.log(m.buildGitHubFolderContentHash({json.dumps(files)}));\n"
    )
    proc = subprocess.run(["node", str(script)], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == github_content_hash(rows)
