"""The ``skillbook`` executable: answers ``--version`` and unchanged ``prompt`` calls at
once, else runs the CLI.

Importing the command line (click, the stages it wires) costs far more than starting
Python; ``skillbook --version`` needs none of it, so it is answered here, with the
text click's ``--version`` prints.

``skillbook prompt`` with only the options in :data:`VALUE_OPTIONS` and
:data:`FLAGS` is answered from :mod:`skillbook.pipeline.cache.result_store` when the footprint of
the build that made the stored text still holds (:func:`skillbook.pipeline.cache.footprint.still_valid`);
on a miss, or any doubt, the normal command runs under a footprint recorder and
stores its output when nothing it read is beyond checking. ``skillbook select``
likewise ranks with a saved selector while its footprint holds
(:mod:`skillbook.cli.select_fast`). Everything else goes to
:func:`skillbook.cli.app.main` untouched.
"""

from __future__ import annotations

import os
import sys

# Not `typing`: importing it costs more than this module (mypy reads the name).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skillbook.pipeline.cache import footprint

#: Options of ``prompt`` (and the global ones) that take a value.
VALUE_OPTIONS = frozenset(
    {
        "--workspace",
        "-w",
        "--config",
        "-c",
        "--agent",
        "-a",
        "--mode",
        "--compat",
        "--color",
        "--read-tool",
    }
)
#: Flags the fast path understands.
FLAGS = frozenset({"--section"})


def prompt_call(args: Sequence[str]) -> bool:
    """Whether ``args`` is ``prompt`` with options the result cache understands."""
    command = 0
    index = 0
    while index < len(args):
        arg = args[index]
        name = arg.split("=", 1)[0] if arg.startswith("--") else arg
        if arg == "prompt":
            command += 1
        elif name in VALUE_OPTIONS:
            if "=" not in arg:
                index += 1
                if index >= len(args):
                    return False
        elif arg not in FLAGS:
            return False
        index += 1
    return command == 1


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        from skillbook.version import __version__

        sys.stdout.write(f"skillbook, version {__version__}\n")
        sys.stdout.flush()
        return
    if prompt_call(args):
        from skillbook.pipeline.cache import result_store

        folder = result_store.results_folder(os.environ)
        cwd = _cwd()
        if folder is not None and cwd is not None:
            key = result_store.invocation_key(args, cwd)
            text = cached_output(folder, key, os.environ)
            if text is not None:
                from skillbook.cli.prompt_output import write_prompt

                write_prompt(text)
                return
            _run_recorded(args, folder, key)
            return
    if "select" in args and _select(args):
        return
    from skillbook.cli.app import main as run

    run(args)


def _select(args: list[str]) -> bool:
    """A ``select`` call answered by a saved selector, or run recorded to save one
    (:mod:`skillbook.cli.select_fast`); False leaves it to the command line as is."""
    from skillbook.cli import select_fast

    call = select_fast.select_call(args)
    if call is None:
        return False
    from skillbook.pipeline.cache import result_store

    folder = result_store.results_folder(os.environ)
    cwd = _cwd()
    if folder is None or cwd is None:
        return False
    if not select_fast.answer(call, folder, cwd, os.environ):
        select_fast.run_recorded(call, args, folder, cwd)
    return True


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the folder was removed: the command line reports it
        return None


def cached_output(folder: str, key: str, env: Mapping[str, str]) -> str | None:
    """The stored output for ``key`` when its footprint still holds, else None."""
    from skillbook.pipeline.cache import footprint, result_store

    found = result_store.load(folder, key)
    if found is None or not footprint.still_valid(found[1], env):
        return None
    return found[0]


def _run_recorded(args: list[str], folder: str, key: str) -> None:
    from skillbook.cli.app import main as run
    from skillbook.pipeline.cache import footprint

    with footprint.recording() as fp:
        try:
            run(args)
        except SystemExit as exc:
            if exc.code in (None, 0):
                _keep(fp, folder, key)
            raise
        _keep(fp, folder, key)


def _keep(fp: footprint.Footprint, folder: str, key: str) -> None:
    from skillbook.pipeline.cache import result_store

    record = fp.record() if fp.result is not None else None
    if record is not None and fp.result is not None:
        result_store.save(folder, key, fp.result, record)
