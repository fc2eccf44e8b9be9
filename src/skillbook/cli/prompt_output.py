"""The catalog on stdout as ``skillbook prompt`` prints it, for the command and its fast path.

Both :mod:`skillbook.cli.app` (the ``prompt`` command) and :mod:`skillbook.cli.entry` (a
stored answer from the result cache) print through :func:`write_prompt`, so the two
outputs are the same bytes; this module imports nothing, so the fast path stays fast.
"""

from __future__ import annotations

import sys

__all__ = ["write_prompt"]


def write_prompt(out: str) -> None:
    """Print the catalog as ``prompt`` prints it: as is, as UTF-8 bytes where the locale
    could not show them (it is the model's text). A lone surrogate (from a folder name
    that is not UTF-8) has no UTF-8 form and is printed as U+FFFD."""
    try:
        sys.stdout.write(out)
    except UnicodeEncodeError:
        # Only here, on the rare path: the module imports nothing for the fast path.
        from skillbook.base.surrogates import without_surrogates

        sys.stdout.flush()
        sys.stdout.buffer.write(without_surrogates(out).encode("utf-8"))
    sys.stdout.flush()
