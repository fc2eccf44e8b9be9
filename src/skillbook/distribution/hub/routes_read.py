"""The read side of the API: search, list, detail, versions, files, downloads, resolve, install.

Each handler takes a :class:`~skillbook.distribution.hub.http.Ctx` and returns a response in the
shape of ``shapes``; unknown skills are ``404 Skill not found`` (the text the clawhub
CLI recognises). Held and deleted versions are never listed or downloaded; their
owner and admins can still read a held version's detail and scan.

Archives and files are immutable bytes under their sha256: they carry a strong
``ETag`` (the hash), ``If-None-Match`` is answered ``304``, and a URL that names the
version is ``Cache-Control: immutable``. :data:`FAST_HANDLERS` answer a download or
a search again from memory (the resolved archive and its bytes, the search body of
the current catalog generation) without a thread or the database.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import parse_qsl

from sqlalchemy import exists, select
from sqlalchemy.orm import Session, selectinload
from starlette.responses import FileResponse, Response

from skillbook.distribution.hub import HttpError, catalog, shapes
from skillbook.distribution.hub.blobs import FolderBlobStore
from skillbook.distribution.hub.hot import BLOB_CACHE_ITEM
from skillbook.distribution.hub.http import Ctx, json, json_bytes
from skillbook.distribution.hub.models import DELETED, HELD, PUBLISHED, Skill, Version
from skillbook.distribution.hub.search import Entry, HubSearch

__all__ = ["FAST_HANDLERS", "IMMUTABLE", "READ_HANDLERS", "REVALIDATE"]

NOT_FOUND = "Skill not found"
#: A URL that names the version always means the same bytes (a version is never replaced).
IMMUTABLE: Final = "public, max-age=31536000, immutable"
#: "Latest" or a tag can move: caches ask again (with the ETag, a 304 is cheap).
REVALIDATE: Final = "no-cache"


def _int(ctx: Ctx, name: str, default: int, low: int, high: int) -> int:
    return _number(ctx.query.get(name), name, default, low, high)


def _number(raw: str | None, name: str, default: int, low: int, high: int) -> int:
    try:
        value = int(raw) if raw not in (None, "") else default
    except ValueError:
        raise HttpError(400, f"{name} must be a number") from None
    return max(low, min(high, value))


def _skill(ctx: Ctx, session: Session) -> Skill:
    skill = catalog.find_skill(session, ctx.param("slug"), ctx.query.get("ownerHandle"))
    if skill is None:
        raise HttpError(404, NOT_FOUND)
    return skill


def _can_see_held(ctx: Ctx, skill: Skill) -> bool:
    return ctx.caller is not None and (ctx.caller.admin or ctx.caller.handle == skill.owner_handle)


def well_known(ctx: Ctx) -> Response:
    return json({"apiBase": ctx.base_url, "authBase": ctx.base_url})


def search(ctx: Ctx) -> Response:
    limit = _int(ctx, "limit", 25, 1, 200)
    query = ctx.query.get("q", "")
    key, hits = ctx.hub.search.search_at(query, limit=limit, exact=ctx.query.get("mode") == "exact")
    body = _search_body(ctx.hub.search, hits)
    ctx.hub.search.keep_body(key, body)
    return Response(body, media_type="application/json")


def _search_body(search: HubSearch, hits: Sequence[tuple[Entry, float]]) -> bytes:
    """The bytes ``json({"results": rows})`` gives for the hits with their scores rounded
    to 6 places (``Hit`` scores are already), each row's all but its score encoded once
    per generation: encoding 25 rows was a tenth of a new query's time."""
    scores = [score for _, score in hits]
    if not all(map(math.isfinite, scores)):
        # JSON has no NaN: the encoder's refusal, as before.
        rows = [shapes.search_row(e, round(score, 6)) for e, score in hits]
        return bytes(json({"results": rows}).body)
    parts = [
        b'{"score":%b,%b' % (_score_json(score), rest)
        for score, rest in zip(scores, search.rows(hits, _row_rest), strict=True)
    ]
    return b'{"results":[' + b",".join(parts) + b"]}"


