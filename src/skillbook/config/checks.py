"""Value checks a schema cannot express: environment names, timeouts, secret providers.

Private to :mod:`skillbook.config.file` (and the MCP server specs): a value that would only
fail when a command starts (``subprocess`` refuses an environment name holding ``=``
or NUL; ``NaN`` or ``Infinity`` seconds never time out) is refused when the config is
read, as a :class:`~skillbook.errors.ConfigError` naming the key path. Messages name
keys, never the values of ``env`` or ``apiKey`` entries: they may be secrets.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from skillbook.base.shell_words import entry_problem
from skillbook.config.errors import key_path
from skillbook.errors import ConfigError

#: Numbers of ``secrets.providers.<name>`` that must be finite and > 0.
_PROVIDER_NUMBERS: Final = ("timeoutMs", "maxBytes", "maxOutputBytes")


def _fail(where: str, segments: list[str | int], detail: str, file: Path | None) -> ConfigError:
    path = key_path(segments)
    return ConfigError(f"{where}: {path}: {detail}", key_path=path, file=file)


def env_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be an environment variable name, or None."""
    if "=" in name:
        return 'an environment variable name cannot contain "="'
    if "\0" in name:
        return "an environment variable name cannot contain a NUL character"
    return None


def check_env(
    env: Mapping[str, Any],
    segments: list[str | int],
    where: str,
    file: Path | None,
    *,
    values: bool = True,
) -> None:
    """Names (and, with ``values``, string values) fit for a child's environment."""
    for name, value in env.items():
        problem = env_name_problem(str(name))
        if problem is not None:
            raise _fail(where, [*segments, str(name)], problem, file)
        if values and isinstance(value, str) and "\0" in value:
            detail = "the value contains a NUL character (the value is not shown)"
            raise _fail(where, [*segments, str(name)], detail, file)


def positive_number_problem(value: Any) -> str | None:
    """Why ``value`` is not a finite number > 0 (JSON5 allows ``NaN`` and ``Infinity``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "expected a number > 0"
    if not math.isfinite(value):
        return f"expected a finite number > 0, got {value}"
    if value <= 0:
        return f"expected a number > 0, got {value:g}"
    return None


def check_secrets(raw: Any, where: str, file: Path | None) -> None:
    """``secrets.providers.<name>``: env names and values, ``passEnv`` names, numbers."""
    if not isinstance(raw, Mapping):
        return
    providers = raw.get("providers")
    if not isinstance(providers, Mapping):
        return
    for name, provider in providers.items():
        if not isinstance(provider, Mapping):
            continue
        at: list[str | int] = ["secrets", "providers", str(name)]
        env = provider.get("env")
        if env is not None:
            if not isinstance(env, Mapping) or not all(isinstance(v, str) for v in env.values()):
                raise _fail(where, [*at, "env"], "expected an object of strings", file)
            check_env(env, [*at, "env"], where, file)
        pass_env = provider.get("passEnv")
        if pass_env is not None:
            if not isinstance(pass_env, list) or not all(isinstance(n, str) for n in pass_env):
                raise _fail(where, [*at, "passEnv"], "expected an array of strings", file)
            for index, env_name in enumerate(pass_env):
                problem = env_name_problem(env_name)
                if problem is not None:
                    raise _fail(where, [*at, "passEnv", index], problem, file)
        for key in _PROVIDER_NUMBERS:
            if key in provider:
                problem = positive_number_problem(provider[key])
                if problem is not None:
                    raise _fail(where, [*at, key], problem, file)


def check_allowlist(
    entries: tuple[str, ...], segments: list[str | int], where: str, file: Path | None
) -> None:
    """``exec.allow`` entries: each a simple command (no operator, no substitution)."""
    for index, entry in enumerate(entries):
        problem = entry_problem(entry)
        if problem is not None:
            raise _fail(where, [*segments, index], problem, file)
