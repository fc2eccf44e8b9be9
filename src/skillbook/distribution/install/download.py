"""The ``download`` installer (spec §8.5): plan it, then fetch, verify and unpack.

Input: a ``download`` :class:`~skillbook.model.InstallSpec` and the skill's tools root
(:mod:`skillbook.distribution.install.tools_dir`). :func:`plan_download` computes every path and
refuses a ``targetDir`` outside the root without touching disk or network (what
``--dry-run`` shows). :func:`run_download` re-checks the folders on disk (real
folders inside the real root) *before* any network access, downloads to
``<root>/.skillbook-download-staging/<uuid>.tmp``, verifies the spec's ``sha256``
when it has one, and then either moves the file into place or unpacks it through a
:class:`~skillbook.distribution.swap.StagedTarget`, so the target is replaced as a whole
(a crash leaves the old or the new tree). Output: an
:class:`~skillbook.distribution.install.result.InstallResult` with OpenClaw's messages
(``Downloaded to …``, ``Downloaded and extracted to …``, ``Download failed (404 Not
Found)``, ``Install failed (exit 1): archive entry escapes destination: ../x``).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from skillbook.base.fs import is_path_inside
from skillbook.base.js import js_trim
from skillbook.base.locks import locked
from skillbook.distribution import InstallError
from skillbook.distribution.archives.extract import extract_tar, extract_zip
from skillbook.distribution.archives.paths import (
    DEFAULT_LIMITS,
    ExtractLimits,
    normalize_strip,
)
from skillbook.distribution.http import DEFAULT_MAX_DOWNLOAD_BYTES, fetch_to_file
from skillbook.distribution.install.machine import Machine
from skillbook.distribution.install.plan import DownloadPlan
from skillbook.distribution.install.result import InstallResult, format_install_failure_message
from skillbook.distribution.install.runner import CommandResult
from skillbook.distribution.install.tarbz2 import TAR_MISSING, extract_tar_bz2
from skillbook.distribution.install.tools_dir import (
    assert_canonical_within,
    ensure_dir,
    resolve_target_dir,
)
from skillbook.distribution.netguard import NetworkPolicy, Resolver
from skillbook.distribution.progress import NoProgress, Progress
from skillbook.distribution.swap import StagedTarget, recover
from skillbook.model import InstallSpec

__all__ = ["STAGING_DIR_NAME", "DownloadOptions", "plan_download", "run_download"]

STAGING_DIR_NAME: Final = ".skillbook-download-staging"
_LABEL: Final = "skill tools directory"
_SHA256: Final = re.compile(r"^[0-9a-fA-F]{64}$")


@dataclass(frozen=True, slots=True)
class DownloadOptions:
    network: NetworkPolicy = field(default_factory=NetworkPolicy)
    limits: ExtractLimits = DEFAULT_LIMITS
    max_download_bytes: int = DEFAULT_MAX_DOWNLOAD_BYTES
    #: Name resolution for the guard (tests map names to 127.0.0.1); None = the system's.
    resolver: Resolver | None = None


def _filename(url: str) -> str:
    try:
        path = urlsplit(url).path
    except ValueError:
        path = url
    # Node's path.basename ignores trailing separators.
    return posixpath.basename(path.rstrip("/")) or "download"


def archive_type(explicit: str | None, filename: str) -> str | None:
    """``spec.archive`` lowercased, else from the file name's extension."""
    given = js_trim(explicit or "").lower()
    if given:
        return given
    lower = filename.lower()
    if lower.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    if lower.endswith((".tar.bz2", ".tbz2")):
        return "tar.bz2"
    if lower.endswith(".zip"):
        return "zip"
    return None


