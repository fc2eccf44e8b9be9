"""What the pages show, read from the catalog: plain values, built inside one session.

Input: a SQLAlchemy session (and, for the home page, the search entries). Output:
frozen view values the templates print; no ORM row leaves a session. Visibility is
decided here and only here: published versions for everyone, held ones also for a
signed-in admin and for the skill's owner signed in (``viewer``, their handle), deleted
ones for nobody.
"""

from __future__ import annotations

import functools
import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from skillbook.distribution.hub import catalog, shapes
from skillbook.distribution.hub.models import HELD, PUBLISHED, Skill, Version
from skillbook.distribution.hub.search import Entry
from skillbook.distribution.hub.semver_tags import is_semver, semver_key
from skillbook.distribution.hub.web.render import Links, render_markdown

__all__ = [
    "Card",
    "FileRow",
    "SkillPage",
    "Verdict",
    "cards_for_entries",
    "held_rows",
    "install_commands",
    "owner_cards",
    "skill_page",
]

#: Characters of a SKILL.md or changelog rendered; a longer one is cut there (the whole
#: file is one click away in the viewer).
MAX_RENDERED = 500_000

#: What a version's scan status is called on the pages.
VERDICT_LABELS = {
    "clean": "Clean",
    "suspicious": "Released with findings",
    "malicious": "Held for review",
}


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: str
    file: str
    line: int
    message: str
    excerpt: str


@dataclass(frozen=True, slots=True)
class Verdict:
    status: str
    label: str
    summary: str
    counts: dict[str, int]
    findings: tuple[Finding, ...]
    released_by: str | None


@dataclass(frozen=True, slots=True)
class Card:
    """One skill in a list: home, search results, an owner's page."""

    slug: str
    name: str
    summary: str
    owner: str
    version: str
    verdict: Verdict
    downloads: int
    updated_at: int


@dataclass(frozen=True, slots=True)
class FileRow:
    path: str
    size: int
    content_type: str


@dataclass(frozen=True, slots=True)
class VersionRow:
    version: str
    created_at: int
    changelog_html: str
    status: str
    verdict: Verdict
    tags: tuple[str, ...]
    publisher: str


@dataclass(frozen=True, slots=True)
class SkillPage:
    slug: str
    name: str
    summary: str
    owner: str
    downloads: int
    created_at: int
    updated_at: int
    latest: str | None
    shown: VersionRow
    readme_html: str
    files: tuple[FileRow, ...]
    versions: tuple[VersionRow, ...]
    fingerprint: str
    archive_sha256: str
    archive_size: int
    validation: tuple[str, ...]
    tags: dict[str, str] = field(default_factory=dict)


@functools.lru_cache(maxsize=256)
def rendered(text: str, links: Links | None, heading_offset: int) -> str:
    """Markdown of a version as HTML, kept per process (versions never change)."""
    if len(text) > MAX_RENDERED:
        cut = text[:MAX_RENDERED]
        note = "\n\n*(Cut here: the file is longer than this page shows.)*\n"
        return render_markdown(cut + note, links, heading_offset=heading_offset)
    return render_markdown(text, links, heading_offset=heading_offset)


def verdict_of(version: Version) -> Verdict:
    sec = shapes.security(version)
    scan = shapes.scan_of(version)
    findings = tuple(
        Finding(
            rule=str(f.get("rule", "")),
            severity=str(f.get("severity", "")),
            file=str(f.get("file", "")),
            line=int(f.get("line") or 0),
            message=str(f.get("message", "")),
            excerpt=str(f.get("excerpt", "")),
        )
        for f in scan.get("findings", [])
        if isinstance(f, dict)
    )
    counts = {str(k): int(v) for k, v in scan.get("counts", {}).items() if v}
    return Verdict(
        status=sec["status"],
        label=VERDICT_LABELS.get(sec["status"], sec["status"]),
        summary=shapes.overview(version),
        counts=counts,
        findings=findings,
        released_by=version.released_by,
    )


