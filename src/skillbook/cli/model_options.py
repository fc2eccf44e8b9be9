"""The options that pick a chat model, shared by ``run`` and ``chat``.

A model comes from the flags, else ``SKILLBOOK_*``/``OPENAI_*``/``ANTHROPIC_*``
variables (see :func:`skillbook.runtime.providers.model_from_env`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from skillbook.cli.confirm import CONFIRM_ENV
from skillbook.cli.context import fail
from skillbook.runtime import ModelNotConfigured
from skillbook.runtime.agent import DEFAULT_MAX_STEPS

F = TypeVar("F", bound=Callable[..., Any])


def model_options(fn: F) -> F:
    """The options that pick the model, shared by ``run`` and ``chat``."""
    options = [
        click.option("--model", "-m", help="Model name (default: $SKILLBOOK_MODEL)."),
        click.option(
            "--base-url",
            help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama); "
            "default: $SKILLBOOK_BASE_URL, $OPENAI_BASE_URL or $ANTHROPIC_BASE_URL.",
        ),
        click.option(
            "--api-key-env",
            metavar="NAME",
            help="Read the API key from this environment variable "
            "(default: OPENAI_API_KEY or ANTHROPIC_API_KEY).",
        ),
        click.option(
            "--provider",
            type=click.Choice(["openai", "anthropic"]),
            help="Wire protocol (default: $SKILLBOOK_PROVIDER, else guessed from the variables set).",
        ),
        click.option(
            "--max-steps",
            type=click.IntRange(min=1),
            default=DEFAULT_MAX_STEPS,
            show_default=True,
            help="Most model calls per request.",
        ),
        click.option(
            "--yes",
            "-y",
            is_flag=True,
            help="Run every command the model asks for without asking (trusted model and "
            "skills only). Default: ask on a terminal, refuse without one, unless "
            "skills.exec in the config allows the command.",
        ),
        click.option(
            "--confirm/--no-confirm",
            envvar=CONFIRM_ENV,
            default=None,
            help="Ask about every command, even those skills.exec allows "
            "($SKILLBOOK_CONFIRM_EXEC=1). --no-confirm is deprecated and does nothing.",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def build_model(
    provider: str | None, model: str | None, base_url: str | None, api_key_env: str | None
) -> tuple[Any, ModelNotConfigured | None]:
    """``(model, None)`` or ``(None, the error: a one-line how-to and its .code)``."""
    from skillbook.runtime.providers import model_from_env

    api_key = None
    if api_key_env:
        api_key = os.environ.get(api_key_env, "").strip()
        if not api_key:
            fail(
                f"--api-key-env {api_key_env}: that environment variable is not set or empty",
                error="no-api-key",
            )
    try:
        return (
            model_from_env(
                os.environ, provider=provider, model=model, base_url=base_url, api_key=api_key
            ),
            None,
        )
    except ModelNotConfigured as exc:
        return None, exc
