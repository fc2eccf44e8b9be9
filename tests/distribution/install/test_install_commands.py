"""§8.3 steps 8-14 against real subprocesses: stand-in brew, npm, pnpm, yarn, bun, go,
uv, apt-get and sudo on a private PATH record the exact argv (and env) they get.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from distribution.install.install_support import (
    Standins,
    machine_for,
    standins_fixture,  # noqa: F401 (fixtures)
)
from skillbook.distribution import InstallError
from skillbook.distribution.install.argv import build_install_argv
from skillbook.distribution.install.bootstrap import plan_command_steps
from skillbook.distribution.install.execute import run_steps
from skillbook.distribution.install.machine import Machine
from skillbook.distribution.install.plan import Step
from skillbook.distribution.install.result import InstallResult
from skillbook.model import InstallSpec

#: Stand-in executables and child interpreters are Python processes.
pytestmark = pytest.mark.subprocess
TIMEOUT = 60_000


def plan(
    spec: InstallSpec, machine: Machine, node_manager: str = "npm", timeout_ms: int = TIMEOUT
) -> list[Step]:
    argv = build_install_argv(spec, node_manager=node_manager)
    return plan_command_steps(
        spec, argv, machine=machine, bins=machine.bins(), timeout_ms=timeout_ms
    )


def install(spec: InstallSpec, machine: Machine, node_manager: str = "npm") -> InstallResult:
    try:
        steps = plan(spec, machine, node_manager)
    except InstallError as exc:
        return InstallResult.from_error(exc)
    return run_steps(steps, machine=machine)


@pytest.mark.parametrize(
    ("manager", "argv"),
    [
        ("npm", ["npm", "install", "-g", "--ignore-scripts", "@scope/pkg@1.2.3"]),
        ("pnpm", ["pnpm", "add", "-g", "--ignore-scripts", "@scope/pkg@1.2.3"]),
        ("yarn", ["yarn", "global", "add", "--ignore-scripts", "@scope/pkg@1.2.3"]),
        ("bun", ["bun", "add", "-g", "--ignore-scripts", "@scope/pkg@1.2.3"]),
    ],
)
def test_node_managers_run_their_exact_argv(
    standins: Standins, tmp_path: Path, manager: str, argv: list[str]
) -> None:
    standins.add(manager, stdout="added 1 package\n")
    machine = machine_for(standins, tmp_path)
    result = install(InstallSpec(kind="node", package="@scope/pkg@1.2.3"), machine, manager)
    assert standins.argvs() == [argv]
    assert result == InstallResult(ok=True, message="Installed", stdout="added 1 package", code=0)


def test_npm_gets_funding_notices_off_and_nothing_else(standins: Standins, tmp_path: Path) -> None:
    standins.add("npm")
    machine = machine_for(standins, tmp_path, UV_PYTHON="3.11")
    install(InstallSpec(kind="node", package="left-pad"), machine)
    env = standins.calls()[0]["env"]
    assert env["NPM_CONFIG_FUND"] == "false"
    assert env["UV_PYTHON"] == "3.11"  # the machine's own env, passed through unchanged


def test_brew_install_uses_brew_on_path(standins: Standins, tmp_path: Path) -> None:
    standins.add("brew")
    result = install(
        InstallSpec(kind="brew", formula="python@3.12"), machine_for(standins, tmp_path)
    )
    assert standins.argvs() == [["brew", "install", "python@3.12"]]
    assert result.ok and result.message == "Installed"


def test_brew_found_at_a_known_location_replaces_argv0(standins: Standins, tmp_path: Path) -> None:
    elsewhere = tmp_path / "linuxbrew"
    elsewhere.mkdir()
    brew = Standins(elsewhere, standins.record).add("brew")
    machine = machine_for(standins, tmp_path)
    machine = Machine(platform="linux", env=machine.env, home=tmp_path, brew_locations=(str(brew),))
    steps = plan(InstallSpec(kind="brew", formula="jq"), machine)
    assert [s.argv for s in steps] == [(str(brew), "install", "jq")]
    assert run_steps(steps, machine=machine).ok
    assert standins.argvs() == [["brew", "install", "jq"]]


@pytest.mark.parametrize(
    ("platform", "message"),
    [
        (
            "linux",
            "brew not installed — Homebrew is not installed. Install it from https://brew.sh "
            'or install "jq" manually using your system package manager (e.g. apt, dnf, pacman).',
        ),
        (
            "darwin",
            "brew not installed — Homebrew is not installed. Install it from https://brew.sh",
        ),
    ],
)
def test_brew_missing_message(
    standins: Standins, tmp_path: Path, platform: str, message: str
) -> None:
    machine = machine_for(standins, tmp_path, platform=platform)
    result = install(InstallSpec(kind="brew", formula="jq"), machine)
    assert (result.ok, result.message, result.reason) == (False, message, "install.tool-missing")
    assert standins.calls() == []


def test_uv_runs_its_argv_with_the_default_environment(standins: Standins, tmp_path: Path) -> None:
    standins.add("uv")
    machine = machine_for(standins, tmp_path)
    result = install(InstallSpec(kind="uv", package="example-package"), machine)
    assert result.ok
    call = standins.calls()[0]
    assert [call["name"], *call["argv"]] == ["uv", "tool", "install", "example-package"]
    # Exactly the machine's environment: no UV_*/PIP_*/PYTHONPATH overrides were added.
    assert {k: v for k, v in call["env"].items() if k in machine.environ} == dict(machine.environ)
    added = set(call["env"]) - set(machine.environ)
    assert not {k for k in added if k.startswith(("UV_", "PIP_")) or k == "PYTHONPATH"}


def test_uv_missing_is_bootstrapped_with_brew(standins: Standins, tmp_path: Path) -> None:
    standins.add("brew", then=standins.installs("uv"))
    result = install(InstallSpec(kind="uv", package="ruff==0.6.0"), machine_for(standins, tmp_path))
    assert result.ok, result
    assert standins.argvs() == [["brew", "install", "uv"], ["uv", "tool", "install", "ruff==0.6.0"]]


def test_uv_bootstrap_failure(standins: Standins, tmp_path: Path) -> None:
    standins.add("brew", code=1, stderr="Error: no bottle for uv\n")
    result = install(InstallSpec(kind="uv", package="ruff"), machine_for(standins, tmp_path))
    assert (result.message, result.stderr, result.code) == (
        "Failed to install uv (brew)",
        "Error: no bottle for uv",
        1,
    )
    assert standins.argvs() == [["brew", "install", "uv"]]


def test_uv_missing_without_brew_points_to_astral_and_runs_nothing(
    standins: Standins, tmp_path: Path
) -> None:
    result = install(InstallSpec(kind="uv", package="ruff"), machine_for(standins, tmp_path))
    assert result.message == (
        "uv not installed — install manually: https://docs.astral.sh/uv/getting-started/installation/"
    )
    assert standins.calls() == []


def test_go_via_brew_sets_gobin_from_brew_prefix(standins: Standins, tmp_path: Path) -> None:
    prefix = tmp_path / "homebrew"
    standins.add(
        "brew",
        then=f"if argv == ['--prefix']:\n    print({str(prefix)!r})\n"
        + standins.installs("go", when="argv == ['install', 'go']"),
    )
    result = install(
        InstallSpec(kind="go", module="example.com/tool/cmd@v1.2.3"),
        machine_for(standins, tmp_path),
    )
    assert result.ok, result
    assert standins.argvs() == [
        ["brew", "install", "go"],
        ["brew", "--prefix"],
        ["go", "install", "example.com/tool/cmd@v1.2.3"],
    ]
    assert standins.calls()[-1]["env"]["GOBIN"] == str(prefix / "bin")


def test_go_gobin_falls_back_to_homebrew_prefix(standins: Standins, tmp_path: Path) -> None:
    standins.add("brew", code=1)
    standins.add("go")
    machine = machine_for(standins, tmp_path, HOMEBREW_PREFIX=str(tmp_path / "hb"))
    result = install(InstallSpec(kind="go", module="example.com/x@v1.0.0"), machine)
    assert result.ok
    assert standins.argvs() == [["brew", "--prefix"], ["go", "install", "example.com/x@v1.0.0"]]
    assert standins.calls()[-1]["env"]["GOBIN"] == str(tmp_path / "hb" / "bin")


def test_go_without_brew_as_root_uses_apt(standins: Standins, tmp_path: Path) -> None:
    standins.add("apt-get", then=standins.installs("go", when="argv[0] == 'install'"))
    machine = machine_for(standins, tmp_path, is_root=True)
    result = install(InstallSpec(kind="go", module="example.com/x@v1.0.0"), machine)
    assert result.ok, result
    assert standins.argvs()[:2] == [
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "golang-go"],
    ]


def test_go_via_sudo_apt_probes_first(standins: Standins, tmp_path: Path) -> None:
    standins.add("apt-get")
    standins.add("sudo")
    standins.add("go")
    machine = machine_for(standins, tmp_path, is_root=False)
    # go is on PATH here, so no bootstrap: remove it and run again to see the apt path.
    (standins.bin_dir / "go").unlink()
    steps = plan(InstallSpec(kind="go", module="example.com/x@v1.0.0"), machine)
    assert [(s.argv, s.role.value, s.timeout_ms) for s in steps] == [
        (("sudo", "-n", "true"), "probe", 5_000),
        (("sudo", "apt-get", "update", "-qq"), "best-effort", TIMEOUT),
        (("sudo", "apt-get", "install", "-y", "golang-go"), "bootstrap", TIMEOUT),
        (("go", "install", "example.com/x@v1.0.0"), "install", TIMEOUT),
    ]
    result = run_steps(steps, machine=machine)
    # The stand-in sudo records but does not run apt-get, so `go` is still missing.
    assert standins.argvs() == [
        ["sudo", "-n", "true"],
        ["sudo", "apt-get", "update", "-qq"],
        ["sudo", "apt-get", "install", "-y", "golang-go"],
    ]
    assert result.message == "Install failed (unknown exit): go: command not found"


def test_go_sudo_missing(standins: Standins, tmp_path: Path) -> None:
    standins.add("apt-get")
    result = install(
        InstallSpec(kind="go", module="example.com/x@v1.0.0"), machine_for(standins, tmp_path)
    )
    assert result.message == (
        "go not installed — apt-get is available but sudo is not installed. "
        "Install manually: https://go.dev/doc/install"
    )
    assert standins.calls() == []


def test_go_sudo_needs_password_runs_no_apt(standins: Standins, tmp_path: Path) -> None:
    standins.add("apt-get")
    standins.add("sudo", code=1, stderr="sudo: a password is required\n")
    result = install(
        InstallSpec(kind="go", module="example.com/x@v1.0.0"), machine_for(standins, tmp_path)
    )
    assert result.message == (
        "go not installed — apt-get is available but sudo is not usable "
        "(missing or requires a password). Install manually: https://go.dev/doc/install"
    )
    assert (result.stderr, result.code) == ("sudo: a password is required", 1)
    assert standins.argvs() == [["sudo", "-n", "true"]]


def test_go_apt_failure(standins: Standins, tmp_path: Path) -> None:
    standins.add("apt-get", code=100, stderr="E: Unable to locate package golang-go\n")
    result = install(
        InstallSpec(kind="go", module="example.com/x@v1.0.0"),
        machine_for(standins, tmp_path, is_root=True),
    )
    assert result.message == (
        "go not installed — automatic install via apt failed. Install manually: https://go.dev/doc/install"
    )
    assert result.code == 100


def test_go_nothing_available(standins: Standins, tmp_path: Path) -> None:
    result = install(
        InstallSpec(kind="go", module="example.com/x@v1.0.0"), machine_for(standins, tmp_path)
    )
    assert result.message == "go not installed — install manually: https://go.dev/doc/install"


def test_failure_summary_prefers_an_error_line_from_stderr(
    standins: Standins, tmp_path: Path
) -> None:
    standins.add(
        "npm",
        code=1,
        stdout="progress...\n",
        stderr="npm warn deprecated\nError: 404 Not Found - GET x\nnpm error A complete log\n",
    )
    result = install(InstallSpec(kind="node", package="nope"), machine_for(standins, tmp_path))
    assert result.message == "Install failed (exit 1): Error: 404 Not Found - GET x"
    assert result.reason == "install.command-failed"
    assert (result.stdout, result.code) == ("progress...", 1)


def test_failure_summary_falls_back_to_stdout(standins: Standins, tmp_path: Path) -> None:
    standins.add("brew", code=2, stdout="Warning: x\nformula   build   failed   badly\nlast line\n")
    result = install(InstallSpec(kind="brew", formula="jq"), machine_for(standins, tmp_path))
    assert result.message == "Install failed (exit 2): formula build failed badly"


def test_a_hanging_installer_is_killed_at_the_timeout(standins: Standins, tmp_path: Path) -> None:
    standins.add("npm", then="import time\ntime.sleep(60)")
    machine = machine_for(standins, tmp_path)
    steps = plan(InstallSpec(kind="node", package="slow"), machine, timeout_ms=1_000)
    result = run_steps(steps, machine=machine)
    assert result.code is None
    assert (
        result.message
        == "Install failed (unknown exit): npm timed out after 1000 ms and was killed"
    )
