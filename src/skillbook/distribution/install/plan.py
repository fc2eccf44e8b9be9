"""What an install will do, before it does it: commands and download plans as data.

Input: nothing (plain values built by :mod:`skillbook.distribution.install.bootstrap`,
:mod:`skillbook.distribution.install.fallback` and :mod:`skillbook.distribution.install.setup`). Output: frozen
:class:`Step`, :class:`DownloadPlan` and :class:`Refusal` values that ``--dry-run``
prints (and ``--json`` serialises) exactly as they would run, and that
:mod:`skillbook.distribution.install.execute` and :mod:`skillbook.distribution.install.download` carry out.
"""

from __future__ import annotations

import enum
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["DownloadPlan", "Refusal", "Role", "Step", "format_argv"]


class Role(enum.StrEnum):
    """How a step's outcome is used."""

    #: The installer itself; a failure is summarised by ``formatInstallFailureMessage``.
    INSTALL = "install"
    #: Installs a missing tool first (``brew install uv``); a failure stops with its message.
    BOOTSTRAP = "bootstrap"
    #: Must succeed (``sudo -n true``); a failure stops with its message.
    PROBE = "probe"
    #: Run and ignore the outcome (``apt-get update -qq``).
    BEST_EFFORT = "best-effort"
    #: ``brew --prefix``: its output sets ``GOBIN`` for the install step.
    GOBIN = "gobin"


@dataclass(frozen=True, slots=True)
class Step:
    argv: tuple[str, ...]
    role: Role
    timeout_ms: int
    #: The result message when this step fails (BOOTSTRAP and PROBE).
    failure_message: str | None = None
    #: Extra environment for this step only (never the user's whole environment).
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "argv": list(self.argv),
            "role": self.role.value,
            "timeoutMs": self.timeout_ms,
        }
        if self.env:
            out["env"] = dict(self.env)
        return out

    def describe(self) -> str:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        note = {
            Role.BEST_EFFORT: "  # best effort",
            Role.PROBE: "  # must succeed",
            Role.GOBIN: "  # sets GOBIN=<prefix>/bin for go install",
        }.get(self.role, "")
        return f"{env + ' ' if env else ''}{format_argv(self.argv)}{note}"


def format_argv(argv: tuple[str, ...] | list[str]) -> str:
    """A shell-quoted rendering of an argv (display only: nothing is run by a shell)."""
    return shlex.join(argv)


@dataclass(frozen=True, slots=True)
class DownloadPlan:
    url: str
    filename: str
    tools_root: Path
    target_dir: Path
    #: ``tar.gz``, ``tar.bz2``, ``zip``, an explicit other value, or None (unknown).
    archive_type: str | None
    extract: bool
    strip_components: int
    sha256: str | None
    timeout_ms: int

    @property
    def archive_path(self) -> Path:
        return self.target_dir / self.filename

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "toolsRoot": str(self.tools_root),
            "targetDir": str(self.target_dir),
            "archivePath": str(self.archive_path),
            "archiveType": self.archive_type,
            "extract": self.extract,
            "stripComponents": self.strip_components,
            "sha256": self.sha256,
            "timeoutMs": self.timeout_ms,
        }

    def describe(self) -> list[str]:
        lines = [f"download {self.url}", f"  to {self.archive_path}"]
        lines.append(f"  verify sha256 {self.sha256}" if self.sha256 else "  no sha256 to verify")
        if self.extract:
            strip = f", strip {self.strip_components}" if self.strip_components else ""
            lines.append(f"  extract ({self.archive_type}{strip}) into {self.target_dir}")
        return lines


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an install cannot go ahead: an ``install.*`` code and OpenClaw-style message."""

    code: str
    message: str
    #: True when it is not a failure (everything is already installed).
    ok: bool = False
    #: The download installer repeats its refusals as stderr (OpenClaw's result shape).
    stderr: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.code, "message": self.message, "ok": self.ok}
