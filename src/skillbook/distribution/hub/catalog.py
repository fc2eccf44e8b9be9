"""Reading and changing the catalog: skills, versions, tags, releases, deletions, audit.

Input: a SQLAlchemy session. Output: model rows and the decisions the routes serve
(which version a tag or "latest" means, what a client may see). Every change that
alters what search or downloads can see bumps the catalog generation and writes an
audit entry, in the same transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session, selectinload

from skillbook.distribution.hub import HubError, HubNotFound
from skillbook.distribution.hub.db import CATALOG_CHANGED
from skillbook.distribution.hub.models import (
    DELETED,
    HELD,
    PUBLISHED,
    AuditEntry,
    CatalogState,
    Skill,
    Tag,
    Version,
)
from skillbook.distribution.hub.semver_tags import is_semver, semver_key
from skillbook.distribution.hub.tokens import now_ms

__all__ = [
    "audit",
    "bump_generation",
    "delete_skill",
    "find_skill",
    "hold_version",
    "latest_version",
    "list_audit",
    "make_public",
    "move_tags",
    "published",
    "release_version",
    "resolve_version",
    "set_tag",
    "tag_map",
]


def bump_generation(session: Session) -> None:
    # This process's caches expire once the change is committed (other replicas poll).
    session.info[CATALOG_CHANGED] = True
    session.execute(
        update(CatalogState)
        .where(CatalogState.id == 1)
        .values(generation=CatalogState.generation + 1)
    )


def audit(
    session: Session,
    actor: str,
    action: str,
    *,
    slug: str | None = None,
    version: str | None = None,
    **detail: Any,
) -> None:
    session.add(
        AuditEntry(
            at=now_ms(),
            actor=actor,
            action=action,
            slug=slug,
            version=version,
            detail=json.dumps(detail, sort_keys=True),
        )
    )


def find_skill(session: Session, slug: str, owner: str | None = None) -> Skill | None:
    """The live skill ``slug`` (case-insensitive); with ``owner``, only if it owns it."""
    row = session.execute(
        select(Skill)
        # Slugs are stored lowercase (publish enforces it): the unique index serves this.
        .where(Skill.slug == slug.strip().lower(), Skill.deleted_at.is_(None))
        .options(selectinload(Skill.versions), selectinload(Skill.tags))
    ).scalar_one_or_none()
    if row is None:
        return None
    if owner and owner.strip().lstrip("@").lower() != row.owner_handle:
        return None
    return row


def published(skill: Skill) -> list[Version]:
    """The versions clients may see, newest semver first."""
    rows = [v for v in skill.versions if v.status == PUBLISHED]
    return sorted(rows, key=_order, reverse=True)


def _order(v: Version) -> tuple[int, Any, int]:
    return (1, semver_key(v.version), v.id) if is_semver(v.version) else (0, v.version, v.id)


def tag_map(skill: Skill) -> dict[str, str]:
    """``{tag: version}`` for tags that point at published versions; ``latest`` included."""
    by_id = {v.id: v for v in skill.versions if v.status == PUBLISHED}
    out = {t.tag: by_id[t.version_id].version for t in skill.tags if t.version_id in by_id}
    latest = latest_version(skill)
    if latest is not None:
        out["latest"] = latest.version
    return dict(sorted(out.items()))


def latest_version(skill: Skill) -> Version | None:
    """What ``latest`` means: the version the tag points at, else the newest published."""
    by_id = {v.id: v for v in skill.versions if v.status == PUBLISHED}
    for t in skill.tags:
        if t.tag == "latest" and t.version_id in by_id:
            return by_id[t.version_id]
    visible = published(skill)
    return visible[0] if visible else None


def resolve_version(
    skill: Skill, version: str | None = None, tag: str | None = None
) -> Version | None:
    """The published version asked for: ``version`` wins over ``tag``; neither is latest."""
    if version:
        return next(
            (v for v in skill.versions if v.version == version and v.status == PUBLISHED), None
        )
    if tag and tag != "latest":
        target = next((t.version_id for t in skill.tags if t.tag == tag), None)
        return next((v for v in skill.versions if v.id == target and v.status == PUBLISHED), None)
    return latest_version(skill)


def move_tags(session: Session, skill: Skill, version: Version, tags: Iterable[str]) -> None:
    for name in dict.fromkeys(tags):
        existing = next((t for t in skill.tags if t.tag == name), None)
        if existing is None:
            session.add(Tag(skill_id=skill.id, tag=name, version_id=version.id))
        else:
            existing.version_id = version.id


def make_public(session: Session, skill: Skill, version: Version, tags: Iterable[str]) -> None:
    """Move ``tags`` to a version that has just become visible (published or released).

    The skill's public words (display name, summary) and its ``updatedAt`` follow the
    version only when it is now the one ``latest`` means: they describe what a client
    installs. A held version never gets here, so it cannot change them.
    """
    session.flush()
    session.refresh(skill, ["versions", "tags"])
    move_tags(session, skill, version, tags)
    session.flush()
    session.refresh(skill, ["tags"])
    if latest_version(skill) is not version:
        return
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    if version.display_name:
        skill.display_name = version.display_name
    description = parse_skill_text(version.skill_md).description
    skill.summary = description or skill.summary
    skill.updated_at = now_ms()


def _version_of(session: Session, slug: str, version: str) -> tuple[Skill, Version]:
    skill = find_skill(session, slug)
    if skill is None:
        raise HubNotFound(f"skill {slug!r} not found")
    row = next((v for v in skill.versions if v.version == version), None)
    if row is None:
        raise HubNotFound(f"{slug} has no version {version!r}")
    return skill, row


def release_version(
    session: Session, slug: str, version: str, *, actor: str, reason: str
) -> Version:
    """Make a held version visible and move the tags its publish asked for."""
    skill, row = _version_of(session, slug, version)
    if row.status != HELD:
        raise HubError(409, f"{slug}@{version} is {row.status}, not held")
    row.status = PUBLISHED
    row.released_by = actor
    row.released_at = now_ms()
    make_public(session, skill, row, json.loads(row.pending_tags or "[]"))
    row.pending_tags = "[]"
    bump_generation(session)
    audit(
        session,
        actor,
        "release",
        slug=skill.slug,
        version=version,
        reason=reason,
        scanWorst=row.scan_worst,
    )
    return row


def set_tag(
    session: Session, slug: str, version: str, tag: str, *, actor: str, reason: str
) -> Version:
    """Point ``tag`` of ``slug`` at a published ``version`` (``latest`` included)."""
    from skillbook.distribution.hub.semver_tags import valid_tag

    if not valid_tag(tag):
        raise HubError(400, f"invalid tag {tag!r}")
    skill, row = _version_of(session, slug, version)
    if row.status != PUBLISHED:
        raise HubError(409, f"{slug}@{version} is {row.status}, not published")
    move_tags(session, skill, row, [tag])
    bump_generation(session)
    audit(session, actor, "tag", slug=skill.slug, version=version, tag=tag, reason=reason)
    return row


def hold_version(session: Session, slug: str, version: str, *, actor: str, reason: str) -> Version:
    """Take a published version out of search and downloads (an admin's second look)."""
    skill, row = _version_of(session, slug, version)
    if row.status != PUBLISHED:
        raise HubError(409, f"{slug}@{version} is {row.status}, not published")
    row.status = HELD
    held_tags = [t.tag for t in skill.tags if t.version_id == row.id]
    row.pending_tags = json.dumps(held_tags)
    session.execute(delete(Tag).where(Tag.skill_id == skill.id, Tag.version_id == row.id))
    bump_generation(session)
    audit(session, actor, "hold", slug=skill.slug, version=version, reason=reason)
    return row


def delete_skill(
    session: Session, slug: str, version: str | None, *, actor: str, reason: str
) -> Sequence[str]:
    """Delete one version, or the whole skill; returns the versions deleted."""
    if version is not None:
        skill, row = _version_of(session, slug, version)
        rows = [row]
    else:
        found = find_skill(session, slug)
        if found is None:
            raise HubNotFound(f"skill {slug!r} not found")
        skill, rows = found, list(found.versions)
        skill.deleted_at = now_ms()
    ids = [r.id for r in rows]
    for r in rows:
        r.status = DELETED
    session.execute(delete(Tag).where(Tag.skill_id == skill.id, Tag.version_id.in_(ids)))
    bump_generation(session)
    names = [r.version for r in rows]
    audit(session, actor, "delete", slug=skill.slug, version=version, reason=reason, versions=names)
    return names


def exact_download(
    session: Session, slug: str, version: str, owner: str | None
) -> tuple[int, str, str, str] | None:
    """``(skill id, slug, status, archive key)`` of one named version, in one query.

    The hot path of every client install (they all name the version); anything else
    goes through :func:`find_skill` and :func:`resolve_version`.
    """
    query = (
        select(Skill.id, Skill.slug, Version.status, Version.archive_sha256)
        .join(Version, Version.skill_id == Skill.id)
        .where(Skill.slug == slug.strip().lower(), Skill.deleted_at.is_(None))
        .where(Version.version == version)
    )
    if owner:
        query = query.where(Skill.owner_handle == owner.strip().lstrip("@").lower())
    row = session.execute(query).first()
    return None if row is None else (int(row[0]), str(row[1]), str(row[2]), str(row[3]))


def count_download(session: Session, skill_id: int) -> None:
    session.execute(update(Skill).where(Skill.id == skill_id).values(downloads=Skill.downloads + 1))


def held_versions(session: Session) -> list[tuple[Skill, Version]]:
    rows = session.execute(
        select(Skill, Version).join(Version).where(Version.status == HELD).order_by(Version.id)
    ).all()
    return [(s, v) for s, v in rows]


def list_audit(session: Session, limit: int = 100) -> list[AuditEntry]:
    rows = session.execute(select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit))
    return list(rows.scalars())


def live_skills(session: Session) -> list[Skill]:
    """Every skill not deleted, with its versions and tags loaded."""
    rows = session.execute(
        select(Skill)
        .where(Skill.deleted_at.is_(None))
        .options(selectinload(Skill.versions), selectinload(Skill.tags))
    )
    return list(rows.scalars())
