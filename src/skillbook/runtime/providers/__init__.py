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

from collections.abc import Callable, Mapping
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


@dataclass(frozen=True, slots=True)
class _VendorEnv:
    """Where one provider's settings come from when the flags leave them out."""

    label: str
    base_url_env: str
    key_env: str
    default_model: str


_VENDOR_ENV: Final = {
    "openai": _VendorEnv("OpenAI", "OPENAI_BASE_URL", "OPENAI_API_KEY", DEFAULT_OPENAI_MODEL),
    "anthropic": _VendorEnv(
        "Anthropic", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", DEFAULT_ANTHROPIC_MODEL
    ),
}


def resolve_model_config(
    env: Mapping[str, str],
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
) -> ModelConfig:
    """The settings :func:`model_from_env` uses; raises :class:`ModelNotConfigured`.

    In steps: the provider named (flag, ``SKILLBOOK_PROVIDER``) or guessed from what is
    set; then its base URL, its key (a local server needs none) and the model name.
    """

    def get(name: str) -> str | None:
        return _given(env.get(name))

    name = _named_provider(provider or get("SKILLBOOK_PROVIDER"))
    model = _given(model) or get("SKILLBOOK_MODEL")
    base_url = _given(base_url) or get("SKILLBOOK_BASE_URL")
    api_key = _given(api_key)
    if name is None:
        name = _guess_provider(get, model, base_url, api_key)
    vendor = _VENDOR_ENV[name]
    base_url = base_url or get(vendor.base_url_env)
    key = _api_key(api_key or get(vendor.key_env), vendor, base_url, model)
    return ModelConfig(name, _model_name(model, base_url, vendor), base_url, key)


def _given(value: str | None) -> str | None:
    """A setting with its blanks trimmed; blank is not given."""
    return (value or "").strip() or None


def _named_provider(value: str | None) -> str | None:
    name = (_given(value) or "").lower() or None
    if name is not None and name not in PROVIDERS:
        raise ModelNotConfigured(
            f"unknown provider {name!r}: use openai (any OpenAI-compatible server) or anthropic",
            code="unknown-provider",
        )
    return name


def _guess_provider(
    get: Callable[[str], str | None], model: str | None, base_url: str | None, api_key: str | None
) -> str:
    """The provider no one named: from the vendor variables set, the key given, the model."""
    openai_hint = bool(base_url or get("OPENAI_API_KEY") or get("OPENAI_BASE_URL"))
    anthropic_hint = bool(get("ANTHROPIC_API_KEY") or get("ANTHROPIC_BASE_URL"))
    claude = (model or "").lower().startswith("claude")
    if anthropic_hint and (not openai_hint or (claude and not base_url)):
        return "anthropic"
    if openai_hint or (api_key and not claude):
        return "openai"
    if api_key:
        return "anthropic"
    if model:
        # A model is named, only its key is missing: say that, for its provider.
        return "anthropic" if claude else "openai"
    raise ModelNotConfigured(NOT_CONFIGURED)


def _api_key(key: str | None, vendor: _VendorEnv, base_url: str | None, model: str | None) -> str:
    """The key, a placeholder for a server of one's own, else why there is none."""
    if key is not None:
        return key
    if base_url is not None:
        return PLACEHOLDER_API_KEY
    model_part = f" for model {model}" if model is not None else ""
    raise ModelNotConfigured(
        f"no {vendor.label} API key{model_part}: set {vendor.key_env} (or --api-key-env NAME)",
        code="no-api-key",
    )


def _model_name(model: str | None, base_url: str | None, vendor: _VendorEnv) -> str:
    """The model named, the vendor's default on its own endpoint, else why there is none."""
    if model is not None:
        return model
    if base_url is not None:
        raise ModelNotConfigured(
            f"no model name for {base_url}: set SKILLBOOK_MODEL or --model to a model "
            "the server serves (e.g. llama3.2 on Ollama)",
            code="no-model-name",
        )
    return vendor.default_model


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