def plan_download(
    spec: InstallSpec, *, tools_root: Path, home: Path, timeout_ms: int
) -> DownloadPlan:
    """Every decision of §8.5 that needs neither disk nor network; raises InstallError."""
    url = js_trim(spec.url or "")
    if not url:
        raise InstallError("install.invalid-spec", "missing download url")
    target = resolve_target_dir(tools_root, spec.target_dir, home=home)
    filename = _filename(url)
    kind = archive_type(spec.archive, filename)
    sha = spec.expected_sha256
    if sha is not None and not _SHA256.match(sha):
        raise InstallError(
            "install.checksum-mismatch", f'sha256 "{sha}" of {url} is not 64 hexadecimal digits'
        )
    return DownloadPlan(
        url=url,
        filename=filename,
        tools_root=tools_root,
        target_dir=target,
        archive_type=kind,
        extract=spec.extract if spec.extract is not None else kind is not None,
        strip_components=normalize_strip(spec.strip_components),
        sha256=sha.lower() if sha else None,
        timeout_ms=timeout_ms,
    )


def _prepare(plan: DownloadPlan) -> tuple[Path, Path]:
    """Create and check the root and target on disk; returns their canonical forms."""
    root = plan.tools_root
    ensure_dir(root)
    assert_canonical_within(root, root, _LABEL)
    real_root = Path(os.path.realpath(root))
    ensure_dir(plan.target_dir)
    assert_canonical_within(root, plan.target_dir, _LABEL)
    return real_root, real_root / os.path.relpath(plan.target_dir, root)


def run_download(
    plan: DownloadPlan,
    *,
    machine: Machine,
    options: DownloadOptions | None = None,
    progress: Progress | None = None,
) -> InstallResult:
    opts = options or DownloadOptions()
    report = progress or NoProgress()
    root = plan.tools_root
    # One install at a time per tools folder; the lock lives beside the folder, which a
    # swap may replace.
    with locked(root.parent / f".{root.name}.lock"):
        # A crash between the two renames of a non-atomic swap left no folder: put the
        # old one back before anything would create an empty one in its place.
        recover(root)
        recover(plan.target_dir)
        return _locked_download(plan, machine, opts, report)


def _locked_download(
    plan: DownloadPlan, machine: Machine, opts: DownloadOptions, report: Progress
) -> InstallResult:
    try:
        real_root, target = _prepare(plan)
    except InstallError as exc:
        return InstallResult.from_error(exc, as_stderr=True)
    archive = os.path.normpath(target / plan.filename)
    if archive == str(real_root) or not is_path_inside(str(real_root), archive):
        message = "invalid download archive path"
        return InstallResult.failure("install.target-escape", message, stderr=message)
    tmp: _StagingFile | None = None
    try:
        staging = real_root / STAGING_DIR_NAME
        ensure_dir(staging)
        assert_canonical_within(real_root, staging, _LABEL)
        _remove_stale(staging)
        tmp = _StagingFile(staging)
        fetched = fetch_to_file(
            plan.url,
            tmp.file,
            policy=opts.network,
            timeout_ms=plan.timeout_ms,
            max_bytes=opts.max_download_bytes,
            progress=report,
            resolver=opts.resolver,
        )
        if plan.sha256 is not None and fetched.sha256 != plan.sha256:
            raise InstallError(
                "install.checksum-mismatch",
                f"sha256 mismatch for {plan.url}: expected {plan.sha256}, got {fetched.sha256}",
            )
        # The root may have been swapped for a link while downloading: fail closed.
        assert_canonical_within(real_root, target, _LABEL)
        if not plan.extract or plan.archive_type is None:
            tmp.move_to(target / plan.filename)
            if plan.extract:
                return InstallResult.failure(
                    "install.archive-rejected",
                    "extract requested but archive type could not be detected",
                )
            return InstallResult(
                ok=True,
                message=f"Downloaded to {target / plan.filename}",
                stdout=f"downloaded={fetched.size}",
                code=0,
            )
        return _extract(plan, tmp, real_root, target, machine, opts, report)
    except InstallError as exc:
        return InstallResult.from_error(exc, as_stderr=True)
    except OSError as exc:
        message = _os_error(exc)
        return InstallResult.failure("install.download-failed", message, stderr=message)
    finally:
        if tmp is not None:
            tmp.discard()


