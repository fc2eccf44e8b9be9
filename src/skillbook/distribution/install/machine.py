"""The machine an install runs on: platform, environment, root or not, where brew lives.

Input: an environment mapping (or this process's), read once. Output: a frozen
:class:`Machine` value that the planners consult instead of ``os.environ``,
``os.getuid`` or the file system directly, so tests can describe a machine (a
non-root user with ``sudo``, a Linux box without brew) by hand.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from skillbook.config.paths import Paths
from skillbook.pipeline.gating.gate import BinaryLookup, node_platform

__all__ = ["Machine"]


@dataclass(frozen=True, slots=True)
class Machine:
    platform: str
    #: The environment installers run in; ``None`` = this process's, inherited as is.
    env: Mapping[str, str] | None = None
    is_root: bool = False
    home: Path = field(default_factory=Path.home)
    #: Where to look for ``brew`` when it is not on PATH; ``None`` = OpenClaw's list.
    brew_locations: tuple[str, ...] | None = None

    @classmethod
    def from_process(cls, env: Mapping[str, str] | None = None) -> Machine:
        """This machine; ``env`` (default: this process's) is what installers run with."""
        environ = os.environ if env is None else env
        getuid = getattr(os, "getuid", None)
        return cls(
            platform=node_platform(),
            env=None if env is None else dict(env),
            is_root=getuid is not None and getuid() == 0,
            home=Paths.from_env(environ).os_home,
        )

    @property
    def environ(self) -> Mapping[str, str]:
        return os.environ if self.env is None else self.env

    def bins(self) -> BinaryLookup:
        """A fresh PATH lookup (no cached answers from before an install)."""
        return BinaryLookup(self.environ, platform=self.platform)

    def _brew_candidates(self) -> tuple[str, ...]:
        if self.brew_locations is not None:
            return self.brew_locations
        env = self.environ
        out: list[str] = []
        brew_file = (env.get("HOMEBREW_BREW_FILE") or "").strip()
        if brew_file:
            out.append(brew_file)
        prefix = (env.get("HOMEBREW_PREFIX") or "").strip()
        if prefix:
            out.append(os.path.join(prefix, "bin", "brew"))
        out += [
            str(self.home / ".linuxbrew" / "bin" / "brew"),
            "/home/linuxbrew/.linuxbrew/bin/brew",
            "/opt/homebrew/bin/brew",
            "/usr/local/bin/brew",
        ]
        return tuple(out)

    def brew_executable(self, bins: BinaryLookup) -> str | None:
        """``brew`` when on PATH, else the first executable known location, else None."""
        if bins.has("brew"):
            return "brew"
        return next((c for c in self._brew_candidates() if os.access(c, os.X_OK)), None)

    def brew_bin_fallback(self) -> str | None:
        """Where ``go install`` puts binaries when ``brew --prefix`` gives no answer."""
        prefix = (self.environ.get("HOMEBREW_PREFIX") or "").strip()
        if prefix:
            return os.path.join(prefix, "bin")
        candidates = ("/opt/homebrew/bin", "/usr/local/bin")
        return next((c for c in candidates if os.path.exists(c)), None)
