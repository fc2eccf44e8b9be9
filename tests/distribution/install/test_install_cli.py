"""``skillbook setup``: plan, consent, run, and the status after (in-process CLI, plus a
real terminal through pexpect for the consent prompt and the progress spinner).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from factories import write_skill

from distribution.install.install_support import (  # noqa: F401 (fixtures)
    Server,
    Standins,
    server_fixture,
    standins_fixture,
)
from skillbook.cli.app import cli
from skillbook.cli.setup_cmd import CONSENT_MESSAGE
from skillbook.distribution.audit import AUDIT_FILE_NAME

#: Stand-in executables and child interpreters are Python processes.
pytestmark = pytest.mark.subprocess

JQ = {"requires": {"bins": ["jq"]}, "install": [{"kind": "brew", "formula": "jq", "bins": ["jq"]}]}


class Env:
    def __init__(self, tmp: Path, standins: Standins, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tmp, self.standins = tmp, standins
        self.workspace = tmp / "ws"
        (self.workspace / "skills").mkdir(parents=True)
        (tmp / "home").mkdir()
        self.state = tmp / "state"
        self.vars = {
            "HOME": str(tmp / "home"),
            "PATH": str(standins.bin_dir),
            "SKILLBOOK_STATE_DIR": str(self.state),
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp / "no-bundled"),
        }
        for key, value in self.vars.items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("SKILLBOOK_CONFIG_PATH", raising=False)
        monkeypatch.delenv("OPENCLAW_CONFIG_PATH", raising=False)

    def skill(self, name: str, metadata: dict[str, Any]) -> Path:
        return write_skill(self.workspace / "skills" / name, metadata={"openclaw": metadata})

    def config(self, data: dict[str, Any]) -> str:
        path = self.tmp / "skillbook.json"
        path.write_text(json.dumps(data))
        return str(path)

    def run(self, *args: str, config: str | None = None) -> Result:
        head = ["--workspace", str(self.workspace)] + (["--config", config] if config else [])
        return CliRunner().invoke(cli, [*head, "setup", *args], catch_exceptions=False)


@pytest.fixture
def env(tmp_path: Path, standins: Standins, monkeypatch: pytest.MonkeyPatch) -> Env:
    return Env(tmp_path, standins, monkeypatch)


def test_dry_run_prints_the_exact_argv_and_runs_nothing(env: Env) -> None:
    env.skill("jqtool", JQ)
    env.standins.add("brew")
    result = env.run("jqtool", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "Skill: jqtool (openclaw-workspace, △ needs setup)" in result.output
    assert "Installer: brew-0 — Install jq (brew)" in result.output
    assert "Scan: 1 file(s), no findings" in result.output
    assert "  $ brew install jq\n" in result.output
    assert result.output.endswith("Dry run: nothing was run.\n")
    assert env.standins.calls() == []


def test_dry_run_json_and_timeout_clamping(env: Env) -> None:
    env.skill("jqtool", JQ)
    env.standins.add("brew")
    out = json.loads(env.run("jqtool", "--dry-run", "--json", "--timeout-ms", "5").output)
    assert out["dryRun"] is True
    assert out["plan"]["steps"] == [
        {"argv": ["brew", "install", "jq"], "role": "install", "timeoutMs": 1000}
    ]
    assert out["plan"]["installId"] == "brew-0" and out["plan"]["status"] == "needs-setup"
    out = json.loads(env.run("jqtool", "--dry-run", "--json", "--timeout-ms", "99999999").output)
    assert out["plan"]["steps"][0]["timeoutMs"] == 900_000


def test_download_dry_run_shows_the_plan(env: Env) -> None:
    url = "https://example.com/releases/tool-1.0.tar.gz"
    env.skill("dl", {"install": [{"kind": "download", "url": url, "stripComponents": 1}]})
    result = env.run("dl", "--dry-run")
    root = env.state / "tools" / "dl"
    assert f"  download {url}\n    to {root / 'tool-1.0.tar.gz'}\n" in result.output
    assert f"    extract (tar.gz, strip 1) into {root}\n" in result.output
    assert "    no sha256 to verify\n" in result.output


def test_without_a_terminal_it_asks_for_yes(env: Env) -> None:
    env.skill("jqtool", JQ)
    env.standins.add("brew")
    result = env.run("jqtool")
    assert result.exit_code == 2
    assert "$ brew install jq" in result.stdout
    assert result.stderr == f"skillbook: {CONSENT_MESSAGE}\n"
    assert env.standins.calls() == []
    out = json.loads(env.run("jqtool", "--json").stdout)
    assert out["result"]["reason"] == "install.consent-required"


def test_yes_runs_and_shows_the_new_status(env: Env) -> None:
    env.skill("jqtool", JQ)
    env.standins.add("brew", then=env.standins.installs("jq"))
    result = env.run("jqtool", "--yes")
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith("\nInstalled\njqtool: △ needs setup → ✓ ready\n")
    assert env.standins.argvs() == [["brew", "install", "jq"]]
    again = env.run("jqtool", "--yes", "--json")
    out = json.loads(again.stdout)
    assert out["result"]["reason"] == "install.already-present" and again.exit_code == 0


def test_json_run(env: Env) -> None:
    env.skill("jqtool", JQ)
    env.standins.add("brew", then=env.standins.installs("jq"))
    out = json.loads(env.run("jqtool", "-y", "--json").stdout)
    assert out["result"]["ok"] is True and out["result"]["message"] == "Installed"
    assert out["status"] == {"before": "needs-setup", "after": "ready"}
    assert out["plan"]["steps"][0]["argv"] == ["brew", "install", "jq"]


def test_failure_exit_code_and_summary(env: Env) -> None:
    env.skill("jqtool", JQ)
    env.standins.add("brew", code=1, stderr='Error: No available formula with the name "jq".\n')
    result = env.run("jqtool", "--yes")
    assert result.exit_code == 1
    assert result.stderr == (
        'skillbook: Install failed (exit 1): Error: No available formula with the name "jq".\n'
    )


def test_blocked_by_the_scan_then_forced_with_a_reason(env: Env) -> None:
    folder = env.skill("miner", JQ)
    (folder / "runner.js").write_text('const pool = "stratum+tcp://pool.example:3333";\n')
    env.standins.add("brew", then=env.standins.installs("jq"))
    blocked = env.run("miner", "--yes")
    assert blocked.exit_code == 1
    assert "installation blocked: dangerous code patterns detected" in blocked.stderr
    assert "--dangerously-force --reason TEXT" in blocked.stderr
    assert env.standins.calls() == []
    assert env.run("miner", "--yes", "--dangerously-force").exit_code == 2
    assert env.run("miner", "--yes", "--reason", "x").exit_code == 2
    forced = env.run("miner", "--yes", "--dangerously-force-unsafe-install", "--reason", "audit me")
    assert forced.exit_code == 0, forced.output
    assert f"Recorded in {env.state / AUDIT_FILE_NAME}" in forced.stdout
    assert json.loads((env.state / AUDIT_FILE_NAME).read_text())["reason"] == "audit me"


def test_unknown_skill_and_policy_refusal(env: Env) -> None:
    missing = env.run("nope", "--yes")
    assert missing.exit_code == 1
    assert missing.stderr.startswith("skillbook: Skill not found: nope.")
    # A near name is suggested, and a folder that did not load says why.
    env.skill("jqtool", JQ)
    near = env.run("jqtol", "--yes")
    assert near.stderr.startswith('skillbook: Skill not found: jqtol. Did you mean "jqtool"?')
    write_skill(env.workspace / "skills" / "broken", description=None)
    why = env.run("broken", "--yes")
    assert why.exit_code == 1
    assert why.stderr.startswith('skillbook: skill "broken" is there but not loaded:\n')
    assert "[parse.missing-description]" in why.stderr
    env.skill("jqtool", JQ)
    config = env.config({"skills": {"install": {"policy": {"allowedKinds": ["download"]}}}})
    refused = env.run("jqtool", "--yes", config=config)
    assert refused.exit_code == 1
    assert 'allowedKinds does not allow "brew" installers' in refused.stderr


def test_bad_policy_config_names_the_key(env: Env) -> None:
    env.skill("jqtool", JQ)
    config = env.config({"skills": {"install": {"policy": {"requireSha256": "yes"}}}})
    result = env.run("jqtool", "--dry-run", config=config)
    assert result.exit_code == 2
    assert "skills.install.policy.requireSha256: expected bool" in result.stderr


def test_fallback_flag(env: Env) -> None:
    env.skill("jqtool", JQ)
    env.standins.add("apt-get", then=env.standins.installs("jq", when="argv[0] == 'install'"))
    env.standins.add("sudo")
    out = json.loads(env.run("jqtool", "--dry-run", "--json", "--fallback", "apt").stdout)
    argvs = [s["argv"] for s in out["plan"]["steps"]]
    expected_install = ["apt-get", "install", "-y", "jq"]
    assert argvs[-1] in (expected_install, ["sudo", *expected_install])
    assert out["plan"]["fallback"] == "apt"


def spawn(env: Env, *args: str) -> Any:
    """``python -m skillbook ARGS`` on a real terminal (pexpect), in the test's sandbox."""
    pexpect = pytest.importorskip("pexpect")
    spawn_env = {**env.vars, "TERM": "xterm", "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = ["-m", "skillbook", "--workspace", str(env.workspace), *args]
    return pexpect.spawn(sys.executable, argv, env=spawn_env, encoding="utf-8", timeout=30)


@pytest.mark.e2e
def test_consent_prompt_and_spinner_in_a_terminal(env: Env) -> None:
    pexpect = pytest.importorskip("pexpect")
    env.skill("jqtool", JQ)
    env.standins.add("brew", then="import time\ntime.sleep(0.5)\n" + env.standins.installs("jq"))
    child = spawn(env, "setup", "jqtool")
    try:
        child.expect_exact("Run this plan? [y/N]:")
        child.sendline("n")
        child.expect_exact("Cancelled: nothing was installed.")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 1 and env.standins.calls() == []
    child = spawn(env, "setup", "jqtool")
    try:
        child.expect_exact("Run this plan? [y/N]:")
        child.sendline("y")
        child.expect_exact("Running brew install jq")
        child.expect_exact("jqtool: △ needs setup → ✓ ready")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert env.standins.argvs() == [["brew", "install", "jq"]]


@pytest.mark.e2e
def test_download_progress_on_a_terminal(env: Env, server: Server) -> None:
    pexpect = pytest.importorskip("pexpect")
    url = server.file("/pkg.bin", os.urandom(3 * 1024 * 1024))
    env.skill("dl", {"install": [{"kind": "download", "url": url}]})
    config = env.config({"skills": {"install": {"policy": {"allowPrivateNetwork": True}}}})
    child = spawn(env, "--config", config, "setup", "dl", "--yes")
    try:
        child.expect_exact("Downloading pkg.bin")
        child.expect_exact(f"Downloaded to {env.state / 'tools' / 'dl' / 'pkg.bin'}")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
