"""The registry's routes as skillbook uses them (clawhub-api.md §3), read defensively.

Input: a :class:`~skillbook.distribution.registry.client.RegistryClient` and what to ask. Output:
small frozen values (:class:`SearchHit`, :class:`SkillDetail`, :class:`Resolution`,
:class:`InstallTarget`) built from whatever fields the server sent: like OpenClaw, a
missing field counts as absent, a field of the wrong type too. OpenClaw's messages
for the user-facing failures, naming the registry asked where OpenClaw says ClawHub
(``Skill "x" not found on https://hub.example.com.``, ``Skill "x" has no installable
version.``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Final
from urllib.parse import quote

from skillbook.distribution.progress import Progress
from skillbook.distribution.registry import RegistryError, RegistryNotFound
from skillbook.distribution.registry.client import Downloaded, RegistryClient

__all__ = [
    "GitHubSource",
    "InstallTarget",
    "Resolution",
    "SearchHit",
    "SkillDetail",
    "download_archive",
    "fetch_detail",
    "fetch_version",
    "install_target",
    "official_flag",
    "resolve_fingerprint",
    "search",
]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _owner_params(owner: str | None) -> dict[str, str]:
    return {"ownerHandle": owner} if owner else {}


@dataclass(frozen=True, slots=True)
class SearchHit:
    slug: str
    version: str | None
    display_name: str | None
    summary: str | None
    owner: str | None

    def line(self) -> str:
        """OpenClaw's line: ``<slug>[ v<version>]  <displayName>[  <summary>]``."""
        head = self.slug + (f" v{self.version}" if self.version else "")
        name = self.display_name or self.slug
        return f"{head}  {name}" + (f"  {self.summary}" if self.summary else "")


def search(
    client: RegistryClient, query: str, *, limit: int | None = None
) -> tuple[dict[str, Any], list[SearchHit]]:
    """``GET /api/v1/search``; an empty query is OpenClaw's ``*``. Returns the raw
    ``{results}`` (what ``--json`` prints, as OpenClaw does) and the parsed hits."""
    params = {"q": query.strip() or "*"}
    if limit is not None:
        params["limit"] = str(limit)
    raw = client.get_json("/api/v1/search", params)
    results = raw.get("results") if isinstance(raw, dict) else None
    hits = []
    for item in results if isinstance(results, list) else []:
        row = _dict(item)
        owner = _str(_dict(row.get("publisher")).get("handle")) or _str(row.get("ownerHandle"))
        owner = owner or _str(_dict(row.get("owner")).get("handle"))
        hits.append(
            SearchHit(
                slug=_str(row.get("slug")) or "unknown",
                version=_str(row.get("version")),
                display_name=_str(row.get("displayName")),
                summary=_str(row.get("summary")),
                owner=owner,
            )
        )
    return {"results": results if isinstance(results, list) else []}, hits


@dataclass(frozen=True, slots=True)
class SkillDetail:
    slug: str
    latest_version: str | None
    #: ``owner.handle``, lowercased without ``@`` (what the CLI records).
    owner: str | None
    tags: dict[str, str] = field(default_factory=dict)
    malware_blocked: bool = False
    suspicious: bool = False
    display_name: str | None = None
    #: ``official``/``isOfficial``/``channel: "official"`` on the skill or its owner
    #: (OpenClaw 2026.9 trusts these on https://clawhub.ai only).
    official: bool = False


def official_flag(*values: Any) -> bool:
    """OpenClaw 2026.9's ``hasOfficialClawHubFlag`` on any of ``values``."""
    return any(
        isinstance(v, dict)
        and (
            v.get("channel") == "official"
            or v.get("official") is True
            or v.get("isOfficial") is True
        )
        for v in values
    )


def _owner_handle(raw: Any) -> str | None:
    handle = _str(_dict(raw).get("handle"))
    if handle is None:
        return None
    handle = handle.strip().lstrip("@").lower()
    return (
        handle
        if handle and "/" not in handle and "\\" not in handle and ".." not in handle
        else None
    )


def fetch_detail(client: RegistryClient, slug: str, *, owner: str | None = None) -> SkillDetail:
    """``GET /api/v1/skills/<slug>``; a 404 or no ``skill`` is OpenClaw's not-found error."""
    route = f"/api/v1/skills/{quote(slug, safe='')}"
    try:
        raw = client.get_json(route, _owner_params(owner))
    except RegistryNotFound:
        raw = None
    data = _dict(raw)
    skill = _dict(data.get("skill"))
    if not skill:
        raise RegistryNotFound(
            "registry.not-found", f'Skill "{slug}" not found on {client.endpoint.label}.'
        )
    moderation = _dict(data.get("moderation"))
    tags = {k: v for k, v in _dict(skill.get("tags")).items() if isinstance(v, str)}
    remote = _str(skill.get("slug"))
    safe_remote = (
        remote if remote and not ({"/", "\\"} & set(remote)) and ".." not in remote else None
    )
    return SkillDetail(
        slug=safe_remote or slug,
        latest_version=_str(_dict(data.get("latestVersion")).get("version")),
        owner=_owner_handle(data.get("owner")),
        tags=tags,
        malware_blocked=moderation.get("isMalwareBlocked") is True,
        suspicious=moderation.get("isSuspicious") is True,
        display_name=_str(skill.get("displayName")),
        official=official_flag(skill, data.get("owner")),
    )


def fetch_version(
    client: RegistryClient, slug: str, version: str, *, owner: str | None = None
) -> dict[str, Any]:
    """``GET /api/v1/skills/<slug>/versions/<v>``: the version exists (404 otherwise)."""
    route = f"/api/v1/skills/{quote(slug, safe='')}/versions/{quote(version, safe='')}"
    try:
        return _dict(client.get_json(route, _owner_params(owner)))
    except RegistryNotFound:
        raise RegistryNotFound(
            "registry.not-found",
            f'Version "{version}" of skill "{slug}" not found on {client.endpoint.label}.',
        ) from None


