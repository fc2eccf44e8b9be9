"""Per-skill environment overlays (spec §11.3, Appendix A, §12 "Env overrides").

skillbook never injects into ``os.environ``: the §12 lines about ref-counting and
restoring process-wide state do not apply; the others are pinned here for the
per-subprocess overlay.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

import pytest

from skillbook.config.file import Config, SecretRef
from skillbook.model import (
    Requires,
    Skill,
    SkillMetadata,
)
from skillbook.runtime import SecretError
from skillbook.runtime.env import (
    ALWAYS_BLOCKED_ENV_KEYS,
    ALWAYS_BLOCKED_ENV_PREFIXES,
    HOST_DANGEROUS_ENV_KEYS,
    HOST_OVERRIDE_BLOCKED_ENV_KEYS,
    REASON_ALWAYS_BLOCKED,
    REASON_NUL,
    REASON_UNDECLARED,
    SkillEnv,
    is_always_blocked,
    is_sensitive,
    skill_env,
)
from skillbook.runtime.secrets import Secret, SecretResolver

SECRET = "sk-env-test-5ecr3t-0001"


def make_skill(
    name: str,
    *,
    key: str | None = None,
    primary: str | None = None,
    env: tuple[str, ...] = (),
) -> Skill:
    meta = SkillMetadata(skill_key=key, primary_env=primary, requires=Requires(env=env))
    base = Path("/ws/skills") / name
    return Skill.create(
        name, f"{name} things", base_dir=base, source="openclaw-workspace", metadata=meta
    )


def config(**entries: dict[str, Any]) -> Config:
    return Config.from_mapping({"skills": {"entries": entries}})


class RecordingResolver:
    def __init__(self, value: str = SECRET) -> None:
        self.value = value
        self.calls: list[tuple[SecretRef, str]] = []

    def resolve(self, ref: SecretRef, *, key: str) -> Secret:
        self.calls.append((ref, key))
        return Secret(self.value)


@pytest.fixture(autouse=True)
def os_environ_untouched() -> Any:
    """Nothing in this module may change the Python process's environment."""

    def snapshot() -> dict[str, str]:
        return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}

    before = snapshot()
    yield
    assert snapshot() == before


# ----------------------------------------------------------------------- §12 lines


def test_api_key_goes_into_primary_env() -> None:
    """§12: apiKey injected into primaryEnv (here: into the overlay only)."""
    sk = make_skill("weather", primary="WEATHER_API_KEY")
    out = skill_env(sk, config=config(weather={"apiKey": f"  {SECRET} "}), base_env={})
    assert dict(out.values) == {"WEATHER_API_KEY": SECRET}
    assert out.secret_keys == frozenset({"WEATHER_API_KEY"})
    assert out.blocked == () and out.warnings == ()


def test_declared_openai_api_key_is_injected() -> None:
    """§12: declared secret OPENAI_API_KEY injected."""
    sk = make_skill("gpt", env=("OPENAI_API_KEY",))
    out = skill_env(sk, config=config(gpt={"env": {"OPENAI_API_KEY": SECRET}}), base_env={})
    assert out.values["OPENAI_API_KEY"] == SECRET
    assert "OPENAI_API_KEY" in out.secret_keys


@pytest.mark.parametrize(
    "name", ["OPENAI_API_KEY", "OTHER_TOKEN", "MYTOKEN", "db_password", "X_SECRET"]
)
def test_undeclared_sensitive_name_is_blocked(name: str) -> None:
    sk = make_skill("s", primary="S_KEY_ID")
    out = skill_env(sk, config=config(s={"env": {name: "v", "PLAIN": "p"}}), base_env={})
    assert dict(out.values) == {"PLAIN": "p"}
    assert out.blocked == ((name, REASON_UNDECLARED),)


