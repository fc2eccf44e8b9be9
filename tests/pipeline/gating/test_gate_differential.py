"""gate.evaluate against the straightforward evaluator it replaced.

The evaluator builds its lists only where a skill requires something and shares one
empty value otherwise; ``reference_evaluate`` below is the earlier, direct transcription
of §4.1. Differential: random manifests, configs, hosts, PATHs and remote nodes must
give equal verdicts from both, under both compat profiles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from factories import stub_bins
from hypothesis import given, settings
from hypothesis import strategies as st

from skillbook.config.file import Config
from skillbook.config.profile import DEFAULT_PROFILE, PROFILES, GateRules
from skillbook.model import (
    Frontmatter,
    InvocationPolicy,
    ParsedSkillFile,
    Requires,
    Skill,
    SkillMetadata,
    Source,
)
from skillbook.pipeline.gating.gate import (
    BinaryLookup,
    ConfigCheck,
    Eligibility,
    Host,
    RemoteEligibility,
    Requirements,
    StaticRemote,
    _env_satisfied,
    _missing_any_bins,
    _os_name,
    bundled_allowlist,
    evaluate,
    is_config_path_truthy,
    resolve_skill_source,
)


def reference_evaluate(
    skill: Skill,
    *,
    config: Config,
    host: Host,
    bins: BinaryLookup,
    remote: RemoteEligibility | None = None,
    rules: GateRules = DEFAULT_PROFILE.gate,
) -> Eligibility:
    key = skill.skill_key
    entry = config.entry(key)
    disabled = entry is not None and entry.enabled is False
    allow = bundled_allowlist(config)
    blocked = (
        allow is not None
        and resolve_skill_source(skill) == Source.BUNDLED.value
        and key not in allow
        and skill.name not in allow
    )
    meta = skill.metadata
    always = meta is not None and meta.always is True
    req = meta.requires if meta is not None else None
    required = Requirements(
        bins=req.bins if req else (),
        any_bins=req.any_bins if req else (),
        env=req.env if req else (),
        config=req.config if req else (),
        os=(meta.os or ()) if meta is not None else (),
    )
    remote_platforms = tuple(remote.platforms) if remote is not None else ()
    os_ok = (
        not required.os
        or host.platform in required.os
        or any(p in required.os for p in remote_platforms)
    )
    runtime_os_ok = os_ok
    if rules.status_os_normalized and required.os and not os_ok:
        wanted = {_os_name(p) for p in required.os}
        os_ok = _os_name(host.platform) in wanted or any(
            _os_name(p) in wanted for p in remote_platforms
        )
    missing_os = () if os_ok else required.os
    checks = tuple(ConfigCheck(p, is_config_path_truthy(config, p)) for p in required.config)
    if always:
        missing = Requirements(os=missing_os)
    else:
        missing = Requirements(
            bins=tuple(
                b
                for b in required.bins
                if not bins.has(b) and not (remote is not None and remote.has_bin(b))
            ),
            any_bins=_missing_any_bins(required.any_bins, bins, remote),
            env=tuple(n for n in required.env if not _env_satisfied(n, skill, config, host, rules)),
            config=tuple(c.path for c in checks if not c.satisfied),
            os=missing_os,
        )
    eligible = not disabled and not blocked and missing.is_empty
    return Eligibility(
        skill_key=key,
        eligible=eligible,
        disabled=disabled,
        blocked_by_allowlist=blocked,
        always=always,
        requirements=required,
        missing=missing,
        config_checks=checks,
        runtime=None if runtime_os_ok == os_ok else eligible and runtime_os_ok,
    )


NAMES = st.sampled_from(["git", "jq", "gone", "KEY", "OTHER", "x"])
LISTS = st.lists(NAMES, max_size=3).map(tuple)
OS = st.sampled_from(["linux", "darwin", "macos", "win32", " Linux "])
CONFIG_PATHS = st.lists(
    st.sampled_from(["browser.enabled", "a.b", "c", "browser.evaluateEnabled"]), max_size=2
).map(tuple)


@st.composite
def skills(draw: st.DrawFn) -> Skill:
    metadata: SkillMetadata | None = None
    if draw(st.booleans()):
        requires = None
        if draw(st.booleans()):
            requires = Requires(
                bins=draw(LISTS), any_bins=draw(LISTS), env=draw(LISTS), config=draw(CONFIG_PATHS)
            )
        os_list = draw(st.one_of(st.none(), st.lists(OS, max_size=2).map(tuple)))
        metadata = SkillMetadata(
            always=draw(st.sampled_from([None, True, False])),
            skill_key=draw(st.sampled_from([None, "alias", "s"])),
            primary_env=draw(st.sampled_from([None, "KEY", "OTHER"])),
            os=os_list or None,
            requires=requires,
        )
    parsed = ParsedSkillFile(
        frontmatter=Frontmatter(),
        body="",
        body_line=1,
        metadata=metadata,
        invocation=InvocationPolicy(),
        dispatch=None,
    )
    source = draw(st.sampled_from(list(Source)))
    return Skill(
        name=draw(st.sampled_from(["s", "t"])),
        description="d",
        file_path=Path("/x/SKILL.md"),
        base_dir=Path("/x"),
        source=source.value,
        parsed=parsed,
    )


ENTRY = st.fixed_dictionaries(
    {},
    optional={
        "enabled": st.booleans(),
        "env": st.dictionaries(NAMES, st.sampled_from(["", " ", "v"]), max_size=2),
        "apiKey": st.sampled_from(["", " ", "k"]),
    },
)


@st.composite
def configs(draw: st.DrawFn) -> Config:
    skills_raw: dict[str, Any] = {
        "entries": draw(st.dictionaries(st.sampled_from(["s", "t", "alias"]), ENTRY, max_size=2))
    }
    if draw(st.booleans()):
        skills_raw["allowBundled"] = draw(
            st.lists(st.sampled_from(["s", "alias", " "]), max_size=2)
        )
    raw: dict[str, Any] = {"skills": skills_raw}
    if draw(st.booleans()):
        raw["browser"] = {"enabled": draw(st.booleans())}
    raw["a"] = {"b": draw(st.sampled_from([0, 1, "", "y"]))}
    return Config.from_mapping(raw)


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PATH folder where `git` and `jq` exist and `gone` does not."""
    return stub_bins(tmp_path_factory.mktemp("bins"), ["git", "jq"], "#!/bin/sh\n")


@settings(max_examples=600, deadline=None)
@given(
    skill=skills(),
    config=configs(),
    platform=OS,
    env=st.dictionaries(NAMES, st.sampled_from(["", " ", "v"]), max_size=3),
    remote=st.one_of(
        st.none(),
        st.builds(
            StaticRemote,
            platforms=st.lists(OS, max_size=2).map(tuple),
            bins=st.frozensets(NAMES, max_size=2),
        ),
    ),
    profile=st.sampled_from(["openclaw-2026.4", "openclaw-2026.9"]),
)
def test_evaluate_agrees_with_the_reference(
    skill: Skill,
    config: Config,
    platform: str,
    env: dict[str, str],
    remote: StaticRemote | None,
    profile: str,
    bin_dir: Path,
) -> None:
    host = Host(platform=platform, env=env)
    rules = PROFILES[profile].gate
    lookup = BinaryLookup({"PATH": str(bin_dir)}, platform="linux")
    got = evaluate(skill, config=config, host=host, bins=lookup, remote=remote, rules=rules)
    want = reference_evaluate(
        skill, config=config, host=host, bins=lookup, remote=remote, rules=rules
    )
    assert got == want
    assert repr(got) == repr(want)
