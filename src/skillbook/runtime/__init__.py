"""What a running agent uses: sessions, the watcher, tools, approval, the agent loop, models.

``session`` (the current book, refreshed by version or change; ``reload_report``),
``watch`` (+ ``_watch_parts``, ``_watch_journal``: file changes to reloads);
``tools`` (``read`` and ``exec``; ``_proc`` runs a command, ``process_group`` ends it),
``find_skills`` (the selection tool), ``env`` (a skill's environment), ``secrets``
(``apiKey`` refs); ``approval`` and ``exec_gate`` (whether a model's command runs);
``agent`` (the loop), ``turn`` (its events and results), ``recording`` (the recorder
seam); ``providers`` (chat models); ``trigger_eval`` (do the right skills trigger).
It never imports the experience engine, only the recorder protocol.

This ``__init__`` holds the exceptions the runtime's public functions raise; naming one
loads nothing else (``from skillbook.runtime import ModelError``)."""

from __future__ import annotations

from skillbook.errors import SkillbookError


class SecretError(SkillbookError):
    """A secret (``SecretRef`` or ``${ENV}`` template) could not be resolved.

    The message names the config key and the ref, e.g.
    ``skills.entries.weather.apiKey: cannot resolve SecretRef "env:default:WEATHER_KEY": …``,
    and never contains the secret value, file contents or command output.
    """

    def __init__(self, message: str, *, key: str, ref: str) -> None:
        super().__init__(message)
        self.key = key
        self.ref = ref


class ModelNotConfigured(SkillbookError):
    """No chat model is configured (or its client package is missing); the message says how to fix it.

    ``.code`` says which: ``no-model`` (nothing set), ``no-api-key`` (a provider or
    model is chosen but its key is missing), ``no-model-name`` (an endpoint without a
    model name), ``unknown-provider`` or ``missing-package``.
    """

    def __init__(self, message: str, *, code: str = "no-model") -> None:
        super().__init__(message)
        self.code = code


class ModelError(SkillbookError):
    """A model request failed (connection, HTTP status, malformed stream); one-line message."""