@pytest.mark.parametrize(
    "name",
    [
        "NODE_OPTIONS",
        "BASH_ENV",
        "SHELL",
        "HTTPS_PROXY",
        "NODE_TLS_REJECT_UNAUTHORIZED",
        "DOCKER_HOST",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "NPM_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "HOME",
        "OPENSSL_CONF",
        "openssl_conf",
        "node_options",
        "LD_PRELOAD",
        "DYLD_INSERT_LIBRARIES",
        "BASH_FUNC_foo%%",
        "GIT_CONFIG_COUNT",
        "NPM_CONFIG_REGISTRY",
        "TF_VAR_x",
    ],
)
def test_always_blocked_even_when_declared(name: str) -> None:
    """§12: NODE_OPTIONS blocked even when declared; BASH_ENV/SHELL; HTTPS_PROXY/… blocked."""
    sk = make_skill("s", primary=name, env=(name,))
    out = skill_env(sk, config=config(s={"env": {name: "v"}, "apiKey": "k"}), base_env={})
    assert dict(out.values) == {}
    assert out.blocked == ((name, REASON_ALWAYS_BLOCKED),)


def test_github_token_as_primary_env_with_api_key_is_blocked() -> None:
    """§13: GITHUB_TOKEN can never be injected, even as primaryEnv."""
    sk = make_skill("github", primary="GITHUB_TOKEN")
    out = skill_env(sk, config=config(github={"apiKey": SECRET}), base_env={})
    assert dict(out.values) == {}
    assert out.blocked == (("GITHUB_TOKEN", REASON_ALWAYS_BLOCKED),)


def test_nul_value_is_refused() -> None:
    sk = make_skill("s", env=("S_TOKEN",))
    cfg = config(s={"env": {"PLAIN": "a\0b", "S_TOKEN": "x\0y"}})
    out = skill_env(sk, config=cfg, base_env={})
    assert dict(out.values) == {}
    assert set(out.blocked) == {("PLAIN", REASON_NUL), ("S_TOKEN", REASON_NUL)}


def test_suspicious_values_only_warn(caplog: pytest.LogCaptureFixture) -> None:
    long_value = "x y" * 11000  # 33 000 chars: over 32 768
    b64 = "QUJD" * 25  # 100 chars of base64 alphabet
    sk = make_skill("s")
    cfg = config(s={"env": {"BIG": long_value, "BLOB": b64, "OK": "fine"}})
    with caplog.at_level(logging.WARNING, logger="skillbook.runtime.env"):
        out = skill_env(sk, config=cfg, base_env={})
    assert set(out.values) == {"BIG", "BLOB", "OK"}
    assert out.warnings == (
        "BIG: Value exceeds maximum length",
        "BLOB: Value looks like base64-encoded credential data",
    )
    assert "Suspicious skill env overrides for s: BIG" in caplog.text
    assert b64 not in caplog.text and long_value[:50] not in caplog.text


def test_base64_check_is_anchored_like_javascript() -> None:
    sk = make_skill("s")
    out = skill_env(sk, config=config(s={"env": {"A": "QUJD" * 25 + "\n"}}), base_env={})
    assert out.warnings == ()


def test_env_primary_beats_api_key() -> None:
    """§11.3 step 3: env.PRIMARY beats apiKey (the apiKey is not even resolved)."""
    sk = make_skill("w", primary="W_API_KEY")
    resolver = RecordingResolver()
    cfg = config(
        w={
            "env": {"W_API_KEY": "from-env"},
            "apiKey": {"source": "env", "provider": "default", "id": "X"},
        }
    )
    out = skill_env(sk, config=cfg, base_env={}, resolver=resolver)
    assert dict(out.values) == {"W_API_KEY": "from-env"}
    assert resolver.calls == []


def test_existing_base_value_is_kept() -> None:
    """Docs: env injected only if the variable isn't already set."""
    sk = make_skill("w", primary="W_API_KEY", env=("W_TOKEN",))
    cfg = config(w={"env": {"W_TOKEN": "skill", "UNITS": "metric"}, "apiKey": SECRET})
    base = {"W_TOKEN": "host", "W_API_KEY": "host-key", "UNITS": ""}
    out = skill_env(sk, config=cfg, base_env=base)
    assert dict(out.values) == {}
    assert out.apply(base) == base


