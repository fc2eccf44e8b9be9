"""``run`` says precisely what is missing: no model at all, or the key of the chosen provider."""

from __future__ import annotations

import json

import pytest

from cli.conftest import Shell
from skillbook.runtime import ModelNotConfigured
from skillbook.runtime.providers import NOT_CONFIGURED, resolve_model_config


@pytest.mark.parametrize(
    ("env", "code", "message"),
    [
        ({}, "no-model", NOT_CONFIGURED),
        (
            {"SKILLBOOK_MODEL": "gpt-4o"},
            "no-api-key",
            "no OpenAI API key for model gpt-4o: set OPENAI_API_KEY (or --api-key-env NAME)",
        ),
        (
            {"SKILLBOOK_MODEL": "claude-sonnet-4-5"},
            "no-api-key",
            "no Anthropic API key for model claude-sonnet-4-5: set ANTHROPIC_API_KEY "
            "(or --api-key-env NAME)",
        ),
        (
            {"SKILLBOOK_PROVIDER": "anthropic"},
            "no-api-key",
            "no Anthropic API key: set ANTHROPIC_API_KEY (or --api-key-env NAME)",
        ),
        ({"SKILLBOOK_PROVIDER": "gemini"}, "unknown-provider", None),
        ({"SKILLBOOK_BASE_URL": "http://127.0.0.1:9/v1"}, "no-model-name", None),
    ],
)
def test_the_error_names_what_is_missing(
    env: dict[str, str], code: str, message: str | None
) -> None:
    with pytest.raises(ModelNotConfigured) as info:
        resolve_model_config(env)
    assert info.value.code == code
    if message is not None:
        assert str(info.value) == message


def test_run_prints_the_precise_error_as_json(shell: Shell) -> None:
    env = {"SKILLBOOK_MODEL": "gpt-4o", "OPENAI_API_KEY": None, "ANTHROPIC_API_KEY": None}
    result = shell.run("run", "hello", "--json", env=env)
    assert result.exit_code == 2 and result.stderr == ""
    assert json.loads(result.stdout) == {
        "error": "no OpenAI API key for model gpt-4o: set OPENAI_API_KEY (or --api-key-env NAME)",
        "code": "no-api-key",
    }
    plain = shell.run("run", "hello", env={**env, "SKILLBOOK_MODEL": None})
    assert plain.exit_code == 2 and plain.stderr == f"skillbook: {NOT_CONFIGURED}\n"
    missing = shell.run("run", "hi", "--json", "--api-key-env", "NOPE_KEY", env=env)
    assert json.loads(missing.stdout)["code"] == "no-api-key"
