"""Config values refused when the file is read, not when a command starts.

Environment names holding ``=`` or NUL, non-finite or negative timeouts, and secret
values kept out of every error message (``skillbook.config.checks`` and the redaction
in ``skillbook.config.errors``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillbook.config.file import Config, load_config
from skillbook.errors import ConfigError

SECRET = "sk-live-0123456789abcdef"


def error_of(obj: Any) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        Config.from_mapping(obj)
    return info.value


@pytest.mark.parametrize(
    ("obj", "key_path", "fragment"),
    [
        (
            {"skills": {"entries": {"w": {"env": {"A=B": "x"}}}}},
            'skills.entries.w.env["A=B"]',
            'cannot contain "="',
        ),
        (
            {"skills": {"entries": {"w": {"env": {"A\0B": "x"}}}}},
            'skills.entries.w.env["A\\u0000B"]',
            "NUL character",
        ),
        (
            {"secrets": {"providers": {"p": {"source": "exec", "env": {"X=1": "v"}}}}},
            'secrets.providers.p.env["X=1"]',
            'cannot contain "="',
        ),
        (
            {"secrets": {"providers": {"p": {"source": "exec", "env": {"TOKEN": "a\0b"}}}}},
            "secrets.providers.p.env.TOKEN",
            "NUL character (the value is not shown)",
        ),
        (
            {"secrets": {"providers": {"p": {"source": "exec", "passEnv": ["OK", "B=C"]}}}},
            "secrets.providers.p.passEnv[1]",
            'cannot contain "="',
        ),
        (
            {"secrets": {"providers": {"p": {"source": "exec", "timeoutMs": float("nan")}}}},
            "secrets.providers.p.timeoutMs",
            "expected a finite number > 0, got nan",
        ),
        (
            {"secrets": {"providers": {"p": {"source": "exec", "timeoutMs": float("inf")}}}},
            "secrets.providers.p.timeoutMs",
            "finite number > 0, got inf",
        ),
        (
            {"secrets": {"providers": {"p": {"source": "exec", "timeoutMs": -5}}}},
            "secrets.providers.p.timeoutMs",
            "expected a number > 0, got -5",
        ),
        (
            {"secrets": {"providers": {"p": {"source": "file", "maxBytes": "big"}}}},
            "secrets.providers.p.maxBytes",
            "expected a number > 0",
        ),
        (
            {
                "skills": {
                    "mcp": {"servers": [{"name": "s", "command": ["x"], "env": {"A=B": "1"}}]}
                }
            },
            'skills.mcp.servers[0].env["A=B"]',
            'cannot contain "="',
        ),
        (
            {"skills": {"mcp": {"servers": [{"name": "s", "command": ["x"], "env": {"A": "\0"}}]}}},
            "skills.mcp.servers[0].env.A",
            "NUL character",
        ),
        (
            {"skills": {"mcp": {"servers": [{"name": "s", "url": "http://x/", "timeout": 1e999}]}}},
            "skills.mcp.servers[0].timeout",
            "number of seconds > 0",
        ),
        (
            {"skills": {"mcp": {"servers": [{"name": "s", "url": "http://x/", "timeout": -1}]}}},
            "skills.mcp.servers[0].timeout",
            "number of seconds > 0",
        ),
    ],
)
def test_values_that_would_fail_at_run_time_are_config_errors(
    obj: Any, key_path: str, fragment: str
) -> None:
    err = error_of(obj)
    assert err.key_path == key_path
    assert f"{key_path}: " in str(err) and fragment in str(err)


def test_a_nul_in_a_skill_env_value_is_left_to_the_run_time_refusal() -> None:
    """OpenClaw refuses such a value per key, with a warning; the config stays valid."""
    cfg = Config.from_mapping({"skills": {"entries": {"w": {"env": {"UNITS": "a\0b"}}}}})
    entry = cfg.entry("w")
    assert entry is not None and entry.env["UNITS"] == "a\0b"


def test_json5_infinity_in_a_file_is_refused_with_the_file_and_key(tmp_path: Path) -> None:
    file = tmp_path / "openclaw.json"
    file.write_text('{secrets: {providers: {p: {source: "exec", timeoutMs: Infinity}}}}\n')
    with pytest.raises(ConfigError) as info:
        load_config(file)
    assert str(info.value).startswith(f"{file}: secrets.providers.p.timeoutMs: ")


@pytest.mark.parametrize(
    ("text", "key_path", "got"),
    [
        ('{"skills": "\\udcff"}', "skills", 'expected object, got "\ufffd"'),
        (
            '{skills: {limits: {maxSkillsInPrompt: "a\\ud800"}}}',
            "skills.limits.maxSkillsInPrompt",
            'got "a\ufffd"',
        ),
        ('{"plugins": {"allow": "\\ud800"}}', "plugins.allow", 'got "\ufffd"'),
    ],
)
def test_a_wrong_value_holding_a_lone_surrogate_escape_is_a_config_error(
    tmp_path: Path, text: str, key_path: str, got: str
) -> None:
    """JSON allows a lone "\\ud800"; msgspec could not put it into its message and
    load stopped with a UnicodeEncodeError traceback (found by the crash hunt)."""
    file = tmp_path / "skillbook.json"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(file)
    assert info.value.key_path == key_path
    assert str(info.value).endswith(got)


@pytest.mark.parametrize(
    ("entry", "key_path"),
    [
        ({"apiKey": 12345678901234}, "skills.entries.w.apiKey"),
        ({"apiKey": [SECRET]}, "skills.entries.w.apiKey"),
        ({"apiKey": {"source": "env", "provider": "p", "id": 7}}, "skills.entries.w.apiKey.id"),
        ({"env": {"TOKEN": 12345678901234}}, "skills.entries.w.env.TOKEN"),
        ({"env": [SECRET]}, "skills.entries.w.env"),
    ],
)
def test_errors_never_echo_api_key_or_env_values(entry: dict[str, Any], key_path: str) -> None:
    err = error_of({"skills": {"entries": {"w": entry}}})
    text = str(err)
    assert err.key_path == key_path
    assert SECRET not in text and "12345678901234" not in text and "7" not in text.split(": ")[-1]
    assert text.endswith("(the value is not shown)")


def test_other_errors_still_show_the_value() -> None:
    err = error_of({"skills": {"limits": {"maxSkillsInPrompt": "many"}}})
    assert str(err).endswith('got "many"')
