"""``skillbook publish PATH``: the client side of publishing, as the clawhub CLI 0.23.3 does it.

Input: a skill folder (or a ``.zip``/``.tar.gz`` of one), a registry base URL and a
token. Output: :class:`PublishOutcome`. The wire sequence is the CLI's (spec §3.14):
``whoami`` (for the owner), ``resolve`` with the folder's fingerprint (an unchanged
folder is "already published"), ``upload-url`` and the raw upload per file, then
``POST /api/v1/skills``. The files are chosen by the CLI's rules (§4.3): no
dot-files or ``node_modules``, regular files only, the root ``.gitignore`` and
``.clawhubignore``, 10 MB per file and 50 MB in all, ``SKILL.md`` required.

Every request is retried as the registry client retries
(:mod:`skillbook.distribution.http`: 429, 5xx but 501, timeouts and connection errors;
the server's ``Retry-After``, else a backoff), which is safe for each step of the
sequence: ``whoami`` and ``resolve`` read; ``upload-url`` mints a ticket, and one left
unused expires; an upload stores bytes under their sha256, so sending them twice
stores them once; and the registry answers a repeat of the same publish (same slug,
version and files) with the first publish's answer, so a publish whose answer was lost
and that is sent again is published once.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

import httpx

from skillbook.distribution.archives.layout import skill_file_of
from skillbook.distribution.archives.names import NameRejected, check_names
from skillbook.distribution.fingerprint import fingerprint_digests
from skillbook.distribution.http import (
    RetryPolicy,
    backoff,
    reason,
    retryable_error,
    retryable_status,
    server_wait,
)
from skillbook.distribution.hub.semver_tags import is_semver, semver_key
from skillbook.distribution.hub.server_config import MIB
from skillbook.distribution.registry import PublishFailed

__all__ = ["LocalFile", "PublishOptions", "PublishOutcome", "collect_files", "publish_path"]

MAX_FILE_BYTES: Final = 10 * MIB
MAX_TOTAL_BYTES: Final = 50 * MIB
_BUILTIN_IGNORES: Final = (".git/", "node_modules/", ".clawhub/", ".clawdhub/")
_IGNORE_FILES: Final = (".gitignore", ".clawhubignore", ".clawdhubignore")
_PLUGIN_MARKERS: Final = (
    "openclaw.plugin.json",
    ".codex-plugin/plugin.json",
    ".claude-plugin/plugin.json",
    ".cursor-plugin/plugin.json",
)


class HttpClient(Protocol):
    """What publishing needs of an HTTP client (``httpx.Client``, or a test client)."""

    def get(self, url: str, *, params: Any = ..., headers: Any = ...) -> Any: ...

    def post(self, url: str, *, content: Any = ..., json: Any = ..., headers: Any = ...) -> Any: ...


@dataclass(frozen=True, slots=True)
class LocalFile:
    path: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def content_type(self) -> str:
        return mimetypes.guess_type(self.path)[0] or "application/octet-stream"


@dataclass(frozen=True, slots=True)
class PublishOptions:
    slug: str | None = None
    name: str | None = None
    version: str | None = None
    changelog: str = ""
    tags: tuple[str, ...] = ("latest",)
    owner: str | None = None


@dataclass(frozen=True, slots=True)
class PublishOutcome:
    slug: str
    version: str
    files: int
    fingerprint: str
    #: ``published``, ``pending`` (held for review) or ``already-published``.
    status: str
    answer: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "version": self.version,
            "files": self.files,
            "fingerprint": self.fingerprint,
            "status": self.status,
            "answer": self.answer,
        }


def _ignore_spec(root: Path) -> Any:
    import pathspec

    lines = list(_BUILTIN_IGNORES)
    for name in _IGNORE_FILES:
        candidate = root / name
        if candidate.is_file() and not candidate.is_symlink():
            lines.extend(candidate.read_text(encoding="utf-8", errors="replace").splitlines())
    return pathspec.GitIgnoreSpec.from_lines(lines)


def collect_files(root: Path) -> list[LocalFile]:
    """The files of ``root`` the clawhub CLI would publish, sorted by path."""
    if not root.is_dir():
        raise PublishFailed(f"{root} is not a folder")
    for marker in _PLUGIN_MARKERS:
        if (root / marker).is_file():
            raise PublishFailed(f"{root} looks like a plugin ({marker}); publish skills only")
    spec = _ignore_spec(root)
    found: list[LocalFile] = []
    total = 0
    for current, dirs, names in os.walk(root):
        base = Path(current)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        for name in sorted(names):
            full = base / name
            rel = full.relative_to(root).as_posix()
            if name.startswith(".") or spec.match_file(rel):
                continue
            info = full.lstat()
            if not stat.S_ISREG(info.st_mode):
                continue  # links and special files are never published
            if name.lower() == "skill-card.md" and base == root:
                continue
            if info.st_size > MAX_FILE_BYTES:
                raise PublishFailed(f'File "{rel}" exceeds 10MB limit')
            total += info.st_size
            if total > MAX_TOTAL_BYTES:
                raise PublishFailed("Skill bundle exceeds 50MB limit")
            found.append(LocalFile(rel, full.read_bytes()))
    if skill_file_of(f.path for f in found) is None:
        raise PublishFailed("SKILL.md required")
    try:  # the registry's own rules: refuse here rather than after the uploads
        check_names([f.path for f in found])
    except NameRejected as exc:
        raise PublishFailed(f"{root}: file name refused ({exc.problem.rule}): {exc}") from None
    return sorted(found, key=lambda f: f.path)


def default_slug(folder: Path) -> str:
    """The CLI's default: the folder name lowercased, runs of other characters as ``-``."""
    return re.sub(r"[^a-z0-9-]+", "-", folder.name.lower()).strip("-")