def _score_json(score: float) -> bytes:
    """``repr(round(score, 6))``, as the JSON encoder writes that float, in fewer steps.

    ``"%.6f"`` rounds as ``round(score, 6)`` does (the nearest 6-place decimal of the
    exact value, ties to even) and writes that decimal; ``repr`` of the rounded float is
    the same digits without trailing zeros wherever it writes no exponent (at least
    1e-4, or zero) and no shorter decimal names the same float (below 1e8, where floats
    are far closer than 1e-6). Elsewhere ``repr`` itself. Rounding and ``repr`` were a
    tenth of a new query's answer (tests/distribution/hub/test_search_same.py).
    """
    if -1e8 < score < 1e8:
        text = b"%.6f" % score
        head = text.rstrip(b"0")
        if head[-1:] == b".":
            return head + b"0"  # a whole number, or zero: "1.0", "-0.0"
        if not text.startswith((b"0.0000", b"-0.0000")):
            return head
    return b"%a" % round(score, 6)  # %a of a float is its repr


def _row_rest(entry: Entry) -> bytes:
    """A search row's JSON after ``{"score":...,`` (the score comes first in the row)."""
    row = shapes.search_row(entry, 0.0)
    del row["score"]
    return json_bytes(row)[1:]


def search_fast(ctx: Ctx) -> Response | None:
    """The body of the same search in the current generation, if this process made it."""
    generation = ctx.hub.watch.fresh()
    if generation is None:
        return None
    # The query string read as Starlette's ``QueryParams`` reads it (the last of a name
    # wins), without building one: that was a tenth of an answer from memory.
    raw = ctx.request.scope["query_string"].decode("latin-1")
    args = dict(parse_qsl(raw, keep_blank_values=True))
    limit = _number(args.get("limit"), "limit", 25, 1, 200)
    key = ctx.hub.search.answer_key(
        generation, args.get("q", ""), limit, args.get("mode") == "exact"
    )
    body = ctx.hub.search.body(key)
    if body is not None:
        return Response(body, media_type="application/json")
    # A new query: ranked here when that is cheaper than a worker thread's round trip
    # and nothing is to be waited for.
    found = ctx.hub.search.search_quick(key[1], limit=limit, exact=key[3], generation=generation)
    if found is None:
        return None
    body = _search_body(ctx.hub.search, found[1])
    ctx.hub.search.keep_body(found[0], body, wait=False)
    return Response(body, media_type="application/json")


def trending(ctx: Ctx) -> Response:
    limit = _int(ctx, "limit", 20, 1, 100)
    entries = sorted(
        ctx.hub.search.entries(), key=lambda e: (e.downloads, e.updated_at), reverse=True
    )
    return json({"items": [shapes.trending_item(e) for e in entries[:limit]]})


_SORTS: dict[str, Any] = {
    "createdAt": Skill.created_at.desc(),
    "updated": Skill.updated_at.desc(),
    "downloads": Skill.downloads.desc(),
    "installs": Skill.downloads.desc(),
    "installsCurrent": Skill.downloads.desc(),
    "installsAllTime": Skill.downloads.desc(),
    "trending": Skill.downloads.desc(),
    "stars": Skill.updated_at.desc(),
    "rating": Skill.updated_at.desc(),
}


def list_skills(ctx: Ctx) -> Response:
    limit = _int(ctx, "limit", 25, 1, 200)
    offset = _int(ctx, "cursor", 0, 0, 10**9)
    order = _SORTS.get(ctx.query.get("sort") or "updated", Skill.updated_at.desc())
    visible = exists().where(Version.skill_id == Skill.id, Version.status == PUBLISHED)
    query = select(Skill).where(Skill.deleted_at.is_(None), visible)
    prefix = (ctx.query.get("prefix") or "").strip().lower()
    if prefix:
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(Skill.slug.like(escaped + "%", escape="\\"))
    query = query.order_by(order, Skill.id).offset(offset).limit(limit + 1)
    query = query.options(selectinload(Skill.versions), selectinload(Skill.tags))
    with ctx.hub.db.session() as session:
        rows = list(session.execute(query).scalars())
        items = [shapes.list_item(s) for s in rows[:limit]]
    more = len(rows) > limit
    return json({"items": items, "nextCursor": str(offset + limit) if more else None})


def detail(ctx: Ctx) -> Response:
    with ctx.hub.db.session() as session:
        return json(shapes.detail(_skill(ctx, session)))


def versions(ctx: Ctx) -> Response:
    limit = _int(ctx, "limit", 25, 1, 200)
    offset = _int(ctx, "cursor", 0, 0, 10**9)
    with ctx.hub.db.session() as session:
        rows = catalog.published(_skill(ctx, session))
        items = [shapes.version_item(v) for v in rows[offset : offset + limit]]
    more = len(rows) > offset + limit
    return json({"items": items, "nextCursor": str(offset + limit) if more else None})


