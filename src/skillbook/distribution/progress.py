"""How long work reports progress: a tiny protocol the CLI implements with rich.

The library calls :meth:`Progress.start` when a task begins (a download with its
size in bytes when known, an extraction with its entry count, a command with no
total), :meth:`Progress.advance` as it goes, and :meth:`Progress.finish` at the
end. :class:`NoProgress` is the silent default (``--json``, no terminal, Python).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["NoProgress", "Progress"]


class Progress(Protocol):
    def start(self, task: str, total: int | None = None) -> None: ...

    def advance(self, amount: int = 1) -> None: ...

    def finish(self) -> None: ...


class NoProgress:
    """Reports nothing."""

    def start(self, task: str, total: int | None = None) -> None:
        return None

    def advance(self, amount: int = 1) -> None:
        return None

    def finish(self) -> None:
        return None
