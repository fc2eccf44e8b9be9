"""The write side: upload tickets, uploads, publish (JSON or multipart), security verdicts.

Publishing follows the clawhub CLI 0.23.3 (spec §3.14): ``upload-url`` per file, the
raw bytes to the returned URL, then ``POST /api/v1/skills`` with the storage ids.
The upload URL points back at this registry; any replica accepts it, because tickets
live in the database and bytes in the shared blob store.
"""

from __future__ import annotations

import json as jsonlib
from typing import Any

from starlette.responses import Response

from skillbook.distribution.hub import HttpError, catalog, shapes
from skillbook.distribution.hub.http import Ctx, json
from skillbook.distribution.hub.publish import create_upload, publish_version, receive_upload

__all__ = ["WRITE_HANDLERS"]

MAX_VERDICTS = 100


def upload_url(ctx: Ctx) -> Response:
    caller = ctx.need_caller()
    with ctx.hub.db.session() as session:
        ticket = create_upload(session, caller, ctx.body, ctx.hub.settings)
    return json({"uploadUrl": f"{ctx.base_url}/api/v1/uploads/{ticket}", "uploadTicket": ticket})


def upload(ctx: Ctx) -> Response:
    caller = ctx.need_caller()
    with ctx.hub.db.session() as session:
        key = receive_upload(session, ctx.hub.blobs, caller, ctx.param("ticket"), ctx.body)
    return json({"storageId": key})


def publish(ctx: Ctx) -> Response:
    caller = ctx.need_caller()
    form: dict[str, Any] | None = getattr(ctx.request.state, "multipart", None)
    if form is not None:
        answer = publish_version(
            ctx.hub.db,
            ctx.hub.blobs,
            ctx.hub.settings,
            caller,
            form["payload"],
            direct=form["files"],
        )
    else:
        answer = publish_version(ctx.hub.db, ctx.hub.blobs, ctx.hub.settings, caller, ctx.body)
    return json(answer)


def verdicts(ctx: Ctx) -> Response:
    try:
        data = jsonlib.loads(ctx.body or b"{}")
    except ValueError:
        raise HttpError(400, "Invalid JSON") from None
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise HttpError(400, "items must be a list of {slug, version}")
    if len(items) > MAX_VERDICTS:
        raise HttpError(400, f"At most {MAX_VERDICTS} items per request")
    out = []
    with ctx.hub.db.session() as session:
        for item in items:
            slug = str(item.get("slug") or "")
            skill = catalog.find_skill(session, slug, item.get("ownerHandle")) if slug else None
            version = None
            if skill is not None:
                asked = str(item.get("version") or "")
                version = next(
                    (v for v in skill.versions if v.version == asked and v.status != "deleted"),
                    None,
                )
            out.append(shapes.verdict(ctx.base_url, item, skill, version))
    return json({"items": out})


def telemetry(ctx: Ctx) -> Response:
    return json({"ok": True})


WRITE_HANDLERS = {
    "upload_url": upload_url,
    "upload": upload,
    "publish": publish,
    "verdicts": verdicts,
    "telemetry": telemetry,
}
