"""Which installer of a skill to run (spec §8.2 and §8.3 step 3).

Input: a skill, an optional install id, the install preferences of §8.1, the
platform, a PATH lookup and the enabled fallbacks. Output: a :class:`Choice` (the
spec, or a raw apt/pip entry, with its id and label), or an
:class:`~skillbook.distribution.install.result.InstallError` that says what to pick instead.

Without an id, the option that ``skillbook info`` shows is used: §8.2's preference
chain, which lives in :mod:`skillbook.pipeline.gating.status` (one home for it). An id is matched
first against the ids ``info`` shows (counted within the OS-filtered list), then
against OpenClaw's install ids (counted in the unfiltered list). OpenClaw uses only
the latter, so an id-less spec shown as ``download-0`` could name a different
spec there; skillbook installs what the user was shown, and refuses a spec for
another OS instead of installing it.
"""

from __future__ import annotations

from dataclasses import dataclass

from skillbook.distribution import InstallError
from skillbook.distribution.install.fallback import RawInstaller, raw_installers
from skillbook.model import InstallSpec, Skill
from skillbook.pipeline.gating.gate import BinaryLookup
from skillbook.pipeline.gating.install_options import (
    InstallPreferences,
    install_option,
    normalize_install_options,
)

__all__ = ["Choice", "choose", "spec_id"]


@dataclass(frozen=True, slots=True)
class Choice:
    install_id: str
    kind: str
    label: str
    spec: InstallSpec | None = None
    raw: RawInstaller | None = None


def spec_id(spec: InstallSpec, index: int) -> str:
    return (spec.id if spec.id is not None else f"{spec.kind}-{index}").strip()


def _for_platform(os_list: tuple[str, ...], platform: str) -> bool:
    return not os_list or platform in os_list


def choose(
    skill: Skill,
    install_id: str | None,
    *,
    prefs: InstallPreferences,
    platform: str,
    bins: BinaryLookup,
    fallbacks: frozenset[str],
) -> Choice:
    meta = skill.metadata
    specs = meta.install or () if meta is not None else ()
    if meta is not None and meta.os and platform not in meta.os:
        raise InstallError(
            "install.wrong-os",
            f'skill "{skill.name}" is for {", ".join(meta.os)}, not {platform}',
        )
    visible = [s for s in specs if _for_platform(s.os, platform)]
    raws = [r for r in raw_installers(skill) if _for_platform(r.os, platform)]
    if install_id is not None:
        return _by_id(skill, install_id, specs, visible, raws, prefs, platform, fallbacks)
    options = normalize_install_options(skill, prefs=prefs, platform=platform, bins=bins)
    if len(options) == 1:
        index = next(i for i, s in enumerate(visible) if spec_id(s, i) == options[0].id)
        spec = visible[index]
        return Choice(options[0].id, spec.kind, options[0].label, spec=spec)
    if len(options) > 1:
        ids = ", ".join(o.id for o in options)
        raise InstallError(
            "install.ambiguous",
            f'skill "{skill.name}" has {len(options)} installers for {platform}; pick one of: {ids}',
        )
    usable = [r for r in raws if r.kind in fallbacks]
    if len(usable) == 1:
        raw = usable[0]
        return Choice(raw.id, raw.kind, raw.label, raw=raw)
    if len(usable) > 1:
        ids = ", ".join(r.id for r in usable)
        raise InstallError(
            "install.ambiguous",
            f'skill "{skill.name}" has {len(usable)} installers for {platform}; pick one of: {ids}',
        )
    hint = ""
    if raws:
        kinds = sorted({r.kind for r in raws})
        hint = f" (it has {'/'.join(kinds)} installers: enable them with --fallback {kinds[0]})"
    raise InstallError(
        "install.no-installer", f'skill "{skill.name}" declares no installer for {platform}{hint}'
    )


def _by_id(
    skill: Skill,
    install_id: str,
    specs: tuple[InstallSpec, ...],
    visible: list[InstallSpec],
    raws: list[RawInstaller],
    prefs: InstallPreferences,
    platform: str,
    fallbacks: frozenset[str],
) -> Choice:
    spec = next((s for i, s in enumerate(visible) if spec_id(s, i) == install_id), None)
    if spec is None:
        spec = next((s for i, s in enumerate(specs) if spec_id(s, i) == install_id), None)
    if spec is not None:
        if not _for_platform(spec.os, platform):
            raise InstallError(
                "install.wrong-os",
                f'installer "{install_id}" is for {", ".join(spec.os)}, not {platform}',
            )
        index = visible.index(spec) if spec in visible else specs.index(spec)
        return Choice(install_id, spec.kind, install_option(spec, index, prefs).label, spec=spec)
    raw = next((r for r in raws if r.id == install_id), None)
    if raw is not None:
        if raw.kind not in fallbacks:
            allow = "allowApt" if raw.kind == "apt" else "allowPip"
            raise InstallError(
                "install.policy-refused",
                f'installer "{install_id}" uses {raw.kind}, which is off: enable it with '
                f"--fallback {raw.kind} or skills.install.{allow}",
            )
        return Choice(raw.id, raw.kind, raw.label, raw=raw)
    # OpenClaw reports this after the scan (§8.3 step 6); the caller does the same.
    return Choice(install_id, "", "")
