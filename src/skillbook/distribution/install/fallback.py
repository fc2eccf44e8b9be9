"""Opt-in apt and pip fallbacks on Linux, for when brew or uv is missing (skillbook only).

Homebrew refuses to run as root and is absent from most containers, so a brew spec
there can only fail. With ``--fallback apt`` (or ``skills.install.allowApt``) a brew
formula is installed with ``apt-get`` instead, but only under a package name the
skill itself declares (an ``{"kind": "apt", "package": …}`` entry, which OpenClaw's
parser drops but :attr:`SkillMetadata.raw` keeps) or one from the small table
:data:`APT_PACKAGES`. With ``--fallback pip`` (``allowPip``) a uv package is installed
with ``pipx install`` (or ``python3 -m pip install --user`` without pipx), as are
the skill's own ``pip``/``pipx`` entries.

Input: the skill's raw install list, a spec, the machine. Output: the steps to run
(:mod:`skillbook.distribution.install.plan`), or None when no fallback applies. Nothing runs here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from skillbook.distribution import InstallError
from skillbook.distribution.install.argv import SAFE_UV_PACKAGE
from skillbook.distribution.install.bootstrap import AptMessages, apt_steps
from skillbook.distribution.install.machine import Machine
from skillbook.distribution.install.plan import Role, Step
from skillbook.model import InstallSpec, Skill
from skillbook.pipeline.gating.gate import BinaryLookup
from skillbook.pipeline.parse.manifest import normalize_string_list

__all__ = [
    "APT_PACKAGES",
    "RawInstaller",
    "describe_unknown",
    "fallback_steps",
    "raw_installers",
    "steps_for_raw",
]

#: brew formula → Debian/Ubuntu package, for formulas whose apt name is well known.
APT_PACKAGES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "curl": "curl",
        "fd": "fd-find",
        "ffmpeg": "ffmpeg",
        "gh": "gh",
        "git": "git",
        "go": "golang-go",
        "imagemagick": "imagemagick",
        "jq": "jq",
        "node": "nodejs",
        "oath-toolkit": "oathtool",
        "pandoc": "pandoc",
        "poppler": "poppler-utils",
        "python3": "python3",
        "ripgrep": "ripgrep",
        "sqlite": "sqlite3",
        "tesseract": "tesseract-ocr",
        "tmux": "tmux",
        "wget": "wget",
        "yt-dlp": "yt-dlp",
    }
)
_APT_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
_RAW_KINDS: Final = {"apt": "apt", "pip": "pip", "pipx": "pip"}


@dataclass(frozen=True, slots=True)
class RawInstaller:
    """An ``apt``/``pip``/``pipx`` entry of ``metadata.openclaw.install`` (kept raw)."""

    kind: str  # "apt" or "pip"
    id: str
    label: str
    packages: tuple[str, ...]
    bins: tuple[str, ...] = ()
    os: tuple[str, ...] = ()


def raw_installers(skill: Skill) -> tuple[RawInstaller, ...]:
    """The skill's apt and pip entries with safe package names (others are ignored)."""
    meta = skill.metadata
    entries = meta.raw.get("install") if meta is not None else None
    out: list[RawInstaller] = []
    for index, raw in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(raw, dict) or not isinstance(raw.get("kind"), str):
            continue
        kind = _RAW_KINDS.get(raw["kind"].strip().lower())
        if kind is None:
            continue
        packages = tuple(normalize_string_list(raw.get("packages") or raw.get("package")))
        pattern = _APT_NAME if kind == "apt" else SAFE_UV_PACKAGE
        if not packages or not all(pattern.match(p) and "\n" not in p for p in packages):
            continue
        ident = raw.get("id")
        label = raw.get("label")
        out.append(
            RawInstaller(
                kind=kind,
                id=(
                    ident if isinstance(ident, str) and ident else f"{raw['kind']}-{index}"
                ).strip(),
                label=label.strip()
                if isinstance(label, str) and label.strip()
                else f"Install {', '.join(packages)} ({kind})",
                packages=packages,
                bins=tuple(normalize_string_list(raw.get("bins"))),
                os=tuple(normalize_string_list(raw.get("os"))),
            )
        )
    return tuple(out)


def _pip_steps(packages: Sequence[str], bins: BinaryLookup, timeout_ms: int) -> list[Step]:
    if bins.has("pipx"):
        return [Step(("pipx", "install", p), Role.INSTALL, timeout_ms) for p in packages]
    if not bins.has("python3"):
        raise InstallError(
            "install.tool-missing", "pip fallback needs pipx or python3 on PATH; neither was found"
        )
    return [
        Step(("python3", "-m", "pip", "install", "--user", *packages), Role.INSTALL, timeout_ms)
    ]


def steps_for_raw(
    raw: RawInstaller, *, machine: Machine, bins: BinaryLookup, timeout_ms: int
) -> list[Step]:
    """The commands of an apt or pip entry (apt as root, else through ``sudo -n``)."""
    if raw.kind == "pip":
        return _pip_steps(raw.packages, bins, timeout_ms)
    if not bins.has("apt-get"):
        raise InstallError("install.tool-missing", "apt fallback needs apt-get on PATH")
    manual = "sudo apt-get install -y " + " ".join(raw.packages)
    return apt_steps(
        raw.packages,
        machine=machine,
        bins=bins,
        timeout_ms=timeout_ms,
        messages=AptMessages(" ".join(raw.packages), manual),
        role=Role.INSTALL,
    )


def _matching(raws: Sequence[RawInstaller], kind: str, spec: InstallSpec) -> RawInstaller | None:
    same = [r for r in raws if r.kind == kind]
    if spec.bins:
        for r in same:
            if set(r.bins) & set(spec.bins):
                return r
    return same[0] if len(same) == 1 else None


def fallback_steps(
    spec: InstallSpec,
    skill: Skill,
    *,
    enabled: frozenset[str],
    machine: Machine,
    bins: BinaryLookup,
    timeout_ms: int,
) -> tuple[str, str, list[Step]] | None:
    """``(kind, note, steps)`` of the fallback for a brew or uv spec whose tool is
    missing, when that fallback is enabled and applies; otherwise None.
    """
    if machine.platform != "linux":
        return None
    raws = raw_installers(skill)
    if spec.kind == "brew" and "apt" in enabled and bins.has("apt-get"):
        raw = _matching(raws, "apt", spec)
        if raw is None and spec.formula in APT_PACKAGES:
            package = APT_PACKAGES[spec.formula or ""]
            raw = RawInstaller("apt", "apt", f"Install {package} (apt)", (package,), spec.bins)
        if raw is None:
            return None
        note = f'brew is not available; installing "{spec.formula}" with apt as {", ".join(raw.packages)}'
        steps = steps_for_raw(raw, machine=machine, bins=bins, timeout_ms=timeout_ms)
        return "apt", note, steps
    if spec.kind == "uv" and "pip" in enabled:
        raw = _matching(raws, "pip", spec)
        packages = raw.packages if raw is not None else (spec.package or "",)
        note = f"uv is not available; installing {', '.join(packages)} with pip"
        return "pip", note, _pip_steps(packages, bins, timeout_ms)
    return None


def describe_unknown(formula: str | None) -> str:
    """Why the apt fallback could not help a brew formula."""
    return (
        f'no apt package is known for brew formula "{formula}"; add '
        '{"kind": "apt", "package": "<name>"} to the skill\'s install list'
    )
