"""Chat models for the agent loop, and picking one from flags and the environment.

Input: an environment mapping and optional explicit settings. Output: a
:class:`~.base.ChatModel` — :class:`~.openai_chat.OpenAIChatModel` (any OpenAI-compatible
server), :class:`~.anthropic_messages.AnthropicModel`, or :class:`~.scripted.ScriptedModel`
for tests. The vendor packages
(``openai``, ``anthropic``) are imported only when such a model is made.

Precedence in :func:`model_from_env`: explicit arguments, then ``SKILLBOOK_PROVIDER``,
``SKILLBOOK_MODEL``, ``SKILLBOOK_BASE_URL``, then the vendor variables
``OPENAI_API_KEY``/``OPENAI_BASE_URL`` and ``ANTHROPIC_API_KEY``/``ANTHROPIC_BASE_URL``.
Without a provider named, a base URL or OpenAI variable selects ``openai``, Anthropic
variables select ``anthropic``; with both, a ``claude-*`` model name picks Anthropic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from skillbook.runtime import ModelNotConfigured
from skillbook.runtime.providers.anthropic_messages import AnthropicModel
from skillbook.runtime.providers.base import ChatModel
from skillbook.runtime.providers.openai_chat import OpenAIChatModel

__all__ = [
    "DEFAULT_ANTHROPIC_MODEL",
    "DEFAULT_OPENAI_MODEL",
    "NOT_CONFIGURED",
    "PROVIDERS",
    "ModelConfig",
    "model_from_env",
    "resolve_model_config",
]

PROVIDERS: Final = ("openai", "anthropic")
#: Used with the vendors' own endpoints when no model is named.
DEFAULT_OPENAI_MODEL: Final = "gpt-4o-mini"
DEFAULT_ANTHROPIC_MODEL: Final = "claude-sonnet-4-5"
#: Local servers (Ollama, llama.cpp, LM Studio …) take any key; the clients need one.
PLACEHOLDER_API_KEY: Final = "not-needed"
NOT_CONFIGURED: Final = (
    "no model configured: set SKILLBOOK_MODEL and OPENAI_API_KEY "
    "(or --base-url http://localhost:11434/v1 for Ollama), or ANTHROPIC_API_KEY"
)


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Which model to talk to, as resolved from flags and environment."""

    provider: str
    model: str
    base_url: str | None
    api_key: str

    def describe(self) -> str:
        """``provider:model @ url`` without the key."""
        return f"{self.provider}:{self.model}" + (f" @ {self.base_url}" if self.base_url else "")


def resolve_model_config(
    env: Mapping[str, str],
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
) -> ModelConfig:
    """The settings :func:`model_from_env` uses; raises :class:`ModelNotConfigured`."""

    def get(name: str) -> str | None:
        return (env.get(name) or "").strip() or None

    name = (provider or get("SKILLBOOK_PROVIDER") or "").strip().lower() or None
    if name is not None and name not in PROVIDERS:
        raise ModelNotConfigured(
            f"unknown provider {name!r}: use openai (any OpenAI-compatible server) or anthropic",
            code="unknown-provider",
        )
    model = (model or "").strip() or get("SKILLBOOK_MODEL")
    base_url = (base_url or "").strip() or get("SKILLBOOK_BASE_URL")
    api_key = (api_key or "").strip() or None
    if name is None:
        openai_hint = bool(base_url or get("OPENAI_API_KEY") or get("OPENAI_BASE_URL"))
        anthropic_hint = bool(get("ANTHROPIC_API_KEY") or get("ANTHROPIC_BASE_URL"))
        claude = (model or "").lower().startswith("claude")
        if anthropic_hint and (not openai_hint or (claude and not base_url)):
            name = "anthropic"
        elif openai_hint or (api_key and not claude):
            name = "openai"
        elif api_key:
            name = "anthropic"
        elif model:
            # A model is named, only its key is missing: say that, for its provider.
            name = "anthropic" if claude else "openai"
        else:
            raise ModelNotConfigured(NOT_CONFIGURED)
    if name == "openai":
        base_url = base_url or get("OPENAI_BASE_URL")
        key = api_key or get("OPENAI_API_KEY")
        default_model = DEFAULT_OPENAI_MODEL
        missing_key = "no OpenAI API key: set OPENAI_API_KEY (or --api-key-env NAME)"
    else:
        base_url = base_url or get("ANTHROPIC_BASE_URL")
        key = api_key or get("ANTHROPIC_API_KEY")
        default_model = DEFAULT_ANTHROPIC_MODEL
        missing_key = "no Anthropic API key: set ANTHROPIC_API_KEY (or --api-key-env NAME)"
    if key is None:
        if base_url is None:
            if model is not None:
                missing_key = missing_key.replace(" key:", f" key for model {model}:", 1)
            raise ModelNotConfigured(missing_key, code="no-api-key")
        key = PLACEHOLDER_API_KEY
    if model is None:
        if base_url is not None:
            raise ModelNotConfigured(
                f"no model name for {base_url}: set SKILLBOOK_MODEL or --model to a model "
                "the server serves (e.g. llama3.2 on Ollama)",
                code="no-model-name",
            )
        model = default_model
    return ModelConfig(name, model, base_url, key)


def model_from_env(
    env: Mapping[str, str],
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
) -> ChatModel:
    """The chat model the flags and ``env`` point at; raises :class:`ModelNotConfigured`."""
    cfg = resolve_model_config(
        env, provider=provider, model=model, base_url=base_url, api_key=api_key
    )
    if cfg.provider == "openai":
        return OpenAIChatModel(cfg.model, base_url=cfg.base_url, api_key=cfg.api_key)
    return AnthropicModel(cfg.model, base_url=cfg.base_url, api_key=cfg.api_key)
