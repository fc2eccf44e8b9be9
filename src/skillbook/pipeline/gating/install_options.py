"""The install options a status entry shows (spec §8.1 preferences, §8.2 options).

Input: a skill's ``metadata.install`` specs, the ``skills.install`` preferences, the
platform and a :class:`~skillbook.pipeline.gating.gate.BinaryLookup` (is ``brew`` on PATH?). Output:
the :class:`InstallOption` values OpenClaw's status report lists, ids and labels
included. Never runs an installer (that is :mod:`skillbook.distribution.install`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from skillbook.config.file import Config
from skillbook.model import InstallSpec, Skill
from skillbook.pipeline.gating.gate import BinaryLookup

__all__ = [
    "DEFAULT_NODE_MANAGER",
    "DEFAULT_PREFER_BREW",
    "InstallOption",
    "InstallPreferences",
    "install_option",
    "normalize_install_options",
    "resolve_install_preferences",
]

DEFAULT_PREFER_BREW: Final = True
DEFAULT_NODE_MANAGER: Final = "npm"
_NODE_MANAGERS: Final = frozenset({"npm", "pnpm", "yarn", "bun"})


@dataclass(frozen=True, slots=True)
class InstallPreferences:
    prefer_brew: bool = DEFAULT_PREFER_BREW
    node_manager: str = DEFAULT_NODE_MANAGER


def resolve_install_preferences(config: Config) -> InstallPreferences:
    """§8.1: ``preferBrew`` defaults to true; an unknown node manager becomes ``npm``."""
    raw = config.skills.install
    manager = (raw.node_manager or "").strip().lower()
    return InstallPreferences(
        prefer_brew=DEFAULT_PREFER_BREW if raw.prefer_brew is None else raw.prefer_brew,
        node_manager=manager if manager in _NODE_MANAGERS else DEFAULT_NODE_MANAGER,
    )


@dataclass(frozen=True, slots=True)
class InstallOption:
    id: str
    kind: str
    label: str
    bins: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "label": self.label, "bins": list(self.bins)}


def normalize_install_options(
    skill: Skill,
    *,
    prefs: InstallPreferences,
    platform: str,
    bins: BinaryLookup,
    unfiltered_index: bool = False,
) -> tuple[InstallOption, ...]:
    """§8.2: the install options shown for a skill on ``platform``.

    2026.4 numbers id-less specs within the OS-filtered list (its install uses the
    unfiltered one); 2026.9 (``unfiltered_index``) uses the unfiltered one here too."""
    meta = skill.metadata
    if meta is None:
        return ()
    if meta.os and platform not in meta.os:
        return ()
    indexed = [(i, s) for i, s in enumerate(meta.install or ()) if not s.os or platform in s.os]
    if not indexed:
        return ()
    specs = [s for _, s in indexed]
    number = [i for i, _ in indexed] if unfiltered_index else list(range(len(specs)))
    if all(s.kind == "download" for s in specs):
        return tuple(_option(s, number[i], prefs) for i, s in enumerate(specs))
    index = _preferred_index(specs, prefs, bins)
    return (_option(specs[index], number[index], prefs),)


def _preferred_index(
    specs: Sequence[InstallSpec], prefs: InstallPreferences, bins: BinaryLookup
) -> int:
    def first(kind: str) -> int | None:
        return next((i for i, s in enumerate(specs) if s.kind == kind), None)

    brew, uv, node, go, download = (first(k) for k in ("brew", "uv", "node", "go", "download"))
    brew_on_path = bins.has("brew")
    chain = (
        brew if prefs.prefer_brew and brew_on_path else None,
        uv,
        node,
        brew if brew_on_path else None,
        go,
        download,
        brew,
    )
    return next((i for i in chain if i is not None), 0)


def install_option(spec: InstallSpec, index: int, prefs: InstallPreferences) -> InstallOption:
    """The option (id, label) shown for ``spec`` at position ``index`` (§8.2 step 5)."""
    return _option(spec, index, prefs)


def _option(spec: InstallSpec, index: int, prefs: InstallPreferences) -> InstallOption:
    label = (spec.label or "").strip()
    if spec.kind == "node" and spec.package:
        label = f"Install {spec.package} ({prefs.node_manager})"
    if not label:
        if spec.kind == "brew" and spec.formula:
            label = f"Install {spec.formula} (brew)"
        elif spec.kind == "go" and spec.module:
            label = f"Install {spec.module} (go)"
        elif spec.kind == "uv" and spec.package:
            label = f"Install {spec.package} (uv)"
        elif spec.kind == "download" and spec.url:
            url = spec.url.strip()
            last = url.split("/")[-1]
            label = f"Download {last or url}"
        else:
            label = "Run installer"
    ident = (spec.id if spec.id is not None else f"{spec.kind}-{index}").strip()
    return InstallOption(id=ident, kind=spec.kind, label=label, bins=spec.bins)
