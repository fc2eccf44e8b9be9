"""plan_setup / run_setup end to end: choice, scan, trust warning, policy, fallbacks,
status before and after, audit log. Stand-ins on a private PATH; real subprocesses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from factories import write_skill

from distribution.install.archives import Entry, make_zip
from distribution.install.install_support import (  # noqa: F401 (fixtures)
    Server,
    Standins,
    machine_for,
    server_fixture,
    standins_fixture,
)
from skillbook.config.file import Config
from skillbook.distribution.audit import AUDIT_FILE_NAME
from skillbook.distribution.install.download import DownloadOptions
from skillbook.distribution.install.policy import InstallPolicy
from skillbook.distribution.install.run import SetupResult, install_skill, run_setup
from skillbook.distribution.install.setup import SetupOptions, SetupPlan, plan_setup
from skillbook.distribution.netguard import NetworkPolicy
from skillbook.pipeline.book import Loader, SkillBook

#: Stand-in executables and child interpreters are Python processes.
pytestmark = pytest.mark.subprocess

MINER = 'const pool = "stratum+tcp://pool.example:3333";\n'


@dataclass
class World:
    tmp: Path
    standins: Standins
    workspace: Path
    state: Path
    home: Path

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "PATH": str(self.standins.bin_dir),
            "SKILLBOOK_STATE_DIR": str(self.state),
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(self.tmp / "bundled"),
            **extra,
        }

    def skill(self, name: str, metadata: dict[str, Any], *, where: str = "workspace") -> Path:
        root = self.workspace / "skills" if where == "workspace" else self.tmp / where
        return write_skill(root / name, metadata={"openclaw": metadata})

    def book(self, config: dict[str, Any] | None = None) -> SkillBook:
        cfg = Config.from_mapping(config or {})
        return Loader(self.workspace, config=cfg, env=self.env()).load()

    def plan(
        self,
        name: str,
        install_id: str | None = None,
        *,
        config: dict[str, Any] | None = None,
        is_root: bool = False,
        **options: Any,
    ) -> SetupPlan:
        machine = machine_for(self.standins, self.home, is_root=is_root)
        opts = SetupOptions(machine=machine, **options)
        return plan_setup(self.book(config), name, install_id, options=opts)

    def setup(self, name: str, install_id: str | None = None, **kw: Any) -> SetupResult:
        return run_setup(self.plan(name, install_id, **kw))


@pytest.fixture
def world(tmp_path: Path, standins: Standins) -> World:
    for sub in ("workspace/skills", "home", "state", "bundled"):
        (tmp_path / sub).mkdir(parents=True)
    return World(tmp_path, standins, tmp_path / "workspace", tmp_path / "state", tmp_path / "home")


JQ = {"requires": {"bins": ["jq"]}, "install": [{"kind": "brew", "formula": "jq", "bins": ["jq"]}]}
TRUST = (
    'WARNING: Skill "{}" install triggered from non-bundled source "openclaw-workspace". '
    "Verify the install recipe is trusted."
)


def test_brew_install_turns_needs_setup_into_ready(world: World) -> None:
    world.skill("jqtool", JQ)
    world.standins.add("brew", then=world.standins.installs("jq"))
    outcome = world.setup("jqtool")
    assert outcome.result.ok and outcome.result.message == "Installed"
    assert world.standins.argvs() == [["brew", "install", "jq"]]
    assert outcome.plan.before.status == "needs-setup"
    assert outcome.after is not None and outcome.after.status == "ready"
    assert outcome.result.warnings == (TRUST.format("jqtool"),)
    assert outcome.to_json()["status"] == {"before": "needs-setup", "after": "ready"}


def test_bundled_skills_get_no_trust_warning(world: World) -> None:
    world.skill("jqtool", JQ, where="bundled")
    world.standins.add("brew", then=world.standins.installs("jq"))
    outcome = world.setup("jqtool")
    assert outcome.plan.before.source == "openclaw-bundled"
    assert outcome.result.ok and outcome.result.warnings == ()


def test_the_option_info_shows_is_the_default(world: World) -> None:
    world.skill(
        "multi",
        {
            "requires": {"bins": ["tool"]},
            "install": [
                {"kind": "brew", "formula": "tool"},
                {"kind": "node", "package": "tool-cli"},
            ],
        },
    )
    world.standins.add("npm")
    plan = world.plan("multi")
    assert (plan.install_id, plan.label) == ("node-1", "Install tool-cli (npm)")
    assert [s.argv for s in plan.steps] == [
        ("npm", "install", "-g", "--ignore-scripts", "tool-cli")
    ]
    prefer = world.plan("multi", config={"skills": {"install": {"nodeManager": "bun"}}})
    assert prefer.steps[0].argv[0] == "bun"


def test_nothing_runs_when_the_binaries_are_there(world: World) -> None:
    world.skill("jqtool", JQ)
    world.standins.add("jq")
    world.standins.add("brew")
    outcome = world.setup("jqtool")
    assert outcome.result.ok and outcome.result.reason == "install.already-present"
    assert outcome.result.message == "Nothing to install: jq already on PATH"
    assert world.standins.calls() == []
    assert outcome.plan.scan is None


def test_installer_not_found_comes_after_the_scan(world: World) -> None:
    world.skill("jqtool", JQ)
    outcome = world.setup("jqtool", "nope")
    assert outcome.result.message == "Installer not found: nope"
    assert outcome.result.warnings == (TRUST.format("jqtool"),)
    assert outcome.plan.scan is not None


def test_ids_as_info_shows_them_then_openclaws(world: World) -> None:
    world.skill(
        "dl",
        {
            "install": [
                {"kind": "download", "url": "https://example.com/mac.zip", "os": ["darwin"]},
                {"kind": "download", "url": "https://example.com/linux.zip", "os": ["linux"]},
            ]
        },
    )
    shown = world.plan("dl", "download-0")  # the id `info` shows on Linux
    assert shown.download is not None and shown.download.url.endswith("linux.zip")
    openclaw = world.plan("dl", "download-1")  # OpenClaw's id for the same spec
    assert openclaw.download is not None and openclaw.download.url.endswith("linux.zip")
    both = world.plan("dl")
    assert both.download is not None  # one option on Linux


def test_a_spec_for_another_os_is_refused(world: World) -> None:
    world.skill("mac", {"install": [{"id": "m", "kind": "brew", "formula": "x", "os": ["darwin"]}]})
    plan = world.plan("mac", "m")
    assert plan.refusal is not None
    assert (plan.refusal.code, plan.refusal.message) == (
        "install.wrong-os",
        'installer "m" is for darwin, not linux',
    )


def test_several_downloads_need_an_id(world: World) -> None:
    world.skill(
        "two",
        {
            "install": [
                {"id": "runtime", "kind": "download", "url": "https://e.com/a.zip"},
                {"id": "model", "kind": "download", "url": "https://e.com/b.zip"},
            ]
        },
    )
    plan = world.plan("two")
    assert plan.refusal is not None and plan.refusal.code == "install.ambiguous"
    assert (
        plan.refusal.message
        == 'skill "two" has 2 installers for linux; pick one of: runtime, model'
    )


def test_critical_findings_block_with_openclaws_message(world: World) -> None:
    folder = world.skill("miner", JQ)
    (folder / "runner.js").write_text(MINER)
    world.standins.add("brew")
    outcome = world.setup("miner")
    assert outcome.result.message == (
        'Skill "miner" installation blocked: dangerous code patterns detected: '
        f"Possible crypto-mining reference detected ({folder / 'runner.js'}:1)"
    )
    assert outcome.result.reason == "install.scan-blocked"
    assert any("runner.js:1" in w for w in outcome.result.warnings)
    assert world.standins.calls() == []


def test_forcing_needs_a_reason_and_is_audited(world: World) -> None:
    folder = world.skill("miner", JQ)
    (folder / "runner.js").write_text(MINER)
    world.standins.add("brew", then=world.standins.installs("jq"))
    outcome = world.setup("miner", force_reason="reviewed by alice: test fixture")
    assert outcome.result.ok, outcome.result
    assert any(
        "installation forced despite dangerous code patterns via --dangerously-force" in w
        for w in outcome.result.warnings
    )
    assert outcome.audit_file == world.state / AUDIT_FILE_NAME
    lines = outcome.audit_file.read_text().splitlines()
    record = json.loads(lines[-1])
    assert record["reason"] == "reviewed by alice: test fixture"
    assert record["skill"] == "miner" and record["commands"] == [["brew", "install", "jq"]]
    assert [f["rule"] for f in record["findings"]] == ["crypto-mining"]
    (world.standins.bin_dir / "jq").unlink()
    assert world.setup("miner", force_reason="second").result.ok
    assert len(outcome.audit_file.read_text().splitlines()) == 2


def test_policy_refuses_kinds_hosts_and_missing_checksums(world: World) -> None:
    world.skill("jqtool", JQ)
    world.skill("dl", {"install": [{"kind": "download", "url": "https://example.com/t.zip"}]})
    kinds = {"skills": {"install": {"policy": {"allowedKinds": ["node", "download"]}}}}
    plan = world.plan("jqtool", config=kinds)
    assert plan.refusal is not None and plan.refusal.message == (
        'skills.install.policy.allowedKinds does not allow "brew" installers (allowed: download, node)'
    )
    hosts = {"skills": {"install": {"policy": {"allowedDownloadHosts": ["*.github.com"]}}}}
    plan = world.plan("dl", config=hosts)
    assert plan.refusal is not None and plan.refusal.message == (
        "skills.install.policy.allowedDownloadHosts does not allow downloads from "
        '"example.com" (allowed: *.github.com)'
    )
    sha = {"skills": {"install": {"policy": {"requireSha256": True}}}}
    plan = world.plan("dl", config=sha)
    assert plan.refusal is not None and plan.refusal.message == (
        "skills.install.policy.requireSha256 is set and the download of "
        "https://example.com/t.zip has no sha256"
    )
    assert plan.refusal.code == "install.policy-refused"


def test_apt_fallback_through_sudo(world: World) -> None:
    world.skill("jqtool", JQ)
    world.standins.add("apt-get")
    world.standins.add("sudo")
    off = world.plan("jqtool")
    assert off.refusal is not None and off.refusal.message.startswith("brew not installed")
    plan = world.plan("jqtool", fallbacks=("apt",))
    assert plan.fallback == "apt"
    assert [s.argv for s in plan.steps] == [
        ("sudo", "-n", "true"),
        ("sudo", "apt-get", "update", "-qq"),
        ("sudo", "apt-get", "install", "-y", "jq"),
    ]
    assert plan.warnings[-1] == 'brew is not available; installing "jq" with apt as jq'
    result = run_setup(plan).result
    assert result.ok and world.standins.argvs() == [list(s.argv) for s in plan.steps]


def test_apt_fallback_as_root_skips_brew_and_uses_the_skills_own_apt_entry(world: World) -> None:
    world.skill(
        "calendar",
        {
            "requires": {"bins": ["khal"]},
            "install": [
                {"kind": "brew", "formula": "khal", "bins": ["khal"]},
                {"id": "apt", "kind": "apt", "packages": ["vdirsyncer", "khal"], "bins": ["khal"]},
            ],
        },
    )
    world.standins.add("brew")
    world.standins.add("apt-get", then=world.standins.installs("khal", when="argv[0] == 'install'"))
    config = {"skills": {"install": {"allowApt": True}}}
    outcome = run_setup(world.plan("calendar", config=config, is_root=True))
    assert world.standins.argvs() == [
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "vdirsyncer", "khal"],
    ]
    assert outcome.after is not None and outcome.after.status == "ready"


def test_apt_entries_can_be_picked_by_id_only_when_enabled(world: World) -> None:
    world.skill(
        "ii", {"os": ["linux"], "install": [{"id": "apt", "kind": "apt", "packages": ["ii"]}]}
    )
    world.standins.add("apt-get")
    plan = world.plan("ii", "apt")
    assert plan.refusal is not None and plan.refusal.message == (
        'installer "apt" uses apt, which is off: enable it with --fallback apt or skills.install.allowApt'
    )
    default = world.plan("ii")
    assert default.refusal is not None and default.refusal.message == (
        'skill "ii" declares no installer for linux (it has apt installers: enable them with --fallback apt)'
    )
    enabled = world.plan("ii", fallbacks=("apt",), is_root=True)
    assert [s.argv for s in enabled.steps][-1] == ("apt-get", "install", "-y", "ii")


def test_unknown_formula_gets_no_apt_guess(world: World) -> None:
    world.skill("sag", {"install": [{"kind": "brew", "formula": "steipete/tap/sag"}]})
    world.standins.add("apt-get")
    plan = world.plan("sag", fallbacks=("apt",), is_root=True)
    assert plan.refusal is not None and plan.refusal.message.startswith("brew not installed")
    assert 'no apt package is known for brew formula "steipete/tap/sag"' in plan.warnings[-1]


@pytest.mark.parametrize("pipx", [True, False])
def test_pip_fallback_for_uv_packages(world: World, pipx: bool) -> None:
    world.skill("ruffy", {"install": [{"kind": "uv", "package": "ruff==0.6.0"}]})
    if pipx:
        world.standins.add("pipx")
    world.standins.add("python3")
    plan = world.plan("ruffy", fallbacks=("pip",))
    expected = (
        ("pipx", "install", "ruff==0.6.0")
        if pipx
        else ("python3", "-m", "pip", "install", "--user", "ruff==0.6.0")
    )
    assert [s.argv for s in plan.steps] == [expected]
    assert run_setup(plan).result.ok


def test_a_workspace_env_file_never_reaches_the_installer(world: World) -> None:
    world.skill("uvtool", {"install": [{"kind": "uv", "package": "example-package"}]})
    (world.workspace / ".env").write_text("UV_PYTHON=3.8\nPIP_INDEX_URL=http://evil\n")
    world.standins.add("uv")
    assert world.setup("uvtool").result.ok
    call = world.standins.calls()[0]
    assert [call["name"], *call["argv"]] == ["uv", "tool", "install", "example-package"]
    assert "UV_PYTHON" not in call["env"] and "PIP_INDEX_URL" not in call["env"]


def test_download_through_setup_and_the_path_hint(world: World, server: Server) -> None:
    url = server.file("/tool.zip", make_zip([Entry("bin/mytool", b"#!/bin/sh\n", mode=0o755)]))
    world.skill(
        "dl", {"requires": {"bins": ["mytool"]}, "install": [{"kind": "download", "url": url}]}
    )
    options = DownloadOptions(network=NetworkPolicy(allow_private_network=True))
    outcome = world.setup("dl", download=options)
    root = outcome.plan.download.tools_root if outcome.plan.download else None
    assert root == world.state / "tools" / "dl"
    assert outcome.result.message == f"Downloaded and extracted to {root}"
    assert outcome.after is not None and outcome.after.status == "needs-setup"
    assert outcome.hints == (
        f'mytool was installed to {root}/bin, which is not on PATH: export PATH="{root}/bin:$PATH"',
    )


def test_target_escape_is_refused_before_the_network(world: World, server: Server) -> None:
    url = server.file("/tool.zip", make_zip([Entry("a", b"a")]))
    world.skill("dl", {"install": [{"kind": "download", "url": url, "targetDir": "../outside"}]})
    result = world.setup("dl").result
    assert result.message.startswith("Refusing to install outside the skill tools directory.")
    assert result.stderr == result.message and result.reason == "install.target-escape"
    assert server.hits == []


def test_strict_network_guard_by_default(world: World, server: Server) -> None:
    url = server.file("/tool.zip", make_zip([Entry("a", b"a")]))
    world.skill("dl", {"install": [{"kind": "download", "url": url}]})
    assert world.setup("dl").result.message == (
        "Blocked hostname or private/internal/special-use IP address"
    )
    allowed = {"skills": {"install": {"policy": {"allowPrivateNetwork": True}}}}
    assert world.setup("dl", config=allowed).result.ok
    assert InstallPolicy.from_config(Config.from_mapping(allowed)).network().allow_private_network


def test_install_skill_is_openclaws_entry_point(world: World) -> None:
    world.skill("jqtool", JQ)
    world.standins.add("brew", then=world.standins.installs("jq"))
    missing = install_skill(world.workspace, "nope", "brew-0", env=world.env())
    assert (missing.ok, missing.message) == (False, "Skill not found: nope")
    done = install_skill(world.workspace, "jqtool", "brew-0", env=world.env())
    assert done.ok and done.message == "Installed"


def test_the_scan_uses_the_state_dirs_cache(world: World) -> None:
    world.skill("jqtool", JQ)
    first = world.setup("jqtool", "nope")
    cached = list((world.state / "cache" / "scan").rglob("*.json"))
    assert first.plan.scan is not None and cached, "the scan wrote no cache entries"
    again = world.setup("jqtool", "nope")
    assert again.plan.scan is not None
    assert again.plan.scan.files_scanned == first.plan.scan.files_scanned
    assert sorted((world.state / "cache" / "scan").rglob("*.json")) == sorted(cached)
