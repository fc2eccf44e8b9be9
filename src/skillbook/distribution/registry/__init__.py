"""Getting skills: a ClawHub-compatible registry client, git, folder and archive sources.

``refs`` (what a user names), ``endpoint`` and ``client`` (base URL, token, HTTP with
retries), ``api`` (the routes), ``staging`` (every source into a staged tree: ``tree``,
``gitsource``, ``archive_root``, ``clawhub_stage``), ``installer``, ``updater``,
``remove``, ``verify``, ``tracked`` (drift), ``workdir`` (the journal), ``lockfile``,
``origins``, ``pins``, ``backups``, ``trust``, ``lookalike``, ``discovery``,
``skillfiles``. :mod:`skillbook.distribution.fingerprint` is a small pure module with a
stable API that a registry server may import on its own.

This ``__init__`` holds the exceptions of getting skills::

    SkillbookError
     └─ RegistryError            a step of search/install/update/remove/verify stopped
         ├─ RegistryNotFound     the registry has no such skill or version (HTTP 404)
         ├─ RegistryUnavailable  the registry could not be reached, or kept failing
         │                       (timeouts, 5xx, 429 after the retries); ``retry_after``
         └─ PublishFailed        ``skillbook publish`` stopped (``registry.publish-failed``)
"""

from __future__ import annotations

from skillbook.errors import SkillbookError


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
