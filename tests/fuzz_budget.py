"""How many examples a Hypothesis test draws: the fast lane's share of its full count.

The heaviest property tests were written with counts that find rare inputs (the YAML
parser's four differential tests draw 7,500 examples, 60 s of CPU; the result cache's
fast-path comparison 12 rebuilds of a world, 45 s): a third of the fast lane's CPU for two
files. ``examples(n)`` keeps ``n`` as the full count and draws a share of it unless
``SKILLBOOK_FUZZ=full`` asks for all of it (a deep run before a release, or after changing
the parser). Hypothesis's example database replays any failing input it found before
whatever the count, so a smaller count never forgets a found bug.
"""

from __future__ import annotations

import os

#: The share of the full count drawn by default.
FAST_SHARE = 0.3


def examples(full: int, *, floor: int = 5) -> int:
    """``full`` under ``SKILLBOOK_FUZZ=full``, else ``FAST_SHARE`` of it (at least ``floor``,
    never more than ``full``)."""
    if os.environ.get("SKILLBOOK_FUZZ", "").strip().lower() == "full":
        return full
    return min(full, max(floor, round(full * FAST_SHARE)))