def test_host_primary_env_keeps_secret_ref_unresolved() -> None:
    """§12: host-provided primaryEnv: raw SecretRef not resolved, host value kept."""
    sk = make_skill("w", primary="W_API_KEY")
    cfg = config(w={"apiKey": {"source": "env", "provider": "default", "id": "NOPE"}})
    out = skill_env(sk, config=cfg, base_env={"W_API_KEY": "host"})  # no resolver: no raise
    assert dict(out.values) == {}
    assert out.apply({"W_API_KEY": "host"}) == {"W_API_KEY": "host"}


def test_secret_ref_api_key_is_resolved() -> None:
    sk = make_skill("w", primary="W_API_KEY")
    cfg = config(w={"apiKey": {"source": "env", "provider": "default", "id": "VAULT_W"}})
    resolver = SecretResolver(cfg, env={"VAULT_W": SECRET})
    out = skill_env(sk, config=cfg, base_env={}, resolver=resolver)
    assert dict(out.values) == {"W_API_KEY": SECRET}


def test_template_api_key_is_resolved_through_the_resolver() -> None:
    sk = make_skill("w", primary="W_API_KEY")
    resolver = RecordingResolver()
    out = skill_env(sk, config=config(w={"apiKey": "${VAULT_W}"}), base_env={}, resolver=resolver)
    assert dict(out.values) == {"W_API_KEY": SECRET}
    assert resolver.calls == [(SecretRef("env", "default", "VAULT_W"), "skills.entries.w.apiKey")]


def test_unresolved_secret_ref_raises_naming_key_and_ref() -> None:
    sk = make_skill("w", key="weather", primary="W_API_KEY")
    cfg = config(weather={"apiKey": {"source": "env", "provider": "default", "id": "VAULT_W"}})
    with pytest.raises(SecretError) as info:
        skill_env(sk, config=cfg, base_env={})
    assert "skills.entries.weather.apiKey" in str(info.value)
    assert '"env:default:VAULT_W"' in str(info.value)
    with pytest.raises(SecretError) as info:
        skill_env(sk, config=cfg, base_env={}, resolver=SecretResolver(cfg, env={}))
    assert "skills.entries.weather.apiKey" in str(info.value)


# ----------------------------------------------------------------------- skillKey


def test_skill_key_lookup_not_name() -> None:
    """OpenClaw's snapshot path looks up by name; skillbook by skillKey (the fix)."""
    sk = make_skill("weather-pro", key="weather", primary="WEATHER_API_KEY")
    cfg = config(weather={"apiKey": SECRET}, **{"weather-pro": {"apiKey": "wrong"}})
    out = skill_env(sk, config=cfg, base_env={})
    assert out.skill_key == "weather"
    assert dict(out.values) == {"WEATHER_API_KEY": SECRET}


def test_no_entry_gives_an_empty_overlay() -> None:
    out = skill_env(make_skill("w", primary="W_API_KEY"), config=config(), base_env={})
    assert out == SkillEnv(skill_key="w")
    assert out.apply({"A": "1"}) == {"A": "1"}


# ----------------------------------------------------------------------- details


def test_keys_are_trimmed_and_empty_pairs_skipped() -> None:
    sk = make_skill("s", primary=" S_API_KEY ", env=(" S_TOKEN",))
    cfg = config(
        s={"env": {"  UNITS ": "metric", " ": "x", "EMPTY": "", "S_TOKEN ": "t"}, "apiKey": "k"}
    )
    out = skill_env(sk, config=cfg, base_env={})
    assert dict(out.values) == {"UNITS": "metric", "S_TOKEN": "t", "S_API_KEY": "k"}
    assert out.secret_keys == frozenset({"S_TOKEN", "S_API_KEY"})
    assert set(out.secret_values()) == {"k", "t"}