def _version_row(ctx: Ctx, skill: Skill, name: str) -> Version:
    row = next((v for v in skill.versions if v.version == name), None)
    if row is None or row.status == DELETED:
        raise HttpError(404, "Version not found")
    if row.status == HELD and not _can_see_held(ctx, skill):
        raise HttpError(404, "Version not found")
    return row


def version_detail(ctx: Ctx) -> Response:
    with ctx.hub.db.session() as session:
        skill = _skill(ctx, session)
        row = _version_row(ctx, skill, ctx.param("version"))
        session.refresh(row, ["files"])
        return json(shapes.version_detail(skill, row))


def version_scan(ctx: Ctx) -> Response:
    """The scan report of a version; public for held versions too (it says why)."""
    with ctx.hub.db.session() as session:
        skill = _skill(ctx, session)
        row = next((v for v in skill.versions if v.version == ctx.param("version")), None)
        if row is None or row.status == DELETED:
            raise HttpError(404, "Version not found")
        return json(
            {
                "slug": skill.slug,
                "version": row.version,
                "status": row.status,
                "security": shapes.security(row),
                "scan": shapes.scan_of(row),
            }
        )


def _requested(ctx: Ctx, skill: Skill) -> Version:
    version, tag = ctx.query.get("version"), ctx.query.get("tag")
    row = catalog.resolve_version(skill, version, tag)
    if row is None:
        named = next((v for v in skill.versions if v.version == version), None)
        if named is not None and named.status == DELETED:
            raise HttpError(410, "Version deleted")
        if named is not None and named.status == HELD:
            raise HttpError(423, "Version held for security review")
        raise HttpError(404, "Version not found")
    return row


def file(ctx: Ctx) -> Response:
    path = ctx.query.get("path") or ""
    with ctx.hub.db.session() as session:
        row = _requested(ctx, _skill(ctx, session))
        session.refresh(row, ["files"])
        entry = next((f for f in row.files if f.path == path), None)
        if entry is None:
            raise HttpError(404, "File not found")
        key, ctype = entry.sha256, entry.content_type
    headers = _cache_headers(ctx, key)
    if _not_modified(ctx, headers["ETag"]):
        return Response(status_code=304, headers=headers)
    return Response(_blob(ctx, key), media_type=ctype, headers=headers)


def _cache_headers(ctx: Ctx, key: str) -> dict[str, str]:
    immutable = bool(ctx.query.get("version"))
    return {"ETag": f'"{key}"', "Cache-Control": IMMUTABLE if immutable else REVALIDATE}


def _not_modified(ctx: Ctx, etag: str) -> bool:
    """``If-None-Match`` names this ETag (weak comparison, as RFC 9110 asks for it)."""
    header = ctx.request.headers.get("if-none-match")
    if not header:
        return False
    wanted = etag.removeprefix("W/")
    return any(
        tag.strip() == "*" or tag.strip().removeprefix("W/") == wanted for tag in header.split(",")
    )


def _blob(ctx: Ctx, key: str) -> bytes:
    cached = ctx.hub.blob_cache.get(key)
    if cached is None:
        cached = ctx.hub.blobs.get(key)
        ctx.hub.blob_cache.put(key, cached)
    return cached


def moderation(ctx: Ctx) -> Response:
    with ctx.hub.db.session() as session:
        latest = catalog.latest_version(_skill(ctx, session))
        return json({"moderation": shapes.moderation(latest, evidence=True)})


def _download_key(ctx: Ctx) -> tuple[str, ...]:
    q = ctx.query
    return tuple(q.get(name) or "" for name in ("slug", "version", "tag", "ownerHandle"))


def download(ctx: Ctx) -> Response:
    slug = ctx.query.get("slug") or ""
    owner, version = ctx.query.get("ownerHandle"), ctx.query.get("version")
    # Read before the query: what is resolved is cached under a generation no newer
    # than the state it saw.
    generation = ctx.hub.watch.current()
    with ctx.hub.db.session() as session:
        found = catalog.exact_download(session, slug, version, owner) if version else None
        if found is not None and found[2] == PUBLISHED:
            skill_id, name, _, key = found
        else:
            skill = catalog.find_skill(session, slug, owner)
            if skill is None:
                raise HttpError(404, NOT_FOUND)
            row = _requested(ctx, skill)
            skill_id, name, key, version = skill.id, skill.slug, row.archive_sha256, row.version
    assert version is not None
    resolved = (skill_id, name, version, key)
    ctx.hub.resolved.put(generation, _download_key(ctx), resolved)
    return _archive(ctx, resolved)


