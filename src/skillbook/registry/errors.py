"""The exceptions of getting skills, rooted at :class:`RegistryError`.

    SkillbookError
     └─ RegistryError            a step of search/install/update/remove/verify stopped
         ├─ RegistryNotFound     the registry has no such skill or version (HTTP 404)
         └─ RegistryUnavailable  the registry could not be reached, or kept failing
                                 (timeouts, 5xx, 429 after the retries); ``retry_after``

Every error carries a stable ``code`` (``registry.*``, listed in docs/diagnostics.md)
so the CLI's ``--json`` and Python callers branch without parsing messages. Messages
are OpenClaw's where it has one (``Skill "x" not found on ClawHub.``).
"""

from __future__ import annotations

from skillbook.errors import SkillbookError

__all__ = ["RegistryError", "RegistryNotFound", "RegistryUnavailable"]


class RegistryError(SkillbookError):
    """A registry, source or install step refused or failed; ``code`` says which."""

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
