"""skillbook's env-override block list is OpenClaw 2026.9.6's, under every compat profile.

The fast tests hold :mod:`skillbook.runtime.env` to the checked-in snapshot of the
package's policy (``openclaw_2026_9_6_host_env_policy.json``) and show that a skill's
``entries.<key>.env`` cannot reach its commands with any of those keys, whichever
profile the config names (a security floor is never looser for an older profile). The
oracle test re-reads the policy from the installed ``openclaw@2026.9.6`` package, so a
new snapshot is needed exactly when the package says so.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from env_policy_support import load_snapshot, read_policy
from oracle_support import Oracle

from skillbook.config.file import Config
from skillbook.config.profile import PROFILE_NAMES
from skillbook.distribution.sync.sandbox import is_dangerous
from skillbook.model import Requires, Skill, SkillMetadata
from skillbook.runtime.env import (
    ALWAYS_BLOCKED_ENV_PATTERNS,
    HOST_DANGEROUS_ENV_KEYS,
    HOST_DANGEROUS_ENV_PREFIXES,
    HOST_OVERRIDE_BLOCKED_ENV_KEYS,
    HOST_OVERRIDE_BLOCKED_ENV_PREFIXES,
    REASON_ALWAYS_BLOCKED,
    is_always_blocked,
    is_host_dangerous,
    skill_env,
)

SNAPSHOT = load_snapshot()

#: Keys 2026.9.6 blocks that 2026.4.12 (the spec's Appendix A) let through.
NEW_IN_2026_9 = (
    "NODE_REDIRECT_WARNINGS",
    "NODE_REPL_EXTERNAL_MODULE",
    "NODE_REPL_HISTORY",
    "NODE_V8_COVERAGE",
    "BASHOPTS",
    "KSH_ENV",
    "GIT_ALLOW_PROTOCOL",
    "GIT_PROTOCOL_FROM_USER",
    "RUSTC",
    "RUSTDOC",
    "RUSTUP_TOOLCHAIN",
    "RUSTUP_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "CONDA_PREFIX",
    "FPATH",
    "TCLLIBPATH",
    "MAKE",
    "CPP",
    "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER",
    "CARGO_TARGET_AARCH64_APPLE_DARWIN_RUNNER",
)


def _py_pattern(source: str, flags: str) -> re.Pattern[str]:
    # JavaScript's `$` without the `m` flag is Python's `\Z`.
    return re.compile(
        source.removeprefix("^").removesuffix("$") + r"\Z", re.I if "i" in flags else 0
    )


def test_lists_equal_the_snapshot_of_2026_9_6() -> None:
    assert SNAPSHOT["version"] == "2026.9.6"
    assert frozenset(SNAPSHOT["blockedEverywhereKeys"]) == HOST_DANGEROUS_ENV_KEYS
    assert frozenset(SNAPSHOT["blockedOverrideOnlyKeys"]) == HOST_OVERRIDE_BLOCKED_ENV_KEYS
    assert frozenset(SNAPSHOT["blockedPrefixes"]) == HOST_DANGEROUS_ENV_PREFIXES
    assert frozenset(SNAPSHOT["blockedOverridePrefixes"]) == HOST_OVERRIDE_BLOCKED_ENV_PREFIXES
    ours = [(p.pattern, p.flags & re.I) for p in ALWAYS_BLOCKED_ENV_PATTERNS]
    theirs = [
        (p.pattern, p.flags & re.I)
        for source, flags in SNAPSHOT["overridePatterns"]
        for p in [_py_pattern(source, flags)]
    ]
    assert ours == theirs
    # The skill-only pattern is OPENSSL_CONF, matched case-insensitively: a key.
    assert SNAPSHOT["skillPatterns"] == [["^OPENSSL_CONF$", "i"]]


def _every_blocked_key() -> list[str]:
    keys = {*SNAPSHOT["blockedEverywhereKeys"], *SNAPSHOT["blockedOverrideOnlyKeys"]}
    keys |= {p + "X" for p in SNAPSHOT["blockedPrefixes"] + SNAPSHOT["blockedOverridePrefixes"]}
    return sorted(keys | {"openssl_conf", *NEW_IN_2026_9})


def test_every_key_of_the_policy_is_blocked_in_any_case() -> None:
    for key in _every_blocked_key():
        assert is_always_blocked(key), key
        assert is_always_blocked(f" {key.lower()} "), key
    for key in ("PATH", "LANG", "CARGO_TARGET_DIR", "CARGO_TARGET_X_LINKER_FLAGS", "XDG_FOO"):
        assert not is_always_blocked(key), key


def _skill(env: tuple[str, ...]) -> Skill:
    meta = SkillMetadata(requires=Requires(env=env))
    return Skill.create(
        "s", "s things", base_dir=Path("/ws/skills/s"), source="openclaw-workspace", metadata=meta
    )


def _overlay(compat: str) -> Any:
    values = {key: f"v-{i}" for i, key in enumerate(NEW_IN_2026_9)}
    cfg = Config.from_mapping(
        {"skills": {"compat": compat, "entries": {"s": {"env": {**values, "SAFE_VAR": "ok"}}}}}
    )
    return skill_env(_skill(tuple(values)), config=cfg, base_env={})


@pytest.mark.parametrize("compat", PROFILE_NAMES)
def test_new_keys_are_refused_under_either_profile(compat: str) -> None:
    """Declared or not, a key 2026.9.6 blocks is refused from ``entries.s.env`` whatever
    profile the config names (before: every key of NEW_IN_2026_9 passed, under both)."""
    out = _overlay(compat)
    assert dict(out.values) == {"SAFE_VAR": "ok"}
    assert out.blocked == tuple((k, REASON_ALWAYS_BLOCKED) for k in NEW_IN_2026_9)


@pytest.mark.subprocess
@pytest.mark.parametrize("compat", PROFILE_NAMES)
def test_new_keys_never_reach_a_skills_command(compat: str, tmp_path: Path) -> None:
    """A real child started with the overlay sees ``SAFE_VAR`` and none of the keys."""
    script = "import json, os; print(json.dumps(sorted(os.environ)))"
    child = subprocess.run(
        [sys.executable, "-c", script],
        env=_overlay(compat).apply({"PATH": "/usr/bin:/bin"}),
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    seen = set(json.loads(child.stdout))
    assert "SAFE_VAR" in seen
    assert not seen & set(NEW_IN_2026_9)


def test_sandbox_passthrough_refuses_the_startup_keys_of_2026_9_6() -> None:
    """``sync --env-file`` lists no key that changes how programs start; override-only
    keys (credentials, home folders) stay the user's to pass."""
    for key in [*SNAPSHOT["blockedEverywhereKeys"], "CARGO_TARGET_X_RUNNER", "GIT_CONFIG_KEY_0"]:
        assert is_dangerous(key) and is_host_dangerous(key), key
    for key in ("XDG_CONFIG_HOME", "RUSTUP_HOME", "GITHUB_TOKEN", "HOME"):
        assert not is_dangerous(key), key


@pytest.mark.oracle
def test_snapshot_is_the_installed_package_policy(latest_oracle: Oracle) -> None:
    """Re-read the policy from ``openclaw@2026.9.6``'s ``dist``: the snapshot (and so
    skillbook's lists, by the test above) is exactly the package's."""
    dist = latest_oracle.root / "latest" / "node_modules" / "openclaw" / "dist"
    policy: dict[str, Any] = read_policy(dist)
    assert policy == SNAPSHOT