def test_declaration_is_case_sensitive_but_sensitivity_is_not() -> None:
    sk = make_skill("s", env=("OPENAI_API_KEY",))
    out = skill_env(sk, config=config(s={"env": {"openai_api_key": "v"}}), base_env={})
    assert out.blocked == (("openai_api_key", REASON_UNDECLARED),)


def test_repr_and_logs_never_show_values(caplog: pytest.LogCaptureFixture) -> None:
    sk = make_skill("s", primary="S_API_KEY")
    cfg = config(s={"apiKey": SECRET, "env": {"NODE_OPTIONS": SECRET + "-opt"}})
    with caplog.at_level(logging.WARNING, logger="skillbook.runtime.env"):
        out = skill_env(sk, config=cfg, base_env={})
    assert SECRET not in repr(out)
    assert "Blocked skill env overrides for s: NODE_OPTIONS" in caplog.text
    assert SECRET not in caplog.text


def test_apply_returns_a_new_dict_and_keeps_base_values() -> None:
    sk = make_skill("s", primary="S_API_KEY")
    out = skill_env(sk, config=config(s={"apiKey": SECRET, "env": {"A": "1"}}), base_env={})
    base = {"PATH": "/bin", "A": "host"}
    child = out.apply(base)
    assert child == {"PATH": "/bin", "A": "host", "S_API_KEY": SECRET}
    assert base == {"PATH": "/bin", "A": "host"}
    assert child is not base


def test_blocked_lists_are_the_appendix_data() -> None:
    assert isinstance(ALWAYS_BLOCKED_ENV_KEYS, frozenset)
    assert {"NODE_OPTIONS", "HOSTALIASES", "BASH_ENV"} <= HOST_DANGEROUS_ENV_KEYS
    assert {"HOME", "SSH_AUTH_SOCK", "GITHUB_TOKEN"} <= HOST_OVERRIDE_BLOCKED_ENV_KEYS
    assert "OPENSSL_CONF" in ALWAYS_BLOCKED_ENV_KEYS
    assert (
        frozenset(
            {
                "DYLD_",
                "LD_",
                "BASH_FUNC_",
                "GIT_CONFIG_",
                "NPM_CONFIG_",
                "CARGO_REGISTRIES_",
                "TF_VAR_",
            }
        )
        == ALWAYS_BLOCKED_ENV_PREFIXES
    )
    assert is_always_blocked(" ld_library_path ")
    assert not is_always_blocked("PATH") and not is_always_blocked("WEATHER_UNITS")
    assert is_sensitive("MYTOKEN") and is_sensitive("slack_bot_token")
    assert not is_sensitive("TOKEN_URL") and not is_sensitive("MYTOKEN\n")


def test_blocked_lists_cover_the_spec_appendix() -> None:
    spec = Path(__file__).resolve().parents[2] / ".." / "shared" / "spec" / "openclaw-skills.md"
    if not spec.is_file():
        pytest.skip(f"spec not found at {spec} (needs ../shared beside the checkout)")
    text = spec.read_text(encoding="utf-8")
    appendix = text[text.index("## Appendix A") : text.index("## Appendix B")]
    lines = {
        line.split(":", 1)[0]: line.split(":", 1)[1]
        for line in appendix.splitlines()
        if ":" in line
    }

    def names(label: str) -> frozenset[str]:
        body = next(v for k, v in lines.items() if k.startswith(label))
        return frozenset(re.findall(r"[A-Z_][A-Z0-9_]*", body.split("; plus")[0]))

    # The spec is 2026.4.12's list; skillbook blocks 2026.9.6's, a superset of it
    # (tests/runtime/test_env_policy.py), under every profile: never less than the spec.
    assert names("- Keys (blocked everywhere)") <= HOST_DANGEROUS_ENV_KEYS
    assert names("- Keys (override-only") <= HOST_OVERRIDE_BLOCKED_ENV_KEYS
    assert names("- Prefixes") == ALWAYS_BLOCKED_ENV_PREFIXES
