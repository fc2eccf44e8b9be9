"""tar.bz2 archives, unpacked by the system ``tar`` after a listing preflight (spec §8.5 step 5).

Input: the archive, an empty staging folder, ``stripComponents``, the limits and the
machine to run ``tar`` on. The archive is hashed, listed twice (``tar tf`` for names,
``tar tvf`` for types and sizes), every entry checked as in
:mod:`skillbook.distribution.archives.paths` (with OpenClaw's ``targetDir`` wording), the
hash checked again (a file swapped during the preflight is refused), and only then
``tar xf <archive> -C <staging> [--strip-components N]`` runs. Output: the
:class:`~skillbook.distribution.install.runner.CommandResult` of the step that decided the
outcome (code 0 on success); a refused entry raises ``install.archive-rejected``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from skillbook.base.js import JS_WHITESPACE, js_trim
from skillbook.distribution import InstallError
from skillbook.distribution.archives.extract import sha256_file
from skillbook.distribution.archives.paths import EntryChecker, ExtractLimits
from skillbook.distribution.install.machine import Machine
from skillbook.distribution.install.runner import CommandResult, run_command

__all__ = ["TAR_MISSING", "extract_tar_bz2", "parse_tar_verbose"]

TAR_MISSING: Final = "tar not found on PATH"

_MONTHS: Final = frozenset(
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
)
_ISO_DATE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_PARSE_INT: Final = re.compile(r"^[+-]?\d+")
_SPACES: Final = re.compile(f"[{JS_WHITESPACE}]+")
_TYPES: Final = {
    "l": "SymbolicLink",
    "h": "Link",
    "b": "BlockDevice",
    "c": "CharacterDevice",
    "p": "FIFO",
    "s": "Socket",
    "d": "Directory",
}


def _size_before(tokens: list[str], index: int, line: str) -> int:
    match = _PARSE_INT.match(tokens[index - 1])
    size = int(match.group()) if match else -1
    if size < 0:
        raise InstallError("install.archive-rejected", f"unable to parse tar entry size: {line}")
    return size


def _verbose_size(line: str) -> int:
    """The size column: the token before the month name (BSD) or ISO date (GNU)."""
    tokens = [t for t in _SPACES.split(js_trim(line)) if t]
    if len(tokens) < 6:
        raise InstallError(
            "install.archive-rejected", f"unable to parse tar verbose metadata: {line}"
        )
    index = next((i for i, t in enumerate(tokens) if t in _MONTHS), -1)
    if index > 0:
        return _size_before(tokens, index, line)
    index = next((i for i, t in enumerate(tokens) if _ISO_DATE.match(t)), -1)
    if index > 0:
        return _size_before(tokens, index, line)
    raise InstallError("install.archive-rejected", f"unable to parse tar verbose metadata: {line}")


def parse_tar_verbose(stdout: str) -> list[tuple[str, int]]:
    """``(type, size)`` per line of ``tar tvf`` (type from the mode's first character)."""
    lines = [x for x in (js_trim(line) for line in stdout.split("\n")) if x]
    return [(_TYPES.get(line[0], "File"), _verbose_size(line)) for line in lines]


def extract_tar_bz2(
    archive: Path,
    staging: Path,
    *,
    strip: int,
    limits: ExtractLimits,
    timeout_ms: int,
    machine: Machine,
) -> CommandResult:
    if not machine.bins().has("tar"):
        return CommandResult(None, "", TAR_MISSING)
    before = sha256_file(archive)
    env = machine.env
    listed = run_command(("tar", "tf", str(archive)), timeout_ms=timeout_ms, env=env)
    if listed.code != 0:
        return CommandResult(listed.code, listed.stdout, listed.stderr or "tar list failed")
    names = [x for x in (js_trim(line) for line in listed.stdout.split("\n")) if x]
    verbose = run_command(("tar", "tvf", str(archive)), timeout_ms=timeout_ms, env=env)
    if verbose.code != 0:
        return CommandResult(
            verbose.code, verbose.stdout, verbose.stderr or "tar verbose list failed"
        )
    metadata = parse_tar_verbose(verbose.stdout)
    if len(metadata) != len(names):
        return CommandResult(
            1,
            verbose.stdout,
            f"tar verbose/list entry count mismatch ({len(metadata)} vs {len(names)})",
        )
    checker = EntryChecker(strip=strip, limits=limits, escape_label="targetDir")
    for name, (kind, size) in zip(names, metadata, strict=True):
        checker.check(name, kind, size)
    if sha256_file(archive) != before:
        return CommandResult(
            1, "", "tar archive changed during safety preflight; refusing to extract"
        )
    argv = ["tar", "xf", str(archive), "-C", str(staging)]
    if strip > 0:
        argv += ["--strip-components", str(strip)]
    return run_command(argv, timeout_ms=timeout_ms, env=env)
