"""The steps around a package-manager installer: find brew, install a missing uv or go
(spec §8.3 steps 9-12).

Input: a spec, its argv (from :mod:`skillbook.distribution.install.argv`), a
:class:`~skillbook.distribution.install.machine.Machine` and a PATH lookup. Output: the ordered
:class:`~skillbook.distribution.install.plan.Step` list that OpenClaw would run (bootstrap,
``sudo -n true`` probe, best-effort ``apt-get update``, ``brew --prefix`` for
``GOBIN``, the install), or an :class:`~skillbook.distribution.install.result.InstallError`
(``install.tool-missing``) with OpenClaw's message when a tool is missing and
cannot be bootstrapped. Nothing runs here: the plan is data, printed by
``--dry-run`` and executed by :mod:`skillbook.distribution.install.execute`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from skillbook.distribution import InstallError
from skillbook.distribution.install.machine import Machine
from skillbook.distribution.install.plan import Role, Step
from skillbook.model import InstallSpec
from skillbook.pipeline.gating.gate import BinaryLookup

__all__ = [
    "BREW_PREFIX_TIMEOUT_MS",
    "GO_INSTALL_URL",
    "SUDO_PROBE_TIMEOUT_MS",
    "UV_INSTALL_URL",
    "AptMessages",
    "apt_steps",
    "brew_missing_message",
    "plan_command_steps",
]

SUDO_PROBE_TIMEOUT_MS: Final = 5_000
BREW_PREFIX_TIMEOUT_MS: Final = 30_000
GO_INSTALL_URL: Final = "https://go.dev/doc/install"
UV_INSTALL_URL: Final = "https://docs.astral.sh/uv/getting-started/installation/"


@dataclass(frozen=True, slots=True)
class AptMessages:
    """The messages of an apt install of ``what`` (OpenClaw's wording for go)."""

    what: str
    manual: str

    @property
    def no_sudo(self) -> str:
        return (
            f"{self.what} not installed — apt-get is available but sudo is not installed. "
            f"Install manually: {self.manual}"
        )

    @property
    def sudo_unusable(self) -> str:
        return (
            f"{self.what} not installed — apt-get is available but sudo is not usable "
            f"(missing or requires a password). Install manually: {self.manual}"
        )

    @property
    def failed(self) -> str:
        return f"{self.what} not installed — automatic install via apt failed. Install manually: {self.manual}"


GO_APT: Final = AptMessages("go", GO_INSTALL_URL)


def brew_missing_message(spec: InstallSpec, platform: str) -> str:
    """``brew not installed — …``; on Linux it suggests the system package manager."""
    formula = spec.formula or "this package"
    if platform == "linux":
        return (
            "brew not installed — Homebrew is not installed. Install it from https://brew.sh "
            f'or install "{formula}" manually using your system package manager (e.g. apt, dnf, pacman).'
        )
    return "brew not installed — Homebrew is not installed. Install it from https://brew.sh"


def apt_steps(
    packages: tuple[str, ...],
    *,
    machine: Machine,
    bins: BinaryLookup,
    timeout_ms: int,
    messages: AptMessages,
    role: Role,
) -> list[Step]:
    """``apt-get install -y PKG…``: directly as root, else through ``sudo`` after a
    ``sudo -n true`` probe (a password prompt would hang an unattended install).
    """
    install = ("apt-get", "install", "-y", *packages)
    update = ("apt-get", "update", "-qq")
    failure = messages.failed if role is not Role.INSTALL else None
    if machine.is_root:
        return [
            Step(update, Role.BEST_EFFORT, timeout_ms),
            Step(install, role, timeout_ms, failure),
        ]
    if not bins.has("sudo"):
        raise InstallError("install.tool-missing", messages.no_sudo)
    return [
        Step(("sudo", "-n", "true"), Role.PROBE, SUDO_PROBE_TIMEOUT_MS, messages.sudo_unusable),
        Step(("sudo", *update), Role.BEST_EFFORT, timeout_ms),
        Step(("sudo", *install), role, timeout_ms, failure),
    ]


def plan_command_steps(
    spec: InstallSpec,
    argv: tuple[str, ...],
    *,
    machine: Machine,
    bins: BinaryLookup,
    timeout_ms: int,
) -> list[Step]:
    """The steps OpenClaw's ``installSkill`` runs for a brew, node, go or uv spec."""
    brew = machine.brew_executable(bins)
    if spec.kind == "brew" and brew is None:
        raise InstallError("install.tool-missing", brew_missing_message(spec, machine.platform))
    steps: list[Step] = []
    if spec.kind == "uv" and not bins.has("uv"):
        if brew is None:
            raise InstallError(
                "install.tool-missing", f"uv not installed — install manually: {UV_INSTALL_URL}"
            )
        steps.append(
            Step((brew, "install", "uv"), Role.BOOTSTRAP, timeout_ms, "Failed to install uv (brew)")
        )
    if spec.kind == "go" and not bins.has("go"):
        if brew is not None:
            steps.append(
                Step(
                    (brew, "install", "go"),
                    Role.BOOTSTRAP,
                    timeout_ms,
                    "Failed to install go (brew)",
                )
            )
        elif bins.has("apt-get"):
            steps += apt_steps(
                ("golang-go",),
                machine=machine,
                bins=bins,
                timeout_ms=timeout_ms,
                messages=GO_APT,
                role=Role.BOOTSTRAP,
            )
        else:
            raise InstallError(
                "install.tool-missing", f"go not installed — install manually: {GO_INSTALL_URL}"
            )
    if spec.kind == "brew" and brew is not None and argv[0] == "brew":
        argv = (brew, *argv[1:])
    if spec.kind == "go" and brew is not None:
        steps.append(Step((brew, "--prefix"), Role.GOBIN, min(timeout_ms, BREW_PREFIX_TIMEOUT_MS)))
    steps.append(Step(argv, Role.INSTALL, timeout_ms))
    return steps
