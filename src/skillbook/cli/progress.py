"""Progress on a terminal: rich bars for downloads, extraction and commands.

Implements :class:`skillbook.distribution.progress.Progress` for the CLI. Shown only when
stderr is a terminal (never in pipes, logs, CI output or under ``--json``); the
library reports nothing by default.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgressBar

__all__ = ["RichProgress", "terminal_progress"]


class RichProgress:
    """A spinner for commands, a byte bar for downloads, an entry count for extraction."""

    def __init__(self) -> None:
        self._bar: RichProgressBar | None = None

    def start(self, task: str, total: int | None = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TransferSpeedColumn,
        )

        self.finish()
        columns: list[Any] = [SpinnerColumn(), TextColumn("{task.description}")]
        if task.startswith("Downloading"):
            columns += [BarColumn(), DownloadColumn(), TransferSpeedColumn()]
        elif total is not None:
            columns += [BarColumn(), MofNCompleteColumn()]
        self._bar = Progress(*columns, console=Console(stderr=True), transient=True)
        # The task first, so the first (synchronous) refresh already shows it.
        self._bar.add_task(task, total=total)
        self._bar.start()

    def advance(self, amount: int = 1) -> None:
        if self._bar is not None:
            self._bar.advance(self._bar.task_ids[0], amount)

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def terminal_progress() -> RichProgress | None:
    """Progress on a terminal only (never in pipes, logs or CI output)."""
    return RichProgress() if sys.stderr.isatty() else None
