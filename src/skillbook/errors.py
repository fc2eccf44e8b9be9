"""The exceptions skillbook raises.

Bad *skills* never raise: they become :class:`skillbook.diagnostics.Diagnostic`
values. Exceptions are for callers' mistakes and for inputs that have no sensible
degraded reading, such as a configuration file that does not validate::

    Exception
     └── SkillbookError              root: ``except SkillbookError`` catches them all
          ├── ConfigError            (also a ValueError) bad or unreadable config;
          │                          ``.key_path`` like ``skills.load.extraDirs[0]``,
          │                          ``.file`` the config file when known
          ├── SkillNotFound          (also a LookupError) no skill by that name/key
          ├── AgentNotFound          (also a LookupError) an agent id the config does not list
          ├── SourceError            a skill source could not be read (an MCP server down or
          │                          answering nonsense); ``.code`` is its diagnostic code
          ├── SecretError            a SecretRef could not be resolved (never holds the value)
          ├── ModelNotConfigured     ``run``/``chat`` have no model to talk to (one-line how-to)
          ├── ModelError             the model endpoint failed (runtime.providers)
          ├── ServeError             ``serve`` could not start (mcp.server)
          │    └── PortInUse         (also an OSError) the address is taken
          ├── InstallError           an install step stopped; ``.code`` is its ``install.*`` reason
          ├── ScanTargetError        (also a FileNotFoundError) the path to scan does not exist
          ├── SyncError              a sync or load could not run; ``.code`` for ``--json``
          │    ├── SyncBusy          another process is syncing into the same target
          │    └── TargetNotSynced   ``<target>/skills`` holds files no sync made
          ├── SelectionUnavailable   (also an ImportError) a selection backend's package is missing
          ├── EmbeddingError         an embedding endpoint failed or answered nonsense
          ├── QueryFileError         (also a ValueError) a labelled query file is malformed
          ├── ExperienceError        a session or draft operation refused (``.code``,
          │    │                     ``.diagnostics``: a promotion's failed checks)
          │    └── ExperienceNotFound  (also a LookupError) no session or draft by that id
          ├── RegistryError          a search/install/update/remove/verify step stopped;
          │    │                     ``.code`` (``registry.*``), ``.status`` (HTTP, if any)
          │    ├── RegistryNotFound  (also a LookupError) no such skill, version or route
          │    ├── RegistryUnavailable  unreachable or kept failing; ``.retry_after``
          │    └── PublishFailed     ``skillbook publish`` stopped (``registry.publish-failed``)
          └── HubError               the registry server (``skillbook.distribution.hub``) refused a request or
               │                     an admin action; ``.status`` is the HTTP status it answers
               └── HubNotFound       (also a LookupError) no such skill, version, token or blob

All of them are importable from ``skillbook`` without loading any edge package.

Where the edges' exceptions live, and why here: an exception is part of the API a
caller writes ``except`` clauses against, so it must be importable without what it
reports on. ``skillbook.PortInUse`` resolved lazily from ``skillbook.mcp`` would load
the MCP SDK, starlette and uvicorn just to name the class, and a module path of an
edge in ``skillbook/__init__`` breaks the rule that the core never imports an edge
(``tests/test_architecture.py`` counts lazy module strings too). So the classes are
defined here, in the core, and each edge re-exports the ones it raises from the module
that raises them (``skillbook.mcp.server.PortInUse``, ``skillbook.distribution.sync.SyncError``,
``skillbook.distribution.install.InstallError``, ``skillbook.distribution.registry.errors.RegistryError`` …): the same class object under both names.
Exceptions that never leave their package (a copy step's failure that becomes a
diagnostic, a transport's cut-off answer) stay private there; those that a public
function of an edge can raise still derive from :class:`SkillbookError`.

Plain ``ValueError``/``TypeError`` are raised only for programming mistakes (an
unknown mode passed in code, an unregistered diagnostic code).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class SkillbookError(Exception):
    """Base class of every exception skillbook raises on purpose."""


class ConfigError(SkillbookError, ValueError):
    """The configuration could not be read or does not match the schema.

    The message names the file, the offending key path and what was expected,
    e.g. ``openclaw.json: skills.limits.maxSkillsInPrompt: expected int >= 0, got "many"``.
    """

    def __init__(
        self, message: str, *, key_path: str | None = None, file: Path | None = None
    ) -> None:
        super().__init__(message)
        self.key_path = key_path
        self.file = file


class SkillNotFound(SkillbookError, LookupError):
    """No skill with the requested name (or skill key)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"skill not found: {name!r}")
        self.name = name


