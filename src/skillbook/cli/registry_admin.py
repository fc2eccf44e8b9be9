"""``skillbook registry token|held|release|hold|delete|audit``: the registry's admin commands.

They act on the database directly (an operator's machine, or any replica), never
through HTTP; each change is written to the audit log with the OS user as actor.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from skillbook.cli.context import ERR_USAGE, EXIT_FINDINGS, Context, emit_json, emit_lines, fail
from skillbook.cli.registry_store import actor_name, hub_settings, store_options


@click.group("token")
def token_cmd() -> None:
    """Create, list and revoke publish tokens."""


@token_cmd.command("create")
@store_options
@click.argument("handle")
@click.option("--admin", is_flag=True, help="May publish as anyone and see held versions.")
@click.option("--label", default="", help="A note shown by `token list`.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def token_create(
    obj: Context,
    db: str | None,
    blobs: str | None,
    handle: str,
    admin: bool,
    label: str,
    as_json: bool,
) -> None:
    """Create a token for HANDLE; it is printed once and stored only as a hash."""
    from skillbook.distribution.hub import HubError
    from skillbook.distribution.hub.server import database
    from skillbook.distribution.hub.tokens import create_token

    store = database(hub_settings(obj, db, blobs))
    try:
        with store.session() as session:
            token = create_token(session, handle, admin=admin, label=label)
            from skillbook.distribution.hub.catalog import audit

            audit(session, actor_name(), "token-create", handle=handle.lower(), admin=admin)
    except HubError as exc:
        fail(str(exc), error=ERR_USAGE)
    if as_json:
        emit_json({"token": token, "handle": handle.lower().lstrip("@"), "admin": admin})
    else:
        emit_lines([token])


@token_cmd.command("list")
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def token_list(obj: Context, db: str | None, blobs: str | None, as_json: bool) -> None:
    """List tokens (id, prefix, handle, admin, created, revoked); never the tokens."""
    from skillbook.distribution.hub.server import database
    from skillbook.distribution.hub.tokens import list_tokens

    with database(hub_settings(obj, db, blobs)).session() as session:
        rows = [
            {
                "id": t.id,
                "prefix": t.prefix,
                "handle": t.handle,
                "admin": t.admin,
                "label": t.label,
                "createdAt": t.created_at,
                "revokedAt": t.revoked_at,
            }
            for t in list_tokens(session)
        ]
    if as_json:
        emit_json({"tokens": rows})
        return
    emit_lines(
        [
            f"{r['id']:>4}  {r['prefix']}…  @{r['handle']}{'  admin' if r['admin'] else ''}"
            f"{'  revoked' if r['revokedAt'] else ''}  {r['label']}".rstrip()
            for r in rows
        ]
        or ["No tokens."]
    )


@token_cmd.command("revoke")
@store_options
@click.argument("token_id", metavar="ID_OR_PREFIX")
@click.pass_obj
def token_revoke(obj: Context, db: str | None, blobs: str | None, token_id: str) -> None:
    """Revoke a token by its id or its shown prefix; it stops working at once."""
    from skillbook.distribution.hub import HubError
    from skillbook.distribution.hub.catalog import audit
    from skillbook.distribution.hub.server import database
    from skillbook.distribution.hub.tokens import revoke_token

    try:
        with database(hub_settings(obj, db, blobs)).session() as session:
            row = revoke_token(session, token_id)
            audit(session, actor_name(), "token-revoke", handle=row.handle, id=row.id)
    except HubError as exc:
        fail(str(exc), error=ERR_USAGE)
    emit_lines([f"revoked token {row.id} ({row.prefix}…) of @{row.handle}"])


@click.command("held")
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def held_cmd(obj: Context, db: str | None, blobs: str | None, as_json: bool) -> None:
    """List versions the scan held back, with the findings that held them (exit 1 if any)."""
    from skillbook.distribution.hub.catalog import held_versions
    from skillbook.distribution.hub.server import database

    with database(hub_settings(obj, db, blobs)).session() as session:
        rows: list[dict[str, Any]] = []
        for skill, version in held_versions(session):
            scan = json.loads(version.scan_json or "{}")
            # The findings at the hold severity the registry had when it scanned them.
            levels = ("critical", "high") if scan.get("holdSeverity") == "high" else ("critical",)
            holding = [f for f in scan.get("findings", []) if f.get("severity") in levels]
            rows.append(
                {
                    "slug": skill.slug,
                    "version": version.version,
                    "publisher": version.publisher,
                    "createdAt": version.created_at,
                    "findings": holding,
                }
            )
    if as_json:
        emit_json({"held": rows})
    else:
        lines = []
        for r in rows:
            lines.append(f"{r['slug']}@{r['version']}  by @{r['publisher']}")
            lines += [
                f"  ⛔ {f['severity']} {f['rule']}  {f['file']}:{f.get('line') or ''}  "
                f"{f['message']}"
                for f in r["findings"]
            ]
        emit_lines(lines or ["No held versions."])
    if rows:
        raise SystemExit(EXIT_FINDINGS)


def _admin_change(
    obj: Context,
    db: str | None,
    blobs: str | None,
    change: Callable[..., Any],
    *args: Any,
    reason: str,
) -> Any:
    from skillbook.distribution.hub import HubError, HubNotFound
    from skillbook.distribution.hub.server import database

    try:
        with database(hub_settings(obj, db, blobs)).session() as session:
            return change(session, *args, actor=actor_name(), reason=reason)
    except HubError as exc:
        fail(str(exc), error="not-found" if isinstance(exc, HubNotFound) else ERR_USAGE)


REASON = click.option("--reason", required=True, help="Why (kept in the audit log).")


@click.command("release")
@store_options
@click.argument("slug")
@click.argument("version")
@REASON
@click.pass_obj
def release_cmd(
    obj: Context, db: str | None, blobs: str | None, slug: str, version: str, reason: str
) -> None:
    """Release a held VERSION of SLUG: searchable and downloadable, its tags moved."""
    from skillbook.distribution.hub.catalog import release_version

    _admin_change(obj, db, blobs, release_version, slug, version, reason=reason)
    emit_lines([f"released {slug}@{version}"])


@click.command("hold")
@store_options
@click.argument("slug")
@click.argument("version")
@REASON
@click.pass_obj
def hold_cmd(
    obj: Context, db: str | None, blobs: str | None, slug: str, version: str, reason: str
) -> None:
    """Hold a published VERSION of SLUG: out of search and downloads until released."""
    from skillbook.distribution.hub.catalog import hold_version

    _admin_change(obj, db, blobs, hold_version, slug, version, reason=reason)
    emit_lines([f"held {slug}@{version}"])


@click.command("tag")
@store_options
@click.argument("slug")
@click.argument("version")
@click.argument("tag")
@REASON
@click.pass_obj
def tag_cmd(
    obj: Context, db: str | None, blobs: str | None, slug: str, version: str, tag: str, reason: str
) -> None:
    """Move TAG of SLUG to VERSION (e.g. roll `latest` back to an earlier version)."""
    from skillbook.distribution.hub.catalog import set_tag

    _admin_change(obj, db, blobs, set_tag, slug, version, tag, reason=reason)
    emit_lines([f"{slug}: {tag} -> {version}"])


@click.command("delete")
@store_options
@click.argument("slug")
@click.argument("version", required=False)
@REASON
@click.pass_obj
def delete_cmd(
    obj: Context, db: str | None, blobs: str | None, slug: str, version: str | None, reason: str
) -> None:
    """Delete VERSION of SLUG, or the whole skill without VERSION (downloads answer 410)."""
    from skillbook.distribution.hub.catalog import delete_skill

    gone = _admin_change(obj, db, blobs, delete_skill, slug, version, reason=reason)
    emit_lines([f"deleted {slug}@{v}" for v in gone] or [f"deleted {slug}"])


@click.command("audit")
@store_options
@click.option(
    "-n",
    "--limit",
    default=50,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="How many entries, newest first.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def audit_cmd(obj: Context, db: str | None, blobs: str | None, limit: int, as_json: bool) -> None:
    """Show the audit log: publishes, releases, holds, deletions and token changes."""
    from skillbook.distribution.hub.catalog import list_audit
    from skillbook.distribution.hub.server import database

    with database(hub_settings(obj, db, blobs)).session() as session:
        rows = [
            {
                "at": e.at,
                "actor": e.actor,
                "action": e.action,
                "slug": e.slug,
                "version": e.version,
                "detail": json.loads(e.detail or "{}"),
            }
            for e in list_audit(session, limit)
        ]
    if as_json:
        emit_json({"entries": rows})
        return
    import datetime as dt

    lines = []
    for r in rows:
        when = dt.datetime.fromtimestamp(r["at"] / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        target = f"{r['slug']}@{r['version']}" if r["version"] else (r["slug"] or "")
        lines.append(f"{when}  {r['actor']:<16} {r['action']:<13} {target}".rstrip())
    emit_lines(lines or ["No audit entries."])


#: Added to ``skillbook registry`` by :mod:`skillbook.cli.registry_cmd`.
ADMIN_COMMANDS: tuple[click.Command, ...] = (
    token_cmd,
    held_cmd,
    release_cmd,
    hold_cmd,
    tag_cmd,
    delete_cmd,
    audit_cmd,
)
