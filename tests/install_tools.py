"""Installs, now, every tool the tests install into ``.cache`` on first use.

``python3 tests/install_tools.py`` (any Python 3.11, standard library only); prints one
line per tool, where it is or why it is not, and exits 0 when every tool is there.
``.ci/run`` starts it beside the fast lane: on a clean checkout the rest lane's first
files (the OpenClaw comparisons, the real clients) would otherwise wait for npm with
the cores idle (OpenClaw's two releases, about 1.7 GB, took 90 s here). Each tool is
installed by the very function, under the very lock, the tests use: a test that asks
meanwhile waits and then finds it, and a tool that fails here is tried again, and
reported, by the test that needs it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def installers() -> dict[str, Callable[[], object]]:
    """Tool name -> the function the tests install it with (returns a path, or why not)."""
    sys.path.insert(0, str(TESTS))
    import cached_tools
    import oracle_support

    return {
        # The baseline first: the latest is installed into its folder.
        "openclaw-oracle": oracle_support.latest_oracle_dir,
        "clawhub-cli": cached_tools.clawhub_cli,
        "skills-cli": cached_tools.skills_cli,
        "mcp-conformance": cached_tools.conformance_suite,
        "fastmcp-venv": cached_tools.fastmcp_venv,
    }


def main() -> int:
    missing = 0
    for name, install in installers().items():
        try:
            found = install()
        except Exception as exc:  # reported here; the test that needs it tries again
            found = f"{type(exc).__name__}: {exc}"
        missing += isinstance(found, str)
        print(f"{name}: {'unavailable: ' if isinstance(found, str) else ''}{found}", flush=True)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