class AgentNotFound(SkillbookError, LookupError):
    """An agent id that ``agents.list`` does not hold; ``.known`` lists the ids it does."""

    def __init__(self, agent_id: str, known: tuple[str, ...]) -> None:
        super().__init__(f'unknown agent id "{agent_id}" (known: {", ".join(known)})')
        self.agent_id = agent_id
        self.known = known


class SourceError(SkillbookError):
    """A skill source could not be read: unreachable, or its answer broke the protocol.

    Sources turn it into a diagnostic with :attr:`code` (``mcp.server-unreachable``,
    ``mcp.invalid-response``, …) rather than let it reach :func:`skillbook.load`; catch it
    around direct calls to a source's client.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


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


class ServeError(SkillbookError):
    """``serve`` could not start: the address is taken, or the bind needs a token."""


class PortInUse(ServeError, OSError):
    """Another process listens on the address ``serve`` was asked to bind."""

    def __str__(self) -> str:
        return str(self.strerror)


class InstallError(SkillbookError):
    """An install step stopped: ``code`` is the ``install.*`` reason, the message says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ScanTargetError(SkillbookError, FileNotFoundError):
    """The path to scan does not exist (a caller mistake, not a finding)."""


class SyncError(SkillbookError):
    """A sync or load could not run: a bad target, an unreadable folder, a failed swap."""

    #: The ``code`` of the CLI's ``--json`` error object.
    code = "sync-failed"


class SyncBusy(SyncError):
    """Another process holds the target's lock and the caller chose not to wait."""

    code = "sync-busy"


class TargetNotSynced(SyncError):
    """The folder to replace was not made by a sync, so replacing it could lose files."""

    code = "target-not-synced"


class SelectionUnavailable(SkillbookError, ImportError):
    """A package that a selection backend needs is not installed."""


class EmbeddingError(SkillbookError):
    """An embedding endpoint could not be reached or gave an unusable answer."""


class QueryFileError(SkillbookError, ValueError):
    """A labelled query file is malformed; the message names the line."""


class ExperienceError(SkillbookError):
    """A session or draft operation of :mod:`skillbook.experience` was refused.

    ``.code`` says why (``promotion-refused``, ``no-workspace``, ``target-exists``,
    ``not-pending``, ``invalid-reason``, ``invalid-name``, ``name-taken``); ``.diagnostics`` holds the failed checks of a
    refused promotion, each with a stable code, so they can be shown one by one.
    """

    def __init__(self, message: str, *, code: str, diagnostics: tuple[Any, ...] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.diagnostics = diagnostics


class ExperienceNotFound(ExperienceError, LookupError):
    """No recorded session or draft matches the id (or id prefix) asked for."""

    def __init__(self, message: str, *, code: str = "not-found") -> None:
        super().__init__(message, code=code)


class RegistryError(SkillbookError):
    """A registry, source or install step of :mod:`skillbook.distribution.registry` refused or failed.

    ``code`` is stable (``registry.*``, listed in docs/diagnostics.md) so the CLI's
    ``--json`` and Python callers branch without parsing messages; messages are
    OpenClaw's where it has one (``Skill "x" not found on ClawHub.``).
    """

    def __init__(self, code: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        #: The HTTP status when a registry answered.
        self.status = status


class RegistryNotFound(RegistryError, LookupError):
    """The registry answered 404: no such skill, version or route."""


class RegistryUnavailable(RegistryError):
    """Catch to tell "try again later" from "this will never work"."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(code, message, status=status)
        #: Seconds the server asked to wait (``Retry-After``/``RateLimit-Reset``), if it said.
        self.retry_after = retry_after


class PublishFailed(RegistryError):
    """``skillbook publish`` stopped: a bad folder, a refused request, an unreachable registry.

    ``.status`` is the registry's HTTP status when it answered; the message holds its text.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__("registry.publish-failed", message, status=status)


class HubError(SkillbookError):
    """The registry server (:mod:`skillbook.distribution.hub`) refused a request or an admin action.

    ``status`` is the HTTP status the server answers with; the message is the short
    plain-text body the ``clawhub`` CLI prints (``Version already exists``). ``body``, when
    given, is answered as JSON instead (a refused file name: its path and rule).
    """

    def __init__(self, status: int, message: str, body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class HubNotFound(HubError, LookupError):
    """No such skill, version, upload, token or blob on the registry server (404)."""

    def __init__(self, message: str) -> None:
        super().__init__(404, message)