def download_fast(ctx: Ctx) -> Response | None:
    """A download whose URL this process resolved in the current generation."""
    generation = ctx.hub.watch.fresh()
    if generation is None:
        return None
    resolved = ctx.hub.resolved.get(generation, _download_key(ctx))
    if resolved is None:
        return None
    if ctx.hub.blob_cache.get(resolved[3]) is None and not _not_modified(ctx, f'"{resolved[3]}"'):
        return None  # the bytes are in the store: read them in a thread
    return _archive(ctx, resolved)


def _archive(ctx: Ctx, resolved: tuple[int, str, str, str]) -> Response:
    """The archive's bytes (or 304); a download is counted when bytes are sent."""
    skill_id, name, version, key = resolved
    headers = _cache_headers(ctx, key)
    if _not_modified(ctx, headers["ETag"]):
        return Response(status_code=304, headers=headers)
    headers["Content-Disposition"] = f'attachment; filename="{name}-{version}.zip"'
    data = ctx.hub.blob_cache.get(key)
    if data is None:
        store = ctx.hub.blobs
        path = (
            store.large_file(key, BLOB_CACHE_ITEM) if isinstance(store, FolderBlobStore) else None
        )
        if path is not None:
            # Large archives stream from the file instead of sitting in memory.
            ctx.hub.downloads.add(skill_id)
            return FileResponse(path, media_type="application/zip", headers=headers)
        data = _blob(ctx, key)
    ctx.hub.downloads.add(skill_id)
    return Response(data, media_type="application/zip", headers=headers)


def resolve(ctx: Ctx) -> Response:
    digest = (ctx.query.get("hash") or "").strip().lower()
    with ctx.hub.db.session() as session:
        slug = ctx.query.get("slug") or ""
        skill = catalog.find_skill(session, slug, ctx.query.get("ownerHandle"))
        if skill is None:
            raise HttpError(404, NOT_FOUND)
        rows = catalog.published(skill)
        match = next((v for v in rows if digest in (v.fingerprint, v.fingerprint_bytes)), None)
        latest = catalog.latest_version(skill)
        return json(
            {
                "slug": skill.slug,
                "match": {"version": match.version} if match else None,
                "latestVersion": {"version": latest.version} if latest else None,
            }
        )


def install(ctx: Ctx) -> Response:
    with ctx.hub.db.session() as session:
        skill = _skill(ctx, session)
        latest = catalog.latest_version(skill)
        if latest is None:
            body = {
                "ok": False,
                "slug": skill.slug,
                "reason": "archive_version_missing",
                "message": f'Skill "{skill.slug}" has no installable version.',
                "status": 423,
            }
            return json(body, 423)
        url = shapes.download_url(ctx.base_url, skill.slug, latest.version)
        return json(
            {
                "ok": True,
                "slug": skill.slug,
                "installKind": "archive",
                "archive": {"version": latest.version, "downloadUrl": url},
            }
        )


def verify(ctx: Ctx) -> Response:
    version, tag = ctx.query.get("version"), ctx.query.get("tag")
    with ctx.hub.db.session() as session:
        skill = _skill(ctx, session)
        row = catalog.resolve_version(skill, version, tag)
        if row is None and version:
            named = next((v for v in skill.versions if v.version == version), None)
            row = named if named is not None and named.status == HELD else None
        if row is None:
            raise HttpError(404, "Version not found")
        source = "version" if version else "tag" if tag else "latest"
        return json(
            shapes.verify(
                ctx.base_url, skill, row, resolved_from=source, tag=tag if source == "tag" else None
            )
        )


def whoami(ctx: Ctx) -> Response:
    caller = ctx.need_caller()
    role = "admin" if caller.admin else "user"
    return json(
        {"user": {"handle": caller.handle, "displayName": None, "image": None, "role": role}}
    )


READ_HANDLERS = {
    "well_known": well_known,
    "search": search,
    "trending": trending,
    "list_skills": list_skills,
    "detail": detail,
    "versions": versions,
    "version_detail": version_detail,
    "version_scan": version_scan,
    "file": file,
    "moderation": moderation,
    "download": download,
    "resolve": resolve,
    "install": install,
    "verify": verify,
    "whoami": whoami,
}

FAST_HANDLERS = {"search": search_fast, "download": download_fast}
