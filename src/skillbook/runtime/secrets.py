"""Resolving ``apiKey`` secrets: ``SecretRef {source, provider, id}`` and ``${ENV}`` templates.

Input: a :class:`~skillbook.config.file.SecretRef` (or an ``apiKey`` string), the config
key it came from (``skills.entries.weather.apiKey``) and, through
:class:`SecretResolver`, the providers of ``secrets.providers`` in the raw config
plus an environment mapping. Output: a :class:`Secret`, a wrapper whose ``str`` and
``repr`` are ``'***'``; the value itself comes out only through
:meth:`Secret.reveal`.

Sources (OpenClaw's ``secrets.providers.<name>`` shapes, read from ``Config.raw``):

``env``
    ``id`` is a variable of the resolver's environment (missing or empty = error).
    An unconfigured provider is fine when it is the default alias (``"default"``,
    or ``secrets.defaults.env``); a configured one may restrict ids with ``allowlist``.
``file``
    ``{"source": "file", "path": "~/secrets.json", "mode": "json" | "singleValue"}``.
    ``json`` (the default): ``id`` is a JSON pointer (``/openai/apiKey``) into the
    object in the file. ``singleValue``: the whole file, trimmed (``id`` is not used;
    OpenClaw writes ``"value"``). With no provider configured and an absolute ``id``,
    that file is read as a single value. ``maxBytes`` caps the size (1 MiB).
``exec``
    ``{"source": "exec", "command": ["prog", "arg"], "timeoutMs": 5000}``: run
    without a shell, ``id`` appended as the last argument; stdout, trimmed, is the
    secret. OpenClaw's form ``{"command": "/abs/prog", "args": [...]}`` works too: it
    gets ``{"protocolVersion": 1, "provider", "ids"}`` on stdin (both forms do) and
    must answer ``{"protocolVersion": 1, "values": {id: secret}}`` unless
    ``jsonOnly: false``. With ``passEnv`` or ``env`` the command sees only those
    variables (as in OpenClaw); without either it inherits the resolver's environment.
    Non-zero exit, timeout or empty output is an error.

``${ENV_NAME}`` templates: an ``apiKey`` *string* that is exactly ``${NAME}`` (NAME
upper-case, as OpenClaw's ``^\\$\\{([A-Z][A-Z0-9_]{0,127})\\}$``) is read as the ref
``env:default:NAME`` (:func:`template_ref`). OpenClaw would inject such a string
literally when nothing resolved it upstream; skillbook resolves it.

Every failure raises :class:`~skillbook.runtime.SecretError` naming the config key and
the ref (``env:default:WEATHER_KEY``). Messages never include the value, the file's
contents or the command's output, and are raised outside ``except`` blocks so that
no chained exception carries them either (a ``JSONDecodeError`` keeps the whole
document in ``.doc``, ``TimeoutExpired`` the partial output).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol

from skillbook.config.file import Config, SecretRef
from skillbook.runtime import SecretError
from skillbook.runtime.process_group import exited, kill_group

__all__ = [
    "DEFAULT_EXEC_TIMEOUT_MS",
    "DEFAULT_FILE_MAX_BYTES",
    "DEFAULT_PROVIDER",
    "REDACTED",
    "Secret",
    "SecretLookup",
    "SecretResolver",
    "redact",
    "ref_label",
    "template_ref",
]

REDACTED: Final = "***"
DEFAULT_PROVIDER: Final = "default"
DEFAULT_FILE_MAX_BYTES: Final = 1024 * 1024
DEFAULT_EXEC_TIMEOUT_MS: Final = 5000
DEFAULT_EXEC_MAX_OUTPUT_BYTES: Final = 1024 * 1024
_TEMPLATE_RE: Final = re.compile(r"^\$\{([A-Z][A-Z0-9_]{0,127})\}$")


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each secret value replaced by :data:`REDACTED` (longest first, so a
    secret that contains another is replaced whole); used for ``exec`` output and for
    recorded sessions alike."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


class Secret:
    """A secret value in flight: prints as ``***``; :meth:`reveal` gives the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"

    def __str__(self) -> str:
        return REDACTED

    def __format__(self, spec: str) -> str:
        return format(REDACTED, spec)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __reduce__(self) -> Any:
        # Pickling would write the value out; a secret has no business on disk.
        raise TypeError("Secret values cannot be pickled")


