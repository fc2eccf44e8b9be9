"""The ``skillbook`` executable: answers ``--version`` at once, else runs the CLI.

Importing the command line (click, the stages it wires) costs far more than starting
Python; ``skillbook --version`` needs none of it, so it is answered here, with the
text click's ``--version`` prints. Everything else goes to :func:`skillbook.cli.app.main`.
"""

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from skillbook import __version__

        sys.stdout.write(f"skillbook, version {__version__}\n")
        sys.stdout.flush()
        return
    from skillbook.cli.app import main as run

    run()
