"""The exceptions skillbook raises: the root of the tree and the core's own.

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
          └── …                      each edge package's own branch, below

Each edge package defines the exceptions its public functions raise in its own
``__init__``, where naming one loads nothing heavy, and roots them here::

    skillbook.runtime                  SecretError, ModelNotConfigured, ModelError
    skillbook.mcp                      ServeError └ PortInUse (also an OSError)
    skillbook.security                 ScanTargetError (also a FileNotFoundError)
    skillbook.selection                SelectionUnavailable (also an ImportError),
                                       EmbeddingError, QueryFileError (also a ValueError)
    skillbook.experience               ExperienceError └ ExperienceNotFound (also a LookupError)
    skillbook.distribution             InstallError (raised by install and the shared pieces)
    skillbook.distribution.sync        SyncError ├ SyncBusy └ TargetNotSynced
    skillbook.distribution.registry    RegistryError ├ RegistryNotFound (also a LookupError)
                                                     ├ RegistryUnavailable └ PublishFailed
    skillbook.distribution.hub         HubError ├ HubNotFound (also a LookupError)
                                                ├ HttpError └ PathRejected (also a ValueError)
    skillbook.distribution.agents      AgentsError

Why there: an exception is part of the API a caller writes ``except`` clauses against,
so it must be importable without what it reports on (``from skillbook.mcp import
PortInUse`` loads neither the MCP SDK nor uvicorn), and the core never names an edge.
Exceptions that never leave their module (a parser's sentinel, a cut-off transport
answer) stay private there; ``tests/test_public_api.py`` lists them.

Plain ``ValueError``/``TypeError`` are raised only for programming mistakes (an
unknown mode passed in code, an unregistered diagnostic code).
"""

from __future__ import annotations

from pathlib import Path


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
