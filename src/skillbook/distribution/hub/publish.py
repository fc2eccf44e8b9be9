"""The publish pipeline: upload tickets, received bytes, and the JSON publish call.

Input: a :class:`~skillbook.distribution.hub.tokens.Caller`, the request bodies the ``clawhub``
CLI 0.23.3 sends (spec §3.14: ``upload-url``, the raw upload, then ``POST
/api/v1/skills``), or the multipart form of other clients. Output: the publish
answer (``{ok, skillId, versionId, publicationStatus, …}``) or a
:class:`~skillbook.distribution.hub.HubError` with the HTTP status and a short plain-text message.

Every version is validated (the registry's mode; errors refuse it) and scanned
(findings at the hold severity, ``high`` by default, hold it: ``publicationStatus:
"pending"`` until an admin releases it). Who owns a new slug is decided by its unique
index in the transaction that writes the version, so two replicas cannot both claim
it. A retried publish of the same files answers as the first did, also when the two
arrive at once.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from skillbook.distribution.archives.layout import skill_file_of
from skillbook.distribution.archives.names import NameRejected
from skillbook.distribution.fingerprint import fingerprint_bytes_order, fingerprint_digests
from skillbook.distribution.hub import HubError, HubNotFound, PathRejected, catalog
from skillbook.distribution.hub.archive import (
    build_zip,
    check_publish_names,
    check_publish_path,
    name_refused,
)
from skillbook.distribution.hub.blobs import BlobStore
from skillbook.distribution.hub.checks import check_files
from skillbook.distribution.hub.db import Database
from skillbook.distribution.hub.housekeeping import check_quota
from skillbook.distribution.hub.models import (
    DELETED,
    HELD,
    PUBLISHED,
    Skill,
    Upload,
    Version,
    VersionFile,
)
from skillbook.distribution.hub.semver_tags import is_semver, valid_tag
from skillbook.distribution.hub.server_config import HubSettings
from skillbook.distribution.hub.tokens import Caller, now_ms

__all__ = ["SLUG_RE", "create_upload", "publish_version", "receive_upload"]

#: OpenClaw's rule for requested slugs (spec §5.3), lowercase only on our side.
SLUG_RE: Final = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
_SHA256: Final = re.compile(r"^[0-9a-f]{64}$")


class UploadRequest(msgspec.Struct):
    path: str
    size: int
    sha256: str | None = None
    contentType: str = "application/octet-stream"


class FileRef(msgspec.Struct):
    path: str
    size: int
    storageId: str
    sha256: str
    contentType: str = "application/octet-stream"
    uploadTicket: str | None = None


class PublishRequest(msgspec.Struct):
    slug: str
    version: str
    displayName: str | None = None
    ownerHandle: str | None = None
    changelog: str = ""
    tags: list[str] = msgspec.field(default_factory=lambda: ["latest"])
    files: list[FileRef] = msgspec.field(default_factory=list)


def _decode(kind: type[Any], body: bytes | Mapping[str, Any]) -> Any:
    try:
        if isinstance(body, bytes):
            return msgspec.json.decode(body, type=kind)
        return msgspec.convert(body, kind)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise HubError(400, f"Invalid request: {exc}") from None


def create_upload(session: Session, caller: Caller, body: bytes, settings: HubSettings) -> str:
    """Record an upload ticket for one file; returns the ticket."""
    req: UploadRequest = _decode(UploadRequest, body)
    _check_path(req.path)
    if req.size < 0 or req.size > settings.sizes.max_file_bytes:
        raise HubError(
            413, f'File "{req.path}" exceeds {_mib(settings.sizes.max_file_bytes)} limit'
        )
    if req.sha256 is not None and not _SHA256.match(req.sha256.lower()):
        raise HubError(400, f"Invalid sha256 for {req.path}")
    # Expired tickets and their blobs go in the housekeeping sweep, not here.
    check_quota(session, caller.token_id, req.size, settings, f'"{req.path}"', now_ms())
    ticket = secrets.token_urlsafe(24)
    session.add(
        Upload(
            ticket=ticket,
            token_id=caller.token_id,
            path=req.path,
            size=req.size,
            sha256=req.sha256.lower() if req.sha256 else None,
            content_type=req.contentType[:128],
            created_at=now_ms(),
        )
    )
    return ticket


def receive_upload(
    session: Session, blobs: BlobStore, caller: Caller, ticket: str, data: bytes
) -> str:
    """Store the bytes of an upload ticket; returns the storage id (their sha256)."""
    row = session.get(Upload, ticket)
    if row is None or row.token_id != caller.token_id:
        raise HubNotFound("Upload not found")
    digest = hashlib.sha256(data).hexdigest()
    if row.sha256 is not None and digest != row.sha256:
        raise HubError(400, f"Upload of {row.path} does not match its sha256")
    if len(data) != row.size:
        raise HubError(400, f"Upload of {row.path} is {len(data)} bytes, not {row.size}")
    key = blobs.put(data)
    row.storage_id = key
    return key


def _mib(n: int) -> str:
    return f"{n // (1024 * 1024)}MB"


def _check_path(path: str) -> None:
    try:
        check_publish_path(path)
    except PathRejected as exc:
        raise HubError(400, str(exc)) from None
    except NameRejected as exc:
        raise name_refused(exc) from None


@dataclass(frozen=True, slots=True)
class _Files:
    entries: list[tuple[str, bytes, str]]  # path, bytes, content type


def _gather(
    session: Session,
    blobs: BlobStore,
    caller: Caller,
    req: PublishRequest,
    settings: HubSettings,
    direct: Mapping[str, bytes] | None,
) -> _Files:
    sizes = settings.sizes
    entries: list[tuple[str, bytes, str]] = []
    if direct is not None:
        for path, data in direct.items():
            _check_path(path)
            entries.append((path, data, "application/octet-stream"))
        size = sum(len(data) for data in direct.values())
        check_quota(session, caller.token_id, size, settings, "this publish", now_ms())
    else:
        oldest = now_ms() - settings.upload_ttl_seconds * 1000
        for ref in req.files:
            _check_path(ref.path)
            upload = session.get(Upload, ref.uploadTicket) if ref.uploadTicket else None
            if upload is None:
                upload = (
                    session.execute(
                        select(Upload).where(
                            Upload.storage_id == ref.storageId, Upload.token_id == caller.token_id
                        )
                    )
                    .scalars()
                    .first()
                )
            if (
                upload is None
                or upload.token_id != caller.token_id
                or upload.storage_id != ref.storageId
                or upload.created_at < oldest
            ):
                raise HubError(400, f"No finished upload for {ref.path} (upload it again)")
            try:
                data = blobs.get(ref.storageId)
            except HubNotFound:
                raise HubError(400, f"Uploaded content of {ref.path} is missing") from None
            if hashlib.sha256(data).hexdigest() != ref.sha256.lower() or len(data) != ref.size:
                raise HubError(400, f"{ref.path}: sha256 or size differs from the upload")
            entries.append((ref.path, data, ref.contentType[:128]))
    if not entries:
        raise HubError(400, "SKILL.md required")
    if len(entries) > sizes.max_files:
        raise HubError(413, f"Too many files ({len(entries)} > {sizes.max_files})")
    check_publish_names(path for path, _, _ in entries)
    seen = {path for path, _, _ in entries}
    total = 0
    for path, data, _ in entries:
        if len(data) > sizes.max_file_bytes:
            raise HubError(413, f'File "{path}" exceeds {_mib(sizes.max_file_bytes)} limit')
        total += len(data)
    if total > sizes.max_version_bytes:
        raise HubError(413, f"Skill bundle exceeds {_mib(sizes.max_version_bytes)} limit")
    if skill_file_of(seen) is None:
        raise HubError(400, "SKILL.md required")
    return _Files(entries)


def _publish_key(req: PublishRequest, files: _Files) -> str:
    lines = sorted(f"{p}:{hashlib.sha256(d).hexdigest()}" for p, d, _ in files.entries)
    material = json.dumps([req.slug, req.version, lines])
    return hashlib.sha256(material.encode()).hexdigest()


def _answer(skill: Skill, version: Version) -> dict[str, Any]:
    status = "published" if version.status == PUBLISHED else "pending"
    return {
        "ok": True,
        "skillId": str(skill.id),
        "versionId": str(version.id),
        "status": status,
        "slug": skill.slug,
        "version": version.version,
        "publicationStatus": status,
    }


def publish_version(
    db: Database,
    blobs: BlobStore,
    settings: HubSettings,
    caller: Caller,
    body: bytes | Mapping[str, Any],
    *,
    direct: Mapping[str, bytes] | None = None,
) -> dict[str, Any]:
    """Check, store and record one version; the publish answer or :class:`HubError`."""
    req: PublishRequest = _decode(PublishRequest, body)
    slug = req.slug.strip()
    if not SLUG_RE.match(slug):
        raise HubError(400, f"Invalid slug {req.slug!r}: use lowercase a-z, 0-9 and '-'")
    req.slug = slug
    if not is_semver(req.version):
        raise HubError(400, f"Version {req.version!r} is not valid semver")
    tags = [t.strip() for t in req.tags if t.strip()] or ["latest"]
    bad = [t for t in tags if not valid_tag(t)]
    if bad:
        raise HubError(400, f"Invalid tag {bad[0]!r}")
    owner = (req.ownerHandle or caller.handle).strip().lstrip("@").lower()
    if owner != caller.handle and not caller.admin:
        raise HubError(403, f"Token of @{caller.handle} cannot publish as @{owner}")
    with db.session() as session:
        files = _gather(session, blobs, caller, req, settings, direct)
    key = _publish_key(req, files)
    with db.session() as session:
        # An early answer that spares the checks; the write below decides again.
        skill = catalog.find_skill(session, slug)
        if skill is not None:
            done = _decide_existing(skill, owner, caller, req.version, key)
            if done is not None:
                return done
    pairs = [(p, d) for p, d, _ in files.entries]
    checks = check_files(pairs, slug=slug, mode=settings.validate_mode, hold=settings.hold_severity)
    if not checks.valid:
        errors = [d for d in checks.validation if d.severity == "error"]
        detail = "; ".join(f"[{d.code}] {d.message}" for d in errors[:5])
        raise HubError(422, f"Validation failed ({settings.validate_mode} mode): {detail}")
    for _, data, _ in files.entries:
        blobs.put(data)  # multipart content arrives here first; uploads are stored already
    archive = build_zip(pairs)
    archive_key = blobs.put(archive)
    digests = [(p, hashlib.sha256(d).hexdigest()) for p, d in pairs]
    skill_md_path = skill_file_of(p for p, _ in pairs) or "SKILL.md"
    skill_md = dict(pairs)[skill_md_path].decode("utf-8", "replace")
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    parsed = parse_skill_text(skill_md)
    held = checks.held
    now = now_ms()
    display = (req.displayName or "").strip() or parsed.name or slug
    try:
        with db.session() as session:
            skill = _claim_skill(session, slug, owner, now)
            done = _decide_existing(skill, owner, caller, req.version, key)
            if done is not None:
                return done
            version = Version(
                skill_id=skill.id,
                version=req.version,
                created_at=now,
                changelog=req.changelog,
                status=HELD if held else PUBLISHED,
                publisher=caller.handle,
                fingerprint=fingerprint_digests(digests),
                fingerprint_bytes=fingerprint_bytes_order(digests),
                archive_sha256=archive_key,
                archive_size=len(archive),
                skill_md=skill_md,
                display_name=display,
                scan_json=json.dumps(checks.scan),
                scan_worst=checks.worst,
                validation_json=json.dumps(checks.validation_json()),
                pending_tags=json.dumps(tags if held else []),
                publish_key=key,
                token_id=caller.token_id,
            )
            session.add(version)
            session.flush()
            for (path, data, ctype), (_, digest) in zip(files.entries, digests, strict=True):
                session.add(
                    VersionFile(
                        version_id=version.id,
                        path=path,
                        size=len(data),
                        sha256=digest,
                        content_type=ctype,
                    )
                )
            if not held:
                # A held version moves no tag and says nothing in public until released.
                catalog.make_public(session, skill, version, tags)
            catalog.bump_generation(session)
            catalog.audit(
                session,
                caller.handle,
                "publish",
                slug=slug,
                version=req.version,
                held=held,
                scanWorst=checks.worst,
                blocking=checks.scan["blocking"],
                holding=checks.scan["holding"],
                fingerprint=version.fingerprint,
                tags=tags,
            )
            session.flush()
            return _answer(skill, version)
    except IntegrityError:
        # Not expected (the skill row is claimed and locked first); answer as the row
        # that won would have answered, never with a bare server error.
        with db.session() as session:
            skill = catalog.find_skill(session, slug)
            done = (
                None if skill is None else _decide_existing(skill, owner, caller, req.version, key)
            )
        if done is not None:
            return done
        raise HubError(409, f"Version {req.version} of {slug} already exists") from None


def _decide_existing(
    skill: Skill, owner: str, caller: Caller, version: str, key: str
) -> dict[str, Any] | None:
    """Refuse a publish into someone else's skill or over another version's content;
    the first answer again for a retry of the same publish; None: go ahead."""
    if skill.deleted_at is not None:
        raise HubError(409, f"Skill {skill.slug} was deleted; publish under another slug")
    if skill.owner_handle != owner and not caller.admin:
        raise HubError(403, f"Skill {skill.slug} belongs to @{skill.owner_handle}")
    existing = next((v for v in skill.versions if v.version == version), None)
    if existing is None:
        return None
    if existing.publish_key == key and existing.status != DELETED:
        return _answer(skill, existing)
    raise HubError(409, f"Version {version} of {skill.slug} already exists")


def _claim_skill(session: Session, slug: str, owner: str, now: int) -> Skill:
    """The row of ``slug``, created for ``owner`` when new, locked for this transaction.

    The unique index on ``skills.slug`` decides who owns a new slug: the insert that
    does nothing on a conflict is the transaction's first statement, so of two
    publishers racing for one slug exactly one creates the row and the other reads
    it (owned by the first) in the transaction that would write its version. The
    row stays locked until commit (SQLite: the write lock the insert took;
    PostgreSQL: ``FOR UPDATE``), so publishes to one skill write one at a time and
    each sees the versions and tags of the one before.
    """
    postgres = session.get_bind().dialect.name == "postgresql"
    dialect_insert = pg_insert if postgres else sqlite_insert
    session.execute(
        dialect_insert(Skill)
        .values(
            slug=slug,
            owner_handle=owner,
            # Public words come from the first version made public, never a held one.
            display_name=slug,
            summary=None,
            created_at=now,
            updated_at=now,
            downloads=0,
        )
        .on_conflict_do_nothing(index_elements=[Skill.slug])
    )
    query = (
        select(Skill)
        .where(Skill.slug == slug)
        .options(selectinload(Skill.versions), selectinload(Skill.tags))
        .execution_options(populate_existing=True)
    )
    if postgres:
        query = query.with_for_update(of=Skill)
    return session.execute(query).scalar_one()
