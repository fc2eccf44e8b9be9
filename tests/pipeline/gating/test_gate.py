"""skillbook.pipeline.gating.gate: §4 eligibility and binary lookup (§12 Eligibility)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from factories import stub_bins

from skillbook.config.file import Config
from skillbook.model import (
    Requires,
    Skill,
    SkillMetadata,
    Source,
)
from skillbook.pipeline.gating.gate import (
    BinaryLookup,
    ConfigCheck,
    Host,
    StaticRemote,
    eligible_skills,
    evaluate,
    node_platform,
)

LINUX = Host(platform="linux", env={})


def make_skill(
    name: str = "demo",
    *,
    source: Source = Source.WORKSPACE,
    metadata: SkillMetadata | None = None,
) -> Skill:
    base = Path("/ws/skills") / name
    return Skill.create(
        name, f"{name} skill", base_dir=base, source=source.value, metadata=metadata
    )


def meta(**kw: Any) -> SkillMetadata:
    return SkillMetadata(**kw)


def req(**kw: Any) -> Requires:
    return Requires(**kw)


def no_bins() -> BinaryLookup:
    return BinaryLookup({"PATH": ""}, platform="linux")


def write_exe(folder: Path, name: str) -> Path:
    return stub_bins(folder, [name], "#!/bin/sh\n") / name


def ev(skill: Skill, config: Config | None = None, **kw: Any) -> Any:
    return evaluate(
        skill,
        config=config or Config.empty(),
        host=kw.pop("host", LINUX),
        bins=kw.pop("bins", no_bins()),
        **kw,
    )


# --------------------------------------------------------------------------- §12 lines


def test_requires_bins_missing_excluded_and_satisfied_via_remote() -> None:
    """§12: `requires.bins` missing → excluded; satisfied via remote `hasBin`."""
    skill = make_skill(metadata=meta(requires=req(bins=("peekaboo", "jq"))))
    result = ev(skill)
    assert not result.eligible
    assert result.missing.bins == ("peekaboo", "jq")  # all missing items, not just the first
    assert result.status == "needs-setup"
    remote = StaticRemote(platforms=("darwin",), bins=frozenset({"peekaboo", "jq"}))
    assert ev(skill, remote=remote).eligible


def test_any_bins_satisfied_via_remote_has_any_bin() -> None:
    """§12: `anyBins` satisfied via remote `hasAnyBin`."""
    skill = make_skill(metadata=meta(requires=req(any_bins=("claude", "codex"))))
    result = ev(skill)
    assert not result.eligible and result.missing.any_bins == ("claude", "codex")
    assert ev(skill, remote=StaticRemote(bins=frozenset({"codex"}))).eligible


def test_any_bins_satisfied_by_one_local_binary(tmp_path: Path) -> None:
    write_exe(tmp_path / "bin", "codex")
    bins = BinaryLookup({"PATH": str(tmp_path / "bin")}, platform="linux")
    skill = make_skill(metadata=meta(requires=req(any_bins=("claude", "codex"))))
    assert ev(skill, bins=bins).eligible


def test_requires_config_browser_enabled_default_and_false() -> None:
    """§12: `requires.config: ["browser.enabled"]` included by default, excluded with false."""
    skill = make_skill(metadata=meta(requires=req(config=("browser.enabled",))))
    result = ev(skill)
    assert result.eligible
    assert result.config_checks == (ConfigCheck("browser.enabled", True),)
    off = Config.from_mapping({"browser": {"enabled": False}})
    result = ev(skill, off)
    assert not result.eligible
    assert result.missing.config == ("browser.enabled",)
    assert result.config_checks == (ConfigCheck("browser.enabled", False),)


def test_requires_config_truthiness() -> None:
    skill = make_skill(
        metadata=meta(requires=req(config=("a.s", "a.blank", "a.obj", "a.zero", "a.x")))
    )
    cfg = Config.from_mapping({"a": {"s": "x", "blank": "  ", "obj": {}, "zero": 0}})
    result = ev(skill, cfg)
    assert [c.satisfied for c in result.config_checks] == [True, False, True, False, False]
    assert result.missing.config == ("a.blank", "a.zero", "a.x")


def test_always_included_despite_missing_env() -> None:
    """§12: `always: true` included despite missing env."""
    skill = make_skill(metadata=meta(always=True, requires=req(env=("NOPE_KEY",), bins=("nope",))))
    result = ev(skill)
    assert result.eligible and result.always
    assert result.missing.is_empty
    assert result.requirements.env == ("NOPE_KEY",)


def test_always_does_not_bypass_os_deliberate_fix() -> None:
    """`always: true` on the wrong OS: excluded, and the report says why (documented fix)."""
    skill = make_skill(metadata=meta(always=True, os=("darwin",)))
    result = ev(skill)
    assert not result.eligible
    assert result.missing.os == ("darwin",)
    assert ev(skill, host=Host(platform="darwin")).eligible
    # A remote macOS node counts for the OS gate.
    assert ev(skill, remote=StaticRemote(platforms=("darwin",))).eligible


def test_always_does_not_bypass_disabled_or_allowlist() -> None:
    skill = make_skill("peekaboo", source=Source.BUNDLED, metadata=meta(always=True))
    cfg = Config.from_mapping({"skills": {"entries": {"peekaboo": {"enabled": False}}}})
    assert not ev(skill, cfg).eligible
    cfg = Config.from_mapping({"skills": {"allowBundled": ["other"]}})
    result = ev(skill, cfg)
    assert not result.eligible and result.blocked_by_allowlist and result.status == "blocked"


def test_env_satisfied_by_api_key_with_primary_env_and_not_by_blank() -> None:
    """§12: `requires.env` satisfied by `entries.<name>.apiKey` when `primaryEnv` matches; `""` does not."""
    skill = make_skill(
        "image", metadata=meta(primary_env="GEMINI_API_KEY", requires=req(env=("GEMINI_API_KEY",)))
    )
    assert not ev(skill).eligible
    with_key = Config.from_mapping({"skills": {"entries": {"image": {"apiKey": "secret"}}}})
    assert ev(skill, with_key).eligible
    blank = Config.from_mapping({"skills": {"entries": {"image": {"apiKey": ""}}}})
    result = ev(skill, blank)
    assert not result.eligible and result.missing.env == ("GEMINI_API_KEY",)
    ref = Config.from_mapping(
        {
            "skills": {
                "entries": {
                    "image": {"apiKey": {"source": "env", "provider": "default", "id": "G"}}
                }
            }
        }
    )
    assert ev(skill, ref).eligible  # a SecretRef object is truthy
    other = make_skill(
        "image", metadata=meta(primary_env="OTHER", requires=req(env=("GEMINI_API_KEY",)))
    )
    assert not ev(other, with_key).eligible


def test_env_satisfied_by_host_env_or_entry_env() -> None:
    skill = make_skill(metadata=meta(requires=req(env=("A", "B", "C"))))
    host = Host(platform="linux", env={"A": "1", "C": ""})
    cfg = Config.from_mapping({"skills": {"entries": {"demo": {"env": {"B": "2", "C": ""}}}}})
    result = ev(skill, cfg, host=host)
    assert result.missing.env == ("C",)
    # Remote nodes never satisfy env.
    assert ev(skill, cfg, host=host, remote=StaticRemote(bins=frozenset({"C"}))).missing.env == (
        "C",
    )


def test_skill_key_alias_disables() -> None:
    """§12: `metadata.skillKey: "alias"` → `entries.alias.enabled: false` disables it."""
    skill = make_skill("real-name", metadata=meta(skill_key="alias"))
    cfg = Config.from_mapping({"skills": {"entries": {"alias": {"enabled": False}}}})
    result = ev(skill, cfg)
    assert result.disabled and not result.eligible and result.status == "disabled"
    assert result.skill_key == "alias"
    by_name = Config.from_mapping({"skills": {"entries": {"real-name": {"enabled": False}}}})
    assert ev(skill, by_name).eligible


def test_allow_bundled_hides_bundled_not_workspace() -> None:
    """§12: `allowBundled: ["missing-skill"]` hides bundled skills but not workspace skills."""
    cfg = Config.from_mapping({"skills": {"allowBundled": ["missing-skill"]}})
    bundled = make_skill("peekaboo", source=Source.BUNDLED)
    workspace = make_skill("peekaboo", source=Source.WORKSPACE)
    assert ev(bundled, cfg).blocked_by_allowlist
    assert not ev(workspace, cfg).blocked_by_allowlist and ev(workspace, cfg).eligible
    # Allowed by name or by skill key; blank/empty lists mean no restriction.
    assert ev(bundled, Config.from_mapping({"skills": {"allowBundled": [" peekaboo "]}})).eligible
    keyed = make_skill("peekaboo", source=Source.BUNDLED, metadata=meta(skill_key="pk"))
    assert ev(keyed, Config.from_mapping({"skills": {"allowBundled": ["pk"]}})).eligible
    assert ev(bundled, Config.from_mapping({"skills": {"allowBundled": []}})).eligible
    assert ev(bundled, Config.from_mapping({"skills": {"allowBundled": ["  "]}})).eligible


def test_os_gate_and_no_metadata() -> None:
    assert ev(make_skill()).eligible  # no metadata → eligible
    skill = make_skill(metadata=meta(os=("darwin", "win32")))
    result = ev(skill)
    assert not result.eligible and result.missing.os == ("darwin", "win32")
    assert ev(skill, host=Host(platform="win32")).eligible


def test_all_missing_lists_collected() -> None:
    skill = make_skill(
        metadata=meta(
            os=("darwin",),
            requires=req(bins=("a", "b"), any_bins=("c", "d"), env=("E", "F"), config=("g.h",)),
        )
    )
    m = ev(skill).missing
    assert m.to_json() == {
        "bins": ["a", "b"],
        "anyBins": ["c", "d"],
        "env": ["E", "F"],
        "config": ["g.h"],
        "os": ["darwin"],
    }


def test_eligible_skills_runtime_gate_then_filter() -> None:
    ok = make_skill("alpha")
    gated = make_skill("beta", metadata=meta(requires=req(bins=("nope",))))
    other = make_skill("gamma")
    kw: dict[str, Any] = {"config": Config.empty(), "host": LINUX, "bins": no_bins()}
    assert [s.name for s in eligible_skills([ok, gated, other], **kw)] == ["alpha", "gamma"]
    assert [s.name for s in eligible_skills([ok, gated, other], skill_filter=["gamma"], **kw)] == [
        "gamma"
    ]
    # Remote-eligible skills survive filtering.
    remote = StaticRemote(bins=frozenset({"nope"}))
    names = [
        s.name for s in eligible_skills([ok, gated], skill_filter=["beta"], remote=remote, **kw)
    ]
    assert names == ["beta"]


# --------------------------------------------------------------------------- binary lookup


def test_binary_lookup_finds_executables_only(tmp_path: Path) -> None:
    write_exe(tmp_path / "bin", "tool")
    (tmp_path / "bin" / "plain").write_text("x", encoding="utf-8")
    bins = BinaryLookup({"PATH": f"::{tmp_path / 'bin'}"}, platform="linux")
    assert bins.has("tool")
    assert not bins.has("plain")
    assert not bins.has("absent")
    assert bins.has_any(["absent", "tool"])


def test_binary_lookup_counts_a_name_or_path_with_nul_as_missing(tmp_path: Path) -> None:
    """A NUL in `requires.bins` (JSON5 "\\u0000") made os.access raise ValueError and
    stopped the whole load (found by the crash hunt); OpenClaw counts it as not found."""
    write_exe(tmp_path / "bin", "tool")
    bins = BinaryLookup({"PATH": str(tmp_path / "bin")}, platform="linux")
    assert not bins.has("to\0ol")
    assert bins.has_any(["\0", "tool"])
    assert not BinaryLookup({"PATH": f"{tmp_path}\0/bin"}, platform="linux").has("tool")
    skill = make_skill(metadata=SkillMetadata(requires=Requires(bins=("tool", "a\0b"))))
    assert ev(skill, bins=bins).missing.bins == ("a\0b",)


def test_binary_lookup_windows_pathext(tmp_path: Path) -> None:
    """PATHEXT on a simulated Windows host: `tool.CMD` found as `tool`."""
    folder = tmp_path / "win bin"
    write_exe(folder, "tool.CMD")
    env = {"PATH": f"C:\\nowhere;{folder}"}
    assert BinaryLookup(env, platform="win32").has("tool")  # default PATHEXT
    assert not BinaryLookup(env, platform="linux").has("tool")
    assert not BinaryLookup({**env, "PATHEXT": ".EXE;.BAT"}, platform="win32").has("tool")
    assert BinaryLookup({**env, "PATHEXT": ".exe; .CMD ;"}, platform="win32").has("tool")
    assert BinaryLookup.for_host(Host(platform="win32", env=env)).has("tool")


def test_binary_cache_invalidated_when_path_changes(tmp_path: Path) -> None:
    env: dict[str, str] = {"PATH": str(tmp_path / "a")}
    bins = BinaryLookup(env, platform="linux")
    assert not bins.has("tool")
    write_exe(tmp_path / "b", "tool")
    assert not bins.has("tool")  # cached while PATH is unchanged
    env["PATH"] = f"{tmp_path / 'a'}:{tmp_path / 'b'}"
    assert bins.has("tool")
    os.remove(tmp_path / "b" / "tool")
    assert bins.has("tool")  # still cached
    bins.clear()
    assert not bins.has("tool")


def test_binary_cache_invalidated_when_pathext_changes(tmp_path: Path) -> None:
    write_exe(tmp_path, "tool.PS1")
    env: dict[str, str] = {"PATH": str(tmp_path), "PATHEXT": ".EXE"}
    bins = BinaryLookup(env, platform="win32")
    assert not bins.has("tool")
    env["PATHEXT"] = ".EXE;.PS1"
    assert bins.has("tool")


def test_host_from_process_and_platform_names() -> None:
    host = Host.from_process()
    assert host.platform == node_platform()
    assert host.env.get("PATH") == os.environ.get("PATH")
    assert node_platform("linux") == "linux"
    assert node_platform("darwin") == "darwin"
    assert node_platform("win32") == "win32"
    assert node_platform("cygwin") == "win32"
    assert node_platform("freebsd14") == "freebsd"
    assert node_platform("sunos5") == "sunos"
