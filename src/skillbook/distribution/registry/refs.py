"""What ``skillbook install`` was asked for: a registry slug, a git repository, a folder
or an archive; and the slug and folder-name rules of OpenClaw and the ``clawhub`` CLI.

Input: the argument as typed. Output: a :class:`RegistryRef`, :class:`GitRef`,
:class:`FolderRef` or :class:`ArchiveRef`, or a ``registry.invalid-ref``
:class:`~skillbook.distribution.registry.RegistryError` (``Invalid skill slug: <raw>`` for a
bad slug, OpenClaw's message). Pure: nothing here touches disk or network.

The forms, tried in this order:

- ``@owner/slug``: a registry skill of one owner (OpenClaw 2026.9's owner-qualified form);
- ``skills-sh:owner/repo/slug``: a skills.sh skill resolved by the registry (2026.9);
- a URL: ``http(s)://…/x.zip`` (``.tar.gz``, ``.tgz``) is an archive to download; other
  ``https://``, ``http://``, ``ssh://``, ``git://``, ``file://`` URLs and ``git@host:path``
  are git repositories (``https://github.com/o/r/tree/<ref>/<path>`` gives the ref and path);
- a path (``/…``, ``./…``, ``../…``, ``~…``, or any name ending in an archive suffix): a
  folder or an archive on disk;
- ``owner/repo[/path][@ref]``: a GitHub repository (as ``npx skills add`` reads it);
- anything else is a registry slug, checked as OpenClaw checks requested slugs:
  trimmed, no ``/``, ``\\`` or ``..``, ASCII, ``^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$`` (any case).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote, urlsplit

from skillbook.distribution.registry import RegistryError

__all__ = [
    "ARCHIVE_SUFFIXES",
    "DEFAULT_GIT_BASE",
    "SKILLS_SH_PREFIX",
    "ArchiveRef",
    "FolderRef",
    "GitRef",
    "RegistryRef",
    "SourceRef",
    "check_folder_name",
    "normalize_owner",
    "normalize_tracked_slug",
    "parse_ref",
    "parse_skills_sh",
    "redact_url",
    "validate_requested_slug",
]

ARCHIVE_SUFFIXES: Final = (".zip", ".tar.gz", ".tgz")
SKILLS_SH_PREFIX: Final = "skills-sh:"
#: Where ``owner/repo`` shorthands point (``SKILLBOOK_GIT_BASE_URL`` overrides it).
DEFAULT_GIT_BASE: Final = "https://github.com"
_SLUG: Final = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$", re.I)
_OWNER: Final = re.compile(r"^[a-z0-9](?:[a-z0-9._-]{0,38}[a-z0-9])?$")
_GH_OWNER: Final = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$")
_GH_REPO: Final = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
_FOLDER: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_GIT_SCHEMES: Final = ("https", "http", "ssh", "git", "file")
_SCP: Final = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!//)")


@dataclass(frozen=True, slots=True)
class RegistryRef:
    slug: str
    #: Lowercased, without ``@``; None for a bare slug.
    owner: str | None = None
    #: ``skills-sh:<owner>/<repo>/<slug>``: a skills.sh skill the registry resolves to a
    #: GitHub commit it never scanned (OpenClaw 2026.9's ``requestedReference``).
    reference: str | None = None

    def __str__(self) -> str:
        if self.reference:
            return self.reference
        return f"@{self.owner}/{self.slug}" if self.owner else self.slug


@dataclass(frozen=True, slots=True)
class GitRef:
    url: str
    #: A folder inside the repository (``skills/pdf``); None for the whole repository.
    subpath: str | None = None
    #: A branch, tag or commit; None for the remote's default branch.
    ref: str | None = None

    @property
    def public_url(self) -> str:
        """The URL without a user name or password (what is printed and recorded)."""
        return redact_url(self.url)

    def __str__(self) -> str:
        sub = f" {self.subpath}" if self.subpath else ""
        return f"{self.public_url}{sub}" + (f"@{self.ref}" if self.ref else "")


@dataclass(frozen=True, slots=True)
class FolderRef:
    path: str


@dataclass(frozen=True, slots=True)
class ArchiveRef:
    #: A file path or an http(s) URL.
    location: str

    @property
    def remote(self) -> bool:
        return self.location.startswith(("http://", "https://"))


SourceRef = RegistryRef | GitRef | FolderRef | ArchiveRef


def redact_url(url: str) -> str:
    """``url`` without the ``user:password@`` of an http(s) URL (tokens are often put
    there); other forms (``git@host:path``, ``ssh://git@host``) name no secret."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and "@" in parts.netloc:
        return parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()
    return url


def _invalid(raw: str) -> RegistryError:
    return RegistryError("registry.invalid-ref", f"Invalid skill slug: {raw}")


def normalize_tracked_slug(raw: str) -> str:
    """A slug already tracked (lock or origin): trimmed, no ``/``, ``\\`` or ``..``."""
    slug = raw.strip()
    if not slug or "/" in slug or "\\" in slug or ".." in slug:
        raise _invalid(raw)
    return slug


def validate_requested_slug(raw: str) -> str:
    """OpenClaw's rule for a slug the user asks for (homographs and non-ASCII refused)."""
    slug = normalize_tracked_slug(raw)
    if not slug.isascii() or not _SLUG.match(slug):
        raise _invalid(raw)
    return slug


def normalize_owner(raw: str) -> str:
    owner = raw.strip().lstrip("@").lower()
    if not _OWNER.match(owner):
        raise RegistryError("registry.invalid-ref", f"Invalid ClawHub owner handle: {raw}")
    return owner


def check_folder_name(name: str) -> str:
    """A skill folder name from a repository or archive, safe as ``skills/<name>``."""
    if not _FOLDER.match(name) or ".." in name:
        raise RegistryError(
            "registry.invalid-ref",
            f"Cannot install a skill as {name!r}: folder names must be letters, digits, "
            "'.', '_' or '-' (choose one with --name)",
        )
    return name


def _clean_subpath(raw: str, whole: str) -> str | None:
    parts = [p for p in raw.strip("/").split("/") if p]
    if any(p in (".", "..") or "\\" in p for p in parts):
        raise RegistryError("registry.invalid-ref", f"Invalid path in {whole}")
    return "/".join(parts) or None


def _github_tree(url: str) -> GitRef | None:
    """``https://github.com/o/r/tree/<ref>/<path>`` (a folder as GitHub shows it)."""
    parts = urlsplit(url)
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if parts.netloc.lower() != "github.com" or len(segments) < 2:
        return None
    owner, repo = segments[0], segments[1].removesuffix(".git")
    base = f"https://github.com/{owner}/{repo}.git"
    if len(segments) == 2:
        return GitRef(base)
    if segments[2] in ("tree", "blob") and len(segments) >= 4:
        return GitRef(base, _clean_subpath("/".join(segments[4:]), url), segments[3])
    return None


def _shorthand(raw: str, git_base: str) -> GitRef:
    body, _, ref = raw.partition("@")
    parts = body.split("/")
    owner, repo = parts[0], parts[1].removesuffix(".git")
    if not _GH_OWNER.match(owner) or not _GH_REPO.match(repo) or repo in (".", ".."):
        raise RegistryError("registry.invalid-ref", f"Invalid repository reference: {raw}")
    if "@" in raw and not ref.strip():
        raise RegistryError("registry.invalid-ref", f"Empty ref in {raw}")
    url = f"{git_base.rstrip('/')}/{owner}/{repo}.git"
    return GitRef(url, _clean_subpath("/".join(parts[2:]), raw), ref.strip() or None)


def parse_skills_sh(raw: str) -> RegistryRef:
    """``skills-sh:<owner>/<repo>/<slug>`` as OpenClaw 2026.9 checks it (the legacy
    ``skills-sh/…`` form is refused)."""
    bad = RegistryError("registry.invalid-ref", f"Invalid skills.sh skill reference: {raw}")
    if not raw.startswith(SKILLS_SH_PREFIX):
        raise bad
    parts = raw[len(SKILLS_SH_PREFIX) :].split("/")
    if len(parts) != 3:
        raise bad
    owner, repo, slug = parts
    if not _GH_OWNER.match(owner) or not _GH_REPO.match(repo) or repo in (".", ".."):
        raise bad
    return RegistryRef(validate_requested_slug(slug), reference=raw)


def _is_path(raw: str) -> bool:
    return raw.startswith(("/", "./", "../", "~")) or raw in (".", "..")


def parse_ref(raw: str, *, git_base: str = DEFAULT_GIT_BASE) -> SourceRef:
    """Classify ``raw`` (see the module docstring); raises ``registry.invalid-ref``."""
    text = raw.strip()
    if not text:
        raise _invalid(raw)
    if text.startswith((SKILLS_SH_PREFIX, "skills-sh/")):
        return parse_skills_sh(text)
    if text.startswith("@"):
        owner, sep, slug = text[1:].partition("/")
        if not sep or not owner or not slug or "/" in slug:
            raise RegistryError("registry.invalid-ref", f"Invalid ClawHub skill reference: {raw}")
        return RegistryRef(validate_requested_slug(slug), normalize_owner(owner))
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme in ("http", "https") and urlsplit(text).path.lower().endswith(ARCHIVE_SUFFIXES):
        return ArchiveRef(text)
    if scheme in _GIT_SCHEMES:
        tree = _github_tree(text) if scheme == "https" else None
        url, _, fragment = text.partition("#")
        return tree or GitRef(url, ref=fragment or None)
    if scheme:
        raise RegistryError("registry.invalid-ref", f"Unsupported URL scheme: {raw}")
    if _SCP.match(text):
        url, _, fragment = text.partition("#")
        return GitRef(url, ref=fragment or None)
    lower = text.lower()
    if lower.endswith(ARCHIVE_SUFFIXES):
        return ArchiveRef(text)
    if _is_path(text):
        return FolderRef(text)
    if "/" in text:
        return _shorthand(text, git_base)
    return RegistryRef(validate_requested_slug(text))