class SecretLookup(Protocol):
    """What :func:`skillbook.runtime.env.skill_env` needs: resolve one ref or raise."""

    def resolve(self, ref: SecretRef, *, key: str) -> Secret: ...


def ref_label(ref: SecretRef) -> str:
    """OpenClaw's label for a ref: ``source:provider:id``."""
    return f"{ref.source}:{ref.provider}:{ref.id}"


def template_ref(value: str, *, provider: str = DEFAULT_PROVIDER) -> SecretRef | None:
    """The env ref a ``${NAME}`` template string stands for, or None for a plain string."""
    m = _TEMPLATE_RE.match(value.strip())
    return SecretRef("env", provider, m.group(1)) if m else None


class SecretResolver:
    """Resolves refs against ``secrets.providers`` of a config and an environment.

    ``env`` is the environment ``env`` refs read (default: ``os.environ`` at each
    lookup). Resolved values are cached on this object (``cache=False`` turns that
    off), so an exec provider runs once per ref, not once per tool call.
    """

    def __init__(
        self,
        config: Config | Mapping[str, Any] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        cache: bool = True,
    ) -> None:
        raw = config.raw if isinstance(config, Config) else (config or {})
        secrets = raw.get("secrets") if isinstance(raw, Mapping) else None
        self._secrets: Mapping[str, Any] = secrets if isinstance(secrets, Mapping) else {}
        self._env = env
        self._cache: dict[SecretRef, Secret] | None = {} if cache else None
        self._lock = threading.Lock()

    @property
    def env(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env

    def resolve(self, ref: SecretRef, *, key: str = "secret") -> Secret:
        """The secret ``ref`` points at; raises :class:`SecretError` naming ``key``."""
        if self._cache is not None:
            with self._lock:
                hit = self._cache.get(ref)
            if hit is not None:
                return hit
        value = self._lookup(ref, key)
        if not value.strip():
            raise _error(key, ref, "the secret is empty")
        secret = Secret(value.strip())
        if self._cache is not None:
            with self._lock:
                self._cache[ref] = secret
        return secret

    # ------------------------------------------------------------------ providers

    def _default_alias(self, source: str) -> str:
        defaults = self._secrets.get("defaults")
        alias = defaults.get(source) if isinstance(defaults, Mapping) else None
        return alias.strip() if isinstance(alias, str) and alias.strip() else DEFAULT_PROVIDER

    def _provider(self, ref: SecretRef, key: str) -> Mapping[str, Any] | None:
        providers = self._secrets.get("providers")
        provider = providers.get(ref.provider) if isinstance(providers, Mapping) else None
        if provider is None:
            return None
        if not isinstance(provider, Mapping):
            raise _error(key, ref, f"secrets.providers.{ref.provider} is not an object")
        if provider.get("source") != ref.source:
            raise _error(
                key,
                ref,
                f'secret provider "{ref.provider}" has source '
                f'{json.dumps(provider.get("source"))} but the ref asks for "{ref.source}"',
            )
        return provider

    def _lookup(self, ref: SecretRef, key: str) -> str:
        provider = self._provider(ref, key)
        if ref.source == "env":
            return self._from_env(ref, key, provider)
        if ref.source == "file":
            return self._from_file(ref, key, provider)
        if ref.source == "exec":
            if provider is None:
                raise _error(key, ref, _not_configured(ref))
            return _from_exec(ref, key, provider, self.env)
        raise _error(key, ref, f"unknown secret source {json.dumps(ref.source)}")

    def _from_env(self, ref: SecretRef, key: str, provider: Mapping[str, Any] | None) -> str:
        if provider is None and ref.provider not in {DEFAULT_PROVIDER, self._default_alias("env")}:
            raise _error(key, ref, _not_configured(ref))
        allow = provider.get("allowlist") if provider is not None else None
        if isinstance(allow, list) and ref.id not in allow:
            raise _error(
                key,
                ref,
                f'environment variable "{ref.id}" is not in '
                f"secrets.providers.{ref.provider}.allowlist",
            )
        value = self.env.get(ref.id)
        if not value:
            raise _error(key, ref, f'environment variable "{ref.id}" is missing or empty')
        return value

    def _from_file(self, ref: SecretRef, key: str, provider: Mapping[str, Any] | None) -> str:
        if provider is None:
            if not os.path.isabs(os.path.expanduser(ref.id)):
                raise _error(key, ref, _not_configured(ref) + " and the id is not an absolute path")
            return _read_text(Path(os.path.expanduser(ref.id)), key, ref, DEFAULT_FILE_MAX_BYTES)
        where = f"secrets.providers.{ref.provider}"
        path = provider.get("path")
        if not isinstance(path, str) or not path.strip():
            raise _error(key, ref, f"{where}.path is missing")
        file = Path(os.path.expanduser(path.strip()))
        if not file.is_absolute():
            raise _error(key, ref, f"{where}.path must be an absolute path")
        text = _read_text(
            file, key, ref, _positive_int(provider.get("maxBytes"), DEFAULT_FILE_MAX_BYTES)
        )
        mode = provider.get("mode", "json")
        if mode == "singleValue":
            return text
        if mode != "json":
            raise _error(key, ref, f'{where}.mode must be "json" or "singleValue"')
        failure = None
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            failure = f"{file} is not valid JSON (line {exc.lineno} column {exc.colno})"
        if failure is not None:  # raised outside the handler: no __context__ holding .doc
            raise _error(key, ref, failure)
        return _json_pointer(document, ref, key, file)


# ---------------------------------------------------------------------- helpers


def _error(key: str, ref: SecretRef, reason: str) -> SecretError:
    label = ref_label(ref)
    return SecretError(f'{key}: cannot resolve SecretRef "{label}": {reason}', key=key, ref=label)


def _not_configured(ref: SecretRef) -> str:
    return f'secret provider "{ref.provider}" is not configured (secrets.providers)'


def _positive_int(value: Any, default: int) -> int:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    return int(value) if ok else default


def _read_text(file: Path, key: str, ref: SecretRef, max_bytes: int) -> str:
    failure = None
    data = b""
    try:
        with file.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        failure = f"cannot read {file}: {exc.strerror or type(exc).__name__}"
    if failure is None and len(data) > max_bytes:
        failure = f"{file} is larger than {max_bytes} bytes"
    text = None
    if failure is None:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:  # .object holds the bytes: raise outside the handler
            failure = f"{file} is not UTF-8 text"
    if text is None:
        raise _error(key, ref, failure or "unreadable")
    return text


def _json_pointer(document: Any, ref: SecretRef, key: str, file: Path) -> str:
    pointer = ref.id
    if pointer and not pointer.startswith("/"):
        raise _error(key, ref, f'the id must be a JSON pointer such as "/openai/apiKey" for {file}')
    current = document
    walked = ""
    for raw in pointer.split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        walked += "/" + raw
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            raise _error(key, ref, f'JSON pointer "{walked}" not found in {file}')
    if not isinstance(current, str):
        kind = "an object" if isinstance(current, dict) else type(current).__name__
        raise _error(key, ref, f'JSON pointer "{pointer}" in {file} is {kind}, not a string')
    return current


def _from_exec(
    ref: SecretRef, key: str, provider: Mapping[str, Any], env: Mapping[str, str]
) -> str:
    openclaw_form = isinstance(provider.get("command"), str)
    argv = _exec_argv(ref, key, provider)
    child_env = _exec_env(provider, env)
    timeout_ms = _positive_int(provider.get("timeoutMs"), DEFAULT_EXEC_TIMEOUT_MS)
    max_out = _positive_int(provider.get("maxOutputBytes"), DEFAULT_EXEC_MAX_OUTPUT_BYTES)
    request = json.dumps({"protocolVersion": 1, "provider": ref.provider, "ids": [ref.id]})
    cwd = os.path.dirname(argv[0]) if os.path.isabs(argv[0]) else None
    ran = _run_provider(argv, request.encode(), child_env, cwd, timeout_ms / 1000)
    if isinstance(ran, str):
        if ran == _TIMED_OUT:
            raise _error(key, ref, f'exec provider "{ref.provider}" timed out after {timeout_ms}ms')
        raise _error(key, ref, f'exec provider "{ref.provider}" could not run {argv[0]}: {ran}')
    text = _exec_output(ran, ref, key, max_out)
    return _exec_value(text, ref, key, json_only=bool(provider.get("jsonOnly", openclaw_form)))


def _exec_argv(ref: SecretRef, key: str, provider: Mapping[str, Any]) -> list[str]:
    """The provider's command line: OpenClaw's ``command`` + ``args`` (the id goes on
    stdin), or skillbook's ``command`` list with the id appended."""
    command = provider.get("command")
    argv: list[Any] | None = None
    if isinstance(command, str):
        extra = provider.get("args", [])
        argv = [command, *extra] if isinstance(extra, list) else None
    elif isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        argv = [*command, ref.id]
    if not argv or not all(isinstance(a, str) for a in argv) or not argv[0].strip():
        where = f"secrets.providers.{ref.provider}"
        raise _error(key, ref, f"{where}.command must be a non-empty list of strings")
    return [os.path.expanduser(argv[0]), *argv[1:]]


def _exec_env(provider: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    """With ``passEnv`` or ``env`` only those variables, else the resolver's environment."""
    if "passEnv" not in provider and "env" not in provider:
        return dict(env)
    child_env = {k: env[k] for k in provider.get("passEnv") or [] if k in env}
    child_env.update({str(k): str(v) for k, v in dict(provider.get("env") or {}).items()})
    return child_env


def _exec_output(ran: tuple[int, bytes], ref: SecretRef, key: str, max_out: int) -> str:
    """The provider's stdout as text, when it exited 0 and printed something not too long."""
    code, stdout = ran
    if code != 0:
        raise _error(key, ref, f'exec provider "{ref.provider}" exited with code {code}')
    if len(stdout) > max_out:
        raise _error(key, ref, f'exec provider "{ref.provider}" printed more than {max_out} bytes')
    text = stdout.decode("utf-8", errors="replace").strip()
    if not text:
        raise _error(key, ref, f'exec provider "{ref.provider}" printed nothing')
    return text


_TIMED_OUT: Final = "timed out"
_POLL_S: Final = 0.05


def _run_provider(
    argv: list[str], request: bytes, env: dict[str, str], cwd: str | None, timeout_s: float
) -> tuple[int, bytes] | str:
    """``(exit code, stdout)`` of an exec provider, or why it did not finish.

    The provider leads its own process group, killed when it times out and as soon
    as it exits, so neither it nor a child it left behind keeps running (or keeps its
    output pipe open). Partial output is never kept: it may hold the secret.
    """
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=os.name == "posix",
        )
    except (OSError, ValueError) as exc:
        return (exc.strerror if isinstance(exc, OSError) else None) or type(exc).__name__
    deadline = time.monotonic() + timeout_s
    given: bytes | None = request
    stdout: bytes | None = None
    try:
        while stdout is None and time.monotonic() < deadline:
            wait = min(_POLL_S, max(0.0, deadline - time.monotonic()))
            try:
                stdout, _ = proc.communicate(given, timeout=wait)
            except subprocess.TimeoutExpired:  # .output holds partial stdout: not kept
                given = None  # sent once; communicate() goes on where it stopped
                if os.name == "posix" and exited(proc):
                    kill_group(proc.pid)  # a child holding the pipe ends with it
    finally:
        if os.name == "posix":
            # Also after a normal exit: its group id stays reserved while a member lives.
            kill_group(proc.pid)
        if proc.returncode is None:
            proc.kill()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        proc.wait()
    return _TIMED_OUT if stdout is None else (proc.returncode, stdout)


def _exec_value(text: str, ref: SecretRef, key: str, *, json_only: bool) -> str:
    name = f'exec provider "{ref.provider}"'
    parsed: Any = None
    try:
        parsed = json.loads(text)
        is_json = True
    except json.JSONDecodeError:
        is_json = False
    if not is_json:
        if json_only:
            raise _error(key, ref, f"{name} did not answer with JSON (jsonOnly)")
        return text
    if not isinstance(parsed, dict) or "protocolVersion" not in parsed:
        if json_only:
            raise _error(key, ref, f"{name} must answer with a protocol object (jsonOnly)")
        return parsed if isinstance(parsed, str) else text
    if parsed.get("protocolVersion") != 1:
        raise _error(key, ref, f"{name}: protocolVersion must be 1")
    errors = parsed.get("errors")
    if isinstance(errors, dict) and ref.id in errors:
        raise _error(key, ref, f'{name} reported an error for id "{ref.id}"')
    values = parsed.get("values")
    if not isinstance(values, dict) or ref.id not in values:
        raise _error(key, ref, f'{name} answer has no value for id "{ref.id}"')
    value = values[ref.id]
    if not isinstance(value, str):
        raise _error(key, ref, f'{name} value for id "{ref.id}" is not a string')
    return value
