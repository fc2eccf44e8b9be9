"""Distribution: getting skills onto a machine and serving them.

The parts, side by side: ``registry`` (the client: search, install, update, verify),
``hub`` (the registry server and ``skillbook publish``), ``install`` (what a skill needs
installed), ``sync`` (a book copied into a sandbox), ``agents`` (skills placed for other
agents). None of ``registry``, ``hub`` and ``agents`` imports ``install`` or ``sync``, and
``sync`` imports neither ``install`` nor ``registry`` (``tests/distribution/test_layers.py``).

What they share lives once, here, below them:

    fingerprint   the ``clawhub`` CLI's content fingerprint (files, or stored hashes)
    archives      what a skill archive may hold and how it is unpacked
    swap          a folder replaced in one step, with crash recovery
    http          client set-up, retries with ``Retry-After``, capped streams, the
                  guarded download
    netguard      the download guard (which hosts and addresses may be fetched)
    scan_gate     the security scan before an install
    audit         the install audit log
    progress      the progress report of long steps

Locks, path containment and bounded reads are :mod:`skillbook.base`'s (``locks``,
``fs``): the core needs them too.

This ``__init__`` holds :class:`InstallError`, the exception of every install step
(raised by the shared pieces above as by ``install``)::

    SkillbookError
     └─ InstallError    ``code`` is the ``install.*`` reason
"""

from __future__ import annotations

from skillbook.errors import SkillbookError


class InstallError(SkillbookError):
    """An install step stopped: ``code`` is the ``install.*`` reason, the message says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