def default_name(folder: Path) -> str:
    words = re.split(r"[-_\s]+", folder.name.strip())
    return " ".join(w[:1].upper() + w[1:] for w in words if w)


@contextmanager
def unpacked(path: Path) -> Iterator[Path]:
    """A folder for ``path``: itself, or an archive unpacked with the installer's safety rules."""
    if path.is_dir():
        yield path
        return
    from skillbook.distribution import InstallError
    from skillbook.distribution.archives.extract import extract_tar, extract_zip
    from skillbook.distribution.archives.paths import DEFAULT_LIMITS

    lower = path.name.lower()
    with tempfile.TemporaryDirectory(prefix="skillbook-publish-") as tmp:
        stage = Path(tmp) / path.name.split(".")[0]
        stage.mkdir()
        try:
            if lower.endswith(".zip"):
                extract_zip(path, stage, strip=0, limits=DEFAULT_LIMITS, names=True)
            elif lower.endswith((".tar.gz", ".tgz")):
                extract_tar(path, stage, strip=0, limits=DEFAULT_LIMITS, names=True)
            else:
                raise PublishFailed(f"{path}: expected a folder, .zip, .tar.gz or .tgz")
        except InstallError as exc:
            raise PublishFailed(f"{path}: {exc}") from None
        children = [c for c in stage.iterdir() if not c.name.startswith(".")]
        if skill_file_of(c.name for c in children if c.is_file()) is None:
            folders = [c for c in children if c.is_dir()]
            if len(folders) == 1:  # one top folder, as OpenClaw's root detection allows
                yield folders[0]
                return
        yield stage


def _check(response: Any, what: str) -> Any:
    if response.status_code >= 400:
        body = response.text.strip() or f"HTTP {response.status_code}"
        if body.startswith("{"):  # a JSON refusal (a file name): its message reads better
            with suppress(ValueError, AttributeError):
                body = str(response.json().get("message") or body)
        raise PublishFailed(
            f"{what} failed ({response.status_code}): {body}", status=response.status_code
        )
    return response.json()