def cards_for_entries(session: Session, entries: Sequence[Entry]) -> list[Card]:
    """Cards for search entries, with verdicts and download counts read now (the
    search cache keeps what it indexed; downloads change without a new generation)."""
    ids = [e.version_id for e in entries]
    if not ids:
        return []
    rows = session.execute(
        select(Version, Skill.downloads).join(Skill).where(Version.id.in_(ids))
    ).all()
    found: dict[int, tuple[Version, int]] = {v.id: (v, int(d)) for v, d in rows}
    cards = []
    for e in entries:
        if e.version_id not in found:
            continue  # held or deleted since the index was built
        version, downloads = found[e.version_id]
        if version.status != PUBLISHED:
            continue
        cards.append(
            Card(
                slug=e.slug,
                name=e.display_name,
                summary=e.summary or "",
                owner=e.owner,
                version=e.version,
                verdict=verdict_of(version),
                downloads=downloads,
                updated_at=e.updated_at,
            )
        )
    return cards


def owner_cards(session: Session, handle: str) -> list[Card]:
    """The skills ``handle`` owns that have a published version, newest first."""
    rows = session.execute(
        select(Skill)
        .where(Skill.owner_handle == handle, Skill.deleted_at.is_(None))
        .options(selectinload(Skill.versions), selectinload(Skill.tags))
        .order_by(Skill.updated_at.desc(), Skill.id)
    ).scalars()
    cards = []
    for skill in rows:
        latest = catalog.latest_version(skill)
        if latest is None:
            continue
        cards.append(
            Card(
                slug=skill.slug,
                name=skill.display_name,
                summary=skill.summary or "",
                owner=skill.owner_handle,
                version=latest.version,
                verdict=verdict_of(latest),
                downloads=skill.downloads,
                updated_at=skill.updated_at,
            )
        )
    return cards


def _newest_first(rows: list[Version]) -> list[Version]:
    def key(v: Version) -> tuple[int, Any, int]:
        return (1, semver_key(v.version), v.id) if is_semver(v.version) else (0, v.version, v.id)

    return sorted(rows, key=key, reverse=True)


def sees_held(skill: Skill, *, admin: bool, viewer: str | None) -> bool:
    """Whether the reader may see ``skill``'s held versions: an admin, or its owner."""
    return admin or (viewer is not None and viewer.lower() == skill.owner_handle.lower())


def visible_versions(skill: Skill, *, admin: bool, viewer: str | None = None) -> list[Version]:
    shown = (PUBLISHED, HELD) if sees_held(skill, admin=admin, viewer=viewer) else (PUBLISHED,)
    return _newest_first([v for v in skill.versions if v.status in shown])


def pick_version(
    skill: Skill, asked: str | None, *, admin: bool, viewer: str | None = None
) -> Version | None:
    """The version a page shows: the one asked for if the reader may see it, else latest."""
    visible = visible_versions(skill, admin=admin, viewer=viewer)
    if asked:
        return next((v for v in visible if v.version == asked), None)
    return catalog.latest_version(skill) or (visible[0] if visible else None)


def _version_row(version: Version, tags: dict[str, str]) -> VersionRow:
    return VersionRow(
        version=version.version,
        created_at=version.created_at,
        changelog_html=render_markdown(version.changelog, heading_offset=3)
        if version.changelog.strip()
        else "",
        status=version.status,
        verdict=verdict_of(version),
        tags=tuple(sorted(t for t, v in tags.items() if v == version.version)),
        publisher=version.publisher,
    )