def _remove_stale(staging: Path) -> None:
    """Temporary files of downloads killed mid-way (we hold the lock: none is running)."""
    for leftover in staging.glob("*.tmp"):
        if leftover.is_file() and not leftover.is_symlink():
            with contextlib.suppress(OSError):
                leftover.unlink()


def _os_error(exc: OSError) -> str:
    return f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")


class _StagingFile:
    """The download's temporary file, made through a descriptor of the checked staging
    folder, so a tools root swapped for a link afterwards cannot redirect the write.
    """

    def __init__(self, staging: Path) -> None:
        nofollow = getattr(os, "O_NOFOLLOW", 0)
        self.name = f"{uuid.uuid4()}.tmp"
        self._dir_fd: int | None = None
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | nofollow
        if os.open in os.supports_dir_fd:
            self._dir_fd = os.open(staging, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow)
            fd = os.open(self.name, flags, 0o600, dir_fd=self._dir_fd)
        else:  # pragma: no cover - Windows
            fd = os.open(staging / self.name, flags, 0o600)
        self._staging = staging
        self.file = os.fdopen(fd, "wb")

    def move_to(self, dest: Path) -> None:
        self.file.close()
        if self._dir_fd is not None:
            os.replace(self.name, dest, src_dir_fd=self._dir_fd)
        else:  # pragma: no cover - Windows
            os.replace(self._staging / self.name, dest)

    def discard(self) -> None:
        self.file.close()
        with contextlib.suppress(OSError):
            if self._dir_fd is not None:
                os.unlink(self.name, dir_fd=self._dir_fd)
            else:  # pragma: no cover - Windows
                os.unlink(self._staging / self.name)
        if self._dir_fd is not None:
            os.close(self._dir_fd)
            self._dir_fd = None


def _extract(
    plan: DownloadPlan,
    tmp: _StagingFile,
    real_root: Path,
    target: Path,
    machine: Machine,
    opts: DownloadOptions,
    report: Progress,
) -> InstallResult:
    skip = frozenset({STAGING_DIR_NAME}) if target == real_root else frozenset()
    reason = "install.archive-rejected"
    try:
        report.start(f"Preparing {target}")
        report.finish()
        with StagedTarget(target, skip=skip) as staged:
            archive = staged.clone / plan.filename
            tmp.move_to(archive)
            result = _unpack(plan, archive, staged, machine, opts, report)
            if result.code == 0:
                report.start("Merging", None)
                try:
                    staged.merge_staging(report)
                finally:
                    report.finish()
                staged.commit()
    except InstallError as exc:
        result, reason = CommandResult(1, "", exc.message), exc.code
    except OSError as exc:
        result = CommandResult(1, "", _os_error(exc))
    if result.code == 0:
        return InstallResult(
            ok=True,
            message=f"Downloaded and extracted to {target}",
            stdout=js_trim(result.stdout),
            stderr=js_trim(result.stderr),
            code=0,
        )
    if result.stderr == TAR_MISSING:
        reason = "install.tool-missing"
    message = format_install_failure_message(result.code, result.stdout, result.stderr)
    return InstallResult.failure(
        reason, message, stdout=result.stdout, stderr=result.stderr, code=result.code
    )


def _unpack(
    plan: DownloadPlan,
    archive: Path,
    staged: StagedTarget,
    machine: Machine,
    opts: DownloadOptions,
    report: Progress,
) -> CommandResult:
    strip, staging, guard = plan.strip_components, staged.staging, staged.check_path
    if plan.archive_type == "zip":
        extract_zip(archive, staging, strip=strip, limits=opts.limits, progress=report, guard=guard)
    elif plan.archive_type == "tar.gz":
        extract_tar(archive, staging, strip=strip, limits=opts.limits, progress=report, guard=guard)
    elif plan.archive_type == "tar.bz2":
        report.start("Extracting (tar)")
        try:
            return extract_tar_bz2(
                archive,
                staging,
                strip=strip,
                limits=opts.limits,
                timeout_ms=plan.timeout_ms,
                machine=machine,
            )
        finally:
            report.finish()
    else:
        return CommandResult(None, "", f"unsupported archive type: {plan.archive_type}")
    return CommandResult(0, "", "")
