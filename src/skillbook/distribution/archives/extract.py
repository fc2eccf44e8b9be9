"""Unpack zip and tar.gz archives in-process into an empty staging folder (spec §8.5 step 5).

Input: an archive file, a fresh staging folder, ``stripComponents`` and the limits.
Output: the archive's regular files and folders under the staging folder, or an
``install.archive-rejected`` :class:`~skillbook.distribution.InstallError` saying
which entry was refused and why (:mod:`skillbook.distribution.archives.paths`). Nothing is
written outside the staging folder; :class:`~skillbook.distribution.swap.StagedTarget`
merges it into the target afterwards.

``names=True`` (skill archives) adds the file name rules of
:mod:`skillbook.distribution.archives.names`, so an archive the registry would refuse to publish
is refused here too. Beyond OpenClaw: a zip's declared sizes are checked before anything is written (a
zip bomb is refused, not half-extracted), and zip entries that are symlinks,
devices or encrypted are refused (OpenClaw writes a symlink entry as a file).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Final

from skillbook.base.atomic import atomic_writer
from skillbook.distribution import InstallError
from skillbook.distribution.archives.names import NameSet
from skillbook.distribution.archives.paths import (
    BLOCKED_TYPES,
    ByteBudget,
    EntryChecker,
    ExtractLimits,
    check_entry_path,
    check_skill_name,
    strip_entry_path,
)
from skillbook.distribution.progress import NoProgress, Progress

__all__ = ["PathGuard", "check_archive_size", "extract_tar", "extract_zip", "sha256_file"]

#: Called with (relative output path, entry name) before an entry is written; raises to
#: refuse it (the target's own symlinks: :meth:`StagedTarget.check_path`).
PathGuard = Callable[[str, str], None]

_CHUNK: Final = 1024 * 1024
_UNIX: Final = 3  # ZipInfo.create_system of archives made on Unix
_ENCRYPTED: Final = 0x1


def sha256_file(path: Path) -> str:
    """The sha256 hex of a file, read in 1 MiB pieces (an archive checked before use)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def _rejected(message: str) -> InstallError:
    return InstallError("install.archive-rejected", message)


def check_archive_size(archive: Path, limits: ExtractLimits) -> None:
    if archive.stat().st_size > limits.max_archive_bytes:
        raise _rejected("archive size exceeds limit")


def _zip_kind(info: zipfile.ZipInfo) -> str:
    mode = info.external_attr >> 16
    if info.create_system != _UNIX or not mode:
        return "Directory" if info.is_dir() else "File"
    kinds = (
        (stat.S_ISLNK, "SymbolicLink"),
        (stat.S_ISBLK, "BlockDevice"),
        (stat.S_ISCHR, "CharacterDevice"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "Socket"),
    )
    return next((name for test, name in kinds if test(mode)), "File")


def _make_parent(staging: Path, rel: str) -> Path:
    out = staging / rel
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise _rejected(f"archive entry conflicts with an existing file: {rel}") from None
    return out


def _mkdir(staging: Path, rel: str, mode: int) -> None:
    out = staging / rel
    try:
        out.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise _rejected(f"archive entry conflicts with an existing file: {rel}") from None
    # Kept writable by the owner: the merge moves files out of it.
    os.chmod(out, (mode & 0o777) | 0o700)


def _write(staging: Path, rel: str, source: IO[bytes], budget: ByteBudget, mode: int) -> None:
    out = _make_parent(staging, rel)
    if out.is_dir():
        raise _rejected(f"archive entry conflicts with an existing folder: {rel}")
    # A later entry with the same name wins, as it would on disk.
    with atomic_writer(
        out, mode=(mode & 0o777) or 0o644, prefix=f".{out.name}.sb-part-", suffix=""
    ) as sink:
        budget.start_entry()
        while chunk := source.read(_CHUNK):
            budget.add(len(chunk))
            sink.write(chunk)


def extract_zip(
    archive: Path,
    staging: Path,
    *,
    strip: int,
    limits: ExtractLimits,
    progress: Progress | None = None,
    guard: PathGuard | None = None,
    names: bool = False,
) -> None:
    report = progress or NoProgress()
    check_archive_size(archive, limits)
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise _rejected(f"invalid zip archive: {exc}") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_entries:
            raise _rejected("archive entry count exceeds limit")
        declared = ByteBudget(limits)
        tree = NameSet() if names else None
        work: list[tuple[str, zipfile.ZipInfo]] = []
        for info in infos:
            check_entry_path(info.filename)
            rel = strip_entry_path(info.filename, strip)
            if rel is None:
                continue
            check_entry_path(rel)
            if _zip_kind(info) in BLOCKED_TYPES:
                raise _rejected(f"zip entry is a link: {info.filename}")
            if info.flag_bits & _ENCRYPTED:
                raise _rejected(f"zip entry is encrypted: {info.filename}")
            if not info.is_dir():
                declared.add_entry_size(info.file_size)
            check_skill_name(tree, rel, folder=info.is_dir())
            if guard is not None:
                guard(rel, info.filename)
            work.append((rel, info))
        report.start("Extracting", len(work))
        budget = ByteBudget(limits)
        try:
            for rel, info in work:
                mode = info.external_attr >> 16 if info.create_system == _UNIX else 0
                if info.is_dir():
                    _mkdir(staging, rel, mode or 0o755)
                else:
                    try:
                        with zf.open(info) as source:
                            _write(staging, rel, source, budget, mode)
                    except (
                        zipfile.BadZipFile,
                        zlib.error,
                        RuntimeError,
                        NotImplementedError,
                    ) as exc:
                        raise _rejected(f"cannot extract {info.filename}: {exc}") from None
                report.advance(1)
        finally:
            report.finish()


def _tar_kind(member: tarfile.TarInfo) -> str:
    if member.issym():
        return "SymbolicLink"
    if member.islnk():
        return "Link"
    if member.ischr():
        return "CharacterDevice"
    if member.isblk():
        return "BlockDevice"
    if member.isfifo():
        return "FIFO"
    return "Directory" if member.isdir() else "File"


def extract_tar(
    archive: Path,
    staging: Path,
    *,
    strip: int,
    limits: ExtractLimits,
    progress: Progress | None = None,
    guard: PathGuard | None = None,
    names: bool = False,
) -> None:
    """A (compressed) tar, streamed: each entry is checked as it is read, as node-tar does."""
    report = progress or NoProgress()
    check_archive_size(archive, limits)
    checker = EntryChecker(strip=strip, limits=limits, names=NameSet() if names else None)
    budget = ByteBudget(limits)
    report.start("Extracting", None)
    try:
        with tarfile.open(archive, mode="r|*") as tf:
            for member in tf:
                rel = checker.check(member.name, _tar_kind(member), member.size)
                if rel is None:
                    continue
                if guard is not None:
                    guard(rel, member.name)
                if member.isdir():
                    _mkdir(staging, rel, member.mode)
                elif member.isfile():
                    source = tf.extractfile(member)
                    if source is None:  # pragma: no cover - isfile() entries always have data
                        raise _rejected(f"cannot read tar entry: {member.name}")
                    _write(staging, rel, source, budget, member.mode)
                report.advance(1)
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise _rejected(f"invalid tar archive: {exc}") from None
    finally:
        report.finish()