class _Retrying:
    """``client``'s ``get``/``post`` with the registry client's retries."""

    def __init__(
        self,
        client: HttpClient,
        retry: RetryPolicy,
        sleep: Callable[[float], None],
        on_wait: Callable[[str], None] | None,
    ) -> None:
        self._client, self._retry, self._sleep, self._on_wait = client, retry, sleep, on_wait

    def get(self, url: str, **kwargs: Any) -> Any:
        return self._send(self._client.get, url, kwargs)

    def post(self, url: str, **kwargs: Any) -> Any:
        return self._send(self._client.post, url, kwargs)

    def _send(self, call: Callable[..., Any], url: str, kwargs: dict[str, Any]) -> Any:
        attempts = self._retry.attempts
        for attempt in range(1, attempts + 1):
            try:
                response = call(url, **kwargs)
            except Exception as exc:
                if not retryable_error(exc) or attempt == attempts:
                    raise
                self._wait(backoff(self._retry, attempt), reason(exc), url, attempt)
                continue
            status = response.status_code
            if retryable_status(status) and attempt < attempts:
                wait = server_wait(status, response.headers)
                delay = wait if wait is not None else backoff(self._retry, attempt)
                if delay <= self._retry.max_wait:
                    what = "rate limited" if status == 429 else f"HTTP {status}"
                    self._wait(delay, what, url, attempt)
                    continue
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait(self, seconds: float, why: str, url: str, attempt: int) -> None:
        if self._on_wait is not None:
            # As the registry client says it: the host, why, how long.
            self._on_wait(
                f"{httpx.URL(url).netloc.decode('ascii')}: {why}; retrying in {seconds:.1f}s "
                f"(attempt {attempt + 1} of {self._retry.attempts})"
            )
        self._sleep(seconds)


def publish_path(
    client: HttpClient,
    base_url: str,
    token: str,
    path: Path,
    options: PublishOptions,
    *,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    on_wait: Callable[[str], None] | None = None,
) -> PublishOutcome:
    """Publish the skill at ``path`` to the registry at ``base_url``; each request is
    retried under ``retry`` (see the module doc), each wait announced to ``on_wait``."""
    base = base_url.rstrip("/")
    http = _Retrying(client, retry or RetryPolicy(), sleep, on_wait)
    auth = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    with unpacked(path) as folder:
        named = folder if folder.name else path
        files = collect_files(folder)
        slug = options.slug or default_slug(path if path.is_dir() else named)
        name = options.name or default_name(path if path.is_dir() else named)
    digests = [(f.path, f.sha256) for f in files]
    fingerprint = fingerprint_digests(digests)
    try:
        owner = options.owner
        if owner is None:
            who = _check(http.get(f"{base}/api/v1/whoami", headers=auth), "whoami")
            owner = str((who.get("user") or {}).get("handle") or "").lstrip("@")
            if not owner:
                raise PublishFailed("Unable to resolve your publisher handle. Pass --owner.")
        query = {"slug": slug, "ownerHandle": owner, "hash": fingerprint}
        answer = http.get(f"{base}/api/v1/resolve", params=query, headers=auth)
        latest: str | None = None
        if answer.status_code != 404:
            resolved = _check(answer, "resolve")
            match = resolved.get("match")
            latest = (resolved.get("latestVersion") or {}).get("version")
            if match and options.version is None:
                return PublishOutcome(
                    slug, str(match["version"]), len(files), fingerprint, "already-published"
                )
        version = options.version or _next_version(latest)
        if not is_semver(version):
            raise PublishFailed(f"--version must be valid semver, got {version!r}")
        refs = []
        for f in files:
            meta = {
                "path": f.path,
                "size": len(f.data),
                "sha256": f.sha256,
                "contentType": f.content_type,
            }
            ticket = _check(
                http.post(f"{base}/api/v1/skills/-/upload-url", json=meta, headers=auth),
                f"upload-url for {f.path}",
            )
            stored = _check(
                http.post(
                    ticket["uploadUrl"],
                    content=f.data,
                    headers={**auth, "Content-Type": f.content_type},
                ),
                f"upload of {f.path}",
            )
            refs.append(
                {**meta, "storageId": stored["storageId"], "uploadTicket": ticket["uploadTicket"]}
            )
        body = {
            "slug": slug,
            "displayName": name,
            "ownerHandle": owner,
            "version": version,
            "changelog": options.changelog,
            "acceptLicenseTerms": True,
            "tags": list(options.tags),
            "files": refs,
        }
        result = _check(http.post(f"{base}/api/v1/skills", json=body, headers=auth), "publish")
    except httpx.HTTPError as exc:
        raise PublishFailed(f"cannot reach the registry at {base}: {exc}") from None
    status = str(result.get("publicationStatus") or result.get("status") or "published")
    return PublishOutcome(slug, version, len(files), fingerprint, status, result)


def _next_version(latest: str | None) -> str:
    """``1.0.0`` for a new skill, else the patch after the latest (the CLI's default)."""
    if latest is None or not is_semver(latest):
        return "1.0.0"
    return str(semver_key(latest).bump_patch())
