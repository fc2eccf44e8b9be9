"""The JSON bodies the clients read, built from catalog rows (spec clawhub-api.md §3).

Pure: rows in, dictionaries out. Field names and types are what the ``clawhub`` CLI's
schemas require and what OpenClaw 2026.4/2026.9 read; ``source: "clawhub"`` and
``ownerHandle`` on every search row keep OpenClaw 2026.9 from dropping it.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, urlencode

from skillbook.distribution.hub import catalog
from skillbook.distribution.hub.models import HELD, Skill, Version
from skillbook.distribution.hub.search import Entry

__all__ = [
    "detail",
    "download_url",
    "list_item",
    "moderation",
    "publisher",
    "search_row",
    "security",
    "trending_item",
    "verdict",
    "verify",
    "version_detail",
    "version_item",
]


def publisher(handle: str) -> dict[str, Any]:
    return {"kind": "user", "handle": handle, "displayName": None, "image": None, "official": False}


def search_row(entry: Entry, score: float) -> dict[str, Any]:
    return {
        "score": score,
        "id": str(entry.skill_id),
        "source": "clawhub",
        "slug": entry.slug,
        "ownerHandle": entry.owner,
        "displayName": entry.display_name,
        "summary": entry.summary,
        "version": entry.version,
        "downloads": entry.downloads,
        "updatedAt": entry.updated_at,
        "owner": {"handle": entry.owner, "displayName": None, "image": None},
        "publisher": publisher(entry.owner),
        "official": False,
        "featured": False,
    }


def trending_item(entry: Entry) -> dict[str, Any]:
    return {
        "slug": entry.slug,
        "displayName": entry.display_name,
        "summary": entry.summary,
        "version": entry.version,
        "source": "clawhub",
        "official": False,
        "ownerHandle": entry.owner,
        "publisher": publisher(entry.owner),
        "metrics": {"rolling60DayInstalls": None, "bookmarks": None, "updatedAt": entry.updated_at},
    }


def _stats(skill: Skill) -> dict[str, Any]:
    return {"downloads": skill.downloads, "stars": 0, "versions": len(catalog.published(skill))}


def _latest(version: Version | None) -> dict[str, Any] | None:
    if version is None:
        return None
    return {
        "version": version.version,
        "createdAt": version.created_at,
        "changelog": version.changelog,
    }


def list_item(skill: Skill) -> dict[str, Any]:
    return {
        "slug": skill.slug,
        "displayName": skill.display_name,
        "summary": skill.summary,
        "tags": catalog.tag_map(skill),
        "stats": _stats(skill),
        "createdAt": skill.created_at,
        "updatedAt": skill.updated_at,
        "latestVersion": _latest(catalog.latest_version(skill)),
    }


def scan_of(version: Version) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(version.scan_json or "{}")
    return data


def flagged(scan: dict[str, Any]) -> int:
    """The findings that held the version (at the registry's hold severity or worse).

    Versions scanned before the hold severity was recorded were held for criticals.
    """
    return int(scan.get("holding", scan.get("blocking", 0)) or 0)


def hold_level(scan: dict[str, Any]) -> str:
    """``critical`` or ``high``: what the reason codes and texts name for a hold."""
    worst = scan.get("worst")
    return worst if worst in ("critical", "high") else "critical"


def security(version: Version) -> dict[str, Any]:
    """``version.security`` as ``clawhub inspect`` reads it, plus the scan counts."""
    scan = scan_of(version)
    counts = scan.get("counts", {})
    if version.status == HELD:
        status = "malicious"
    elif flagged(scan):
        status = "suspicious"  # findings that held it, released by an admin
    else:
        status = "clean"
    warnings = sum(int(counts.get(k, 0)) for k in ("critical", "high", "medium"))
    return {
        "status": status,
        "hasWarnings": warnings > 0,
        "checkedAt": version.created_at,
        "model": f"skillbook-scanner {scan.get('rules', '')}".strip(),
        "counts": counts,
        "held": version.status == HELD,
        "releasedBy": version.released_by,
    }


def moderation(version: Version | None, *, evidence: bool = False) -> dict[str, Any]:
    scan = scan_of(version) if version is not None else {}
    suspicious = bool(flagged(scan))
    out: dict[str, Any] = {
        "isSuspicious": suspicious,
        "isMalwareBlocked": False,
        "verdict": "suspicious" if suspicious else "clean",
        "reasonCodes": [f"scan:{hold_level(scan)}_released"] if suspicious else [],
        "updatedAt": version.created_at if version is not None else None,
        "engineVersion": scan.get("rules"),
        "summary": overview(version) if version is not None else None,
    }
    if evidence:
        severities = {"critical": "critical", "high": "warn", "medium": "warn"}
        out["evidence"] = [
            {
                "code": f["rule"],
                "severity": severities.get(f["severity"], "info"),
                "file": f["file"],
                "line": f.get("line") or 0,
                "message": f["message"],
                "evidence": f.get("excerpt", ""),
            }
            for f in scan.get("findings", [])
        ]
    return out


def detail(skill: Skill) -> dict[str, Any]:
    latest = catalog.latest_version(skill)
    return {
        "skill": {
            "slug": skill.slug,
            "displayName": skill.display_name,
            "summary": skill.summary,
            "tags": catalog.tag_map(skill),
            "stats": _stats(skill),
            "createdAt": skill.created_at,
            "updatedAt": skill.updated_at,
        },
        "latestVersion": _latest(latest),
        "owner": {"handle": skill.owner_handle, "displayName": None, "image": None},
        "moderation": moderation(latest),
    }


def version_item(version: Version) -> dict[str, Any]:
    return {
        "version": version.version,
        "createdAt": version.created_at,
        "changelog": version.changelog,
        "changelogSource": "user",
    }


def version_detail(skill: Skill, version: Version) -> dict[str, Any]:
    files = [
        {"path": f.path, "size": f.size, "sha256": f.sha256, "contentType": f.content_type}
        for f in version.files
    ]
    return {
        "version": {
            **version_item(version),
            "files": files,
            "fingerprint": version.fingerprint,
            "security": security(version),
            "scan": scan_of(version),
            "validation": json.loads(version.validation_json or "[]"),
        },
        "skill": {"slug": skill.slug, "displayName": skill.display_name},
    }


def download_url(base: str, slug: str, version: str) -> str:
    return f"{base}/api/v1/download?{urlencode({'slug': slug, 'version': version})}"


def scan_url(base: str, slug: str, version: str) -> str:
    return f"{base}/api/v1/skills/{quote(slug)}/versions/{quote(version)}/scan"


def overview(version: Version) -> str:
    scan = scan_of(version)
    counts = scan.get("counts", {})
    found = ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "no findings"
    line = f"skillbook scanner ({scan.get('rules', '?')}): {scan.get('filesScanned', 0)} files, {found}."
    level = hold_level(scan)
    if version.status == HELD:
        return line + f" Held: {level} findings; not downloadable until an admin releases it."
    if version.released_by:
        return line + f" Released despite {level} findings by {version.released_by}."
    return line


def verdict(
    base: str, item: dict[str, Any], skill: Skill | None, version: Version | None
) -> dict[str, Any]:
    """One answer of ``security-verdicts`` (OpenClaw 2026.9's trust check, §3.12)."""
    slug = str(item.get("slug") or "")
    asked = str(item.get("version") or "")
    out: dict[str, Any] = {"requestedSlug": slug, "requestedVersion": asked}
    if item.get("ownerHandle"):
        out["requestedOwnerHandle"] = item["ownerHandle"]
    if skill is None or version is None:
        code = "skill_not_found" if skill is None else "version_not_found"
        return {
            **out,
            "slug": slug,
            "version": None,
            "ok": False,
            "decision": "fail",
            "reasons": [code.replace("_", ".", 1)],
            "error": {"code": code, "message": f"{slug}@{asked} not found"},
        }
    sec = security(version)
    held = version.status == HELD
    level = hold_level(scan_of(version))
    reasons = [f"scan:{level}_blocked"] if held else []
    if not held and sec["status"] == "suspicious":
        reasons = [f"scan:{level}_released"]
    return {
        **out,
        "slug": skill.slug,
        "version": version.version,
        "displayName": skill.display_name,
        "publisherHandle": skill.owner_handle,
        "ok": not held,
        "decision": "blocked" if held else "pass",
        "reasons": reasons,
        "security": {"status": sec["status"], "passed": not held},
        "overview": overview(version),
        "securityAuditUrl": scan_url(base, skill.slug, version.version),
        "skillUrl": f"{base}/api/v1/skills/{quote(skill.slug)}",
    }


def verify(
    base: str, skill: Skill, version: Version, *, resolved_from: str, tag: str | None
) -> dict[str, Any]:
    """The ``clawhub.skill.verify.v1`` envelope (§3.11)."""
    sec = security(version)
    ok = version.status != HELD
    return {
        "schema": "clawhub.skill.verify.v1",
        "ok": ok,
        "decision": "pass" if ok else "fail",
        "reasons": [] if ok else [f"scan:{hold_level(scan_of(version))}_blocked"],
        "slug": skill.slug,
        "displayName": skill.display_name,
        "pageUrl": f"{base}/api/v1/skills/{quote(skill.slug)}",
        "publisherHandle": skill.owner_handle,
        "publisherDisplayName": None,
        "publisherProfileUrl": None,
        "version": version.version,
        "resolvedFrom": resolved_from,
        "tag": tag,
        "createdAt": version.created_at,
        "card": None,
        "artifact": {
            "kind": "archive",
            "sha256": version.archive_sha256,
            "size": version.archive_size,
            "fingerprint": version.fingerprint,
            "downloadUrl": download_url(base, skill.slug, version.version),
        },
        "provenance": None,
        "security": {
            **sec,
            "overview": overview(version),
            "auditUrl": scan_url(base, skill.slug, version.version),
        },
        "signature": None,
    }