@dataclass(frozen=True, slots=True)
class Resolution:
    """What ``/api/v1/resolve`` says of a fingerprint: the version it is, and the latest."""

    match: str | None
    latest: str | None


def resolve_fingerprint(
    client: RegistryClient, slug: str, fingerprint: str, *, owner: str | None = None
) -> Resolution | None:
    """``GET /api/v1/resolve``; None when the registry does not serve the route (OpenClaw
    2026.4's minimum registry) or does not know the slug."""
    params = {"slug": slug, "hash": fingerprint, **_owner_params(owner)}
    try:
        raw = _dict(client.get_json("/api/v1/resolve", params))
    except RegistryNotFound:
        return None
    return Resolution(
        match=_str(_dict(raw.get("match")).get("version")),
        latest=_str(_dict(raw.get("latestVersion")).get("version")),
    )


@dataclass(frozen=True, slots=True)
class GitHubSource:
    """A GitHub hand-off: the skill is the folder ``path`` of ``repo`` at ``commit``."""

    repo: str
    path: str
    commit: str
    source_url: str | None = None
    #: The resolver's hash of the folder (clawhub-api.md §4.4), checked for skills.sh refs.
    content_hash: str | None = None


@dataclass(frozen=True, slots=True)
class InstallTarget:
    """``/api/v1/skills/<slug>/install``: an archive to download (version, URL), or a
    GitHub hand-off (the version is the commit)."""

    version: str
    download_url: str | None
    github: GitHubSource | None = None
    official: bool = False
    #: ``trust.state`` (``not-scanned-by-clawhub`` for skills.sh references).
    trust_state: str | None = None


_STRUCTURED_BLOCK: Final = frozenset({403, 409, 410, 423})
_COMMIT: Final = re.compile(r"^[0-9a-fA-F]{40}$")
_REPO_PART: Final = re.compile(r"^[A-Za-z0-9._-]+$")


def install_target(
    client: RegistryClient, slug: str, *, owner: str | None = None, reference: str | None = None
) -> InstallTarget:
    """What ``/install`` resolves ``slug`` (or a skills.sh ``reference``) to; a refusal
    (``ok: false``, also sent with 403/409/410/423) is an error with the server's message,
    OpenClaw 2026.9's for an ambiguous slug, and a GitHub hand-off must name a full commit."""
    route = f"/api/v1/skills/{quote(slug, safe='')}/install"
    params = {**_owner_params(owner), **({"reference": reference} if reference else {})}
    raw = _dict(client.get_json(route, params, also=_STRUCTURED_BLOCK))
    if raw.get("ok") is not True:
        if raw.get("reason") == "ambiguous_slug":
            message = (
                f'Skill "{slug}" is ambiguous on {client.endpoint.label}. Install an '
                "owner-qualified skill, "
                f"for example: skillbook install @owner/{slug}."
            )
        else:
            message = _str(raw.get("message")) or f'Skill "{slug}" is not installable.'
        raise RegistryError("registry.no-version", message)
    official = official_flag(raw, raw.get("archive"))
    trust = _str(_dict(raw.get("trust")).get("state"))
    if raw.get("installKind") == "github":
        found = _github(slug, _dict(raw.get("github")))
        return InstallTarget(*found, official=official, trust_state=trust)
    archive = _dict(raw.get("archive"))
    version, url = _str(archive.get("version")), _str(archive.get("downloadUrl"))
    if raw.get("installKind") != "archive" or version is None or url is None:
        raise RegistryError(
            "registry.no-version",
            f'Skill "{slug}" resolved to an install kind skillbook does not know: '
            f"{raw.get('installKind')!s}",
        )
    return InstallTarget(version, url, official=official, trust_state=trust)


def _github(slug: str, raw: dict[str, Any]) -> tuple[str, None, GitHubSource]:
    commit, repo = _str(raw.get("commit")) or "", _str(raw.get("repo")) or ""
    if not _COMMIT.match(commit):
        raise RegistryError(
            "registry.no-version",
            f'Skill "{slug}" resolved to a mutable or invalid GitHub source ref; '
            "expected a full 40-character commit SHA.",
        )
    parts = repo.split("/")
    if len(parts) != 2 or not all(_REPO_PART.match(p) and p not in (".", "..") for p in parts):
        raise RegistryError(
            "registry.no-version",
            f'Skill "{slug}" resolved to an invalid GitHub repository: {repo}',
        )
    path = "/".join(p for p in (_str(raw.get("path")) or "").replace("\\", "/").split("/") if p)
    if any(p in (".", "..") for p in path.split("/")):
        raise RegistryError(
            "registry.no-version", f"Invalid GitHub skill source path: {raw.get('path')}"
        )
    content = _str(raw.get("contentHash"))
    source = GitHubSource(
        repo, path, commit.lower(), _str(raw.get("sourceUrl")), content.lower() if content else None
    )
    return commit.lower(), None, source


def download_archive(
    client: RegistryClient,
    slug: str,
    version: str,
    sink: BinaryIO,
    *,
    owner: str | None = None,
    url: str | None = None,
    progress: Progress | None = None,
) -> Downloaded:
    """``GET /api/v1/download?slug&version[&ownerHandle]`` (or a resolved ``downloadUrl``)."""
    label = f"{slug}@{version}"
    if url is not None:
        absolute = url if "://" in url else client.url(url)
        return client.download(absolute, None, sink, label=label, progress=progress)
    params = {"slug": slug, **_owner_params(owner), "version": version}
    return client.download("/api/v1/download", params, sink, label=label, progress=progress)