def skill_page(
    session: Session, slug: str, asked: str | None, *, admin: bool, viewer: str | None = None
) -> SkillPage | None:
    """Everything the page of ``slug`` shows, or None when the reader may see nothing
    (``viewer``: the handle signed in, which sees its own skills' held versions)."""
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    skill = catalog.find_skill(session, slug)
    if skill is None:
        return None
    shown = pick_version(skill, asked, admin=admin, viewer=viewer)
    if shown is None:
        return None
    session.refresh(shown, ["files"])
    tags = catalog.tag_map(skill)
    files = tuple(FileRow(f.path, f.size, f.content_type) for f in shown.files)
    links = Links(skill.slug, shown.version, frozenset(f.path for f in files))
    latest = catalog.latest_version(skill)
    validation = tuple(str(d.get("message", "")) for d in json.loads(shown.validation_json or "[]"))
    return SkillPage(
        slug=skill.slug,
        name=skill.display_name,
        summary=skill.summary or "",
        owner=skill.owner_handle,
        downloads=skill.downloads,
        created_at=skill.created_at,
        updated_at=skill.updated_at,
        latest=latest.version if latest is not None else None,
        shown=_version_row(shown, tags),
        readme_html=rendered(parse_skill_text(shown.skill_md).body, links, 2),
        files=files,
        versions=tuple(
            _version_row(v, tags) for v in visible_versions(skill, admin=admin, viewer=viewer)
        ),
        fingerprint=shown.fingerprint,
        archive_sha256=shown.archive_sha256,
        archive_size=shown.archive_size,
        validation=validation,
        tags=tags,
    )


@dataclass(frozen=True, slots=True)
class FileView:
    slug: str
    name: str
    version: str
    status: str
    path: str
    size: int
    content_type: str
    sha256: str


def file_entry(
    session: Session,
    slug: str,
    asked: str | None,
    path: str,
    *,
    admin: bool,
    viewer: str | None = None,
) -> FileView | None:
    skill = catalog.find_skill(session, slug)
    if skill is None:
        return None
    version = pick_version(skill, asked, admin=admin, viewer=viewer)
    if version is None:
        return None
    session.refresh(version, ["files"])
    entry = next((f for f in version.files if f.path == path), None)
    if entry is None:
        return None
    return FileView(
        slug=skill.slug,
        name=skill.display_name,
        version=version.version,
        status=version.status,
        path=entry.path,
        size=entry.size,
        content_type=entry.content_type,
        sha256=entry.sha256,
    )


@dataclass(frozen=True, slots=True)
class HeldRow:
    slug: str
    version: str
    owner: str
    publisher: str
    created_at: int
    verdict: Verdict


def held_rows(session: Session) -> list[HeldRow]:
    return [
        HeldRow(
            slug=skill.slug,
            version=version.version,
            owner=skill.owner_handle,
            publisher=version.publisher,
            created_at=version.created_at,
            verdict=verdict_of(version),
        )
        for skill, version in catalog.held_versions(session)
        if skill.deleted_at is None
    ]


@dataclass(frozen=True, slots=True)
class AuditRow:
    at: int
    actor: str
    action: str
    target: str
    reason: str


def audit_rows(session: Session, limit: int = 20) -> list[AuditRow]:
    out = []
    for row in catalog.list_audit(session, limit):
        try:
            detail = json.loads(row.detail or "{}")
        except ValueError:
            detail = {}
        target = "@".join(p for p in (row.slug, row.version) if p)
        reason = str(detail.get("reason", "")) if isinstance(detail, dict) else ""
        out.append(AuditRow(row.at, row.actor, row.action, target, reason))
    return out


@dataclass(frozen=True, slots=True)
class Command:
    client: str
    line: str


def install_commands(base_url: str, slug: str) -> list[Command]:
    """How each client installs ``slug`` from this registry (the latest version)."""
    url, name = shlex.quote(base_url), shlex.quote(slug)
    return [
        Command("skillbook", f"skillbook install {name} --registry {url}"),
        Command("clawhub", f"CLAWHUB_REGISTRY={url} clawhub install {name}"),
        Command("OpenClaw", f"OPENCLAW_CLAWHUB_URL={url} openclaw skills install {name}"),
    ]
