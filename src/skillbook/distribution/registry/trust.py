"""What the registry says of a release before it is downloaded, and after it is installed.

Input: a :class:`~skillbook.distribution.registry.client.RegistryClient`, a slug, an optional owner
and a version. Output: a :class:`TrustVerdict` from ``POST
/api/v1/skills/-/security-verdicts`` (clawhub-api.md §3.12, OpenClaw 2026.9's release
trust check), and the ``/verify`` envelope (§3.11) that 2026.9 keeps in the lock entry
as ``verification``.

The verdict is read as OpenClaw 2026.9 reads it: one item per requested release,
correlated by slug (any case), version (exactly) and owner; ``decision: "blocked"``,
``security.status: "malicious"`` or a reason holding ``malicious``/``malware`` or ending
in ``_blocked``/``.blocked`` blocks the release; ``pending``/``stale`` reasons are
notices; anything else that is not a clean pass needs review. An item with
``error.code == "skill_not_found"`` for an owner-qualified release falls back to
``/verify``. Official skills on ``https://clawhub.ai`` skip the check, as in 2026.9.

Where skillbook differs (the caller decides, see :mod:`skillbook.distribution.registry.staging`): a
registry that does not serve the route (404, 405, 501: every registry older than
OpenClaw 2026.9) gives ``disposition="unavailable"`` instead of failing the install,
because skillbook scans every skill itself before it is installed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal
from urllib.parse import quote

from skillbook.distribution.registry import RegistryError, RegistryNotFound
from skillbook.distribution.registry.client import RegistryClient

__all__ = ["TrustVerdict", "check_release", "fetch_verification", "verification_snapshot"]

VERDICTS_ROUTE: Final = "/api/v1/skills/-/security-verdicts"
_NO_ROUTE: Final = frozenset({404, 405, 501})
_PENDING: Final = frozenset({"pending", "pending_scan", "scan:pending", "scan_pending"})
_STALE: Final = frozenset({"stale", "scan:stale", "stale_scan"})
_BLOCKING_EXACT: Final = frozenset({"scan:malicious", "static:malicious"})
_REASON_TEXT: Final = {
    "scan:malicious": "malicious behavior detected",
    "static:malicious": "malicious behavior detected",
    "payload_strings": "suspicious payload strings",
    "security.status_not_clean": "security status is not clean",
    "skill.not_found": "skill was not found",
    "version.not_found": "skill version was not found",
    "scan:pending": "scan pending",
    "pending_scan": "scan pending",
    "scan_pending": "scan pending",
    "scan:stale": "scan data stale",
    "stale_scan": "scan data stale",
}

Disposition = Literal[
    "clean", "review-recommended", "review-required", "blocked", "skipped", "unavailable"
]


@dataclass(frozen=True, slots=True)
class TrustVerdict:
    """The registry's word on one release."""

    disposition: Disposition
    risks: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    overview: str | None = None
    audit_url: str | None = None
    #: Why there is no verdict (``unavailable``/``skipped``).
    note: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        parts = list(self.risks) + list(self.notices)
        text = "; ".join(parts) or (self.note or self.disposition)
        return text + (f" (details: {self.audit_url})" if self.audit_url else "")


def _str(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _owner(value: Any) -> str | None:
    text = _str(value)
    return text.lstrip("@").lower() or None if text else None


class _Untrusted(RegistryError):
    """A trust check failure before the registry's name is put in front of it."""


def _untrusted(slug: str, version: str, why: str) -> RegistryError:
    return _Untrusted(
        "registry.trust-unavailable", f'release trust check failed for "{slug}@{version}": {why}'
    )


def check_release(
    client: RegistryClient,
    slug: str,
    version: str,
    *,
    owner: str | None = None,
    official: bool = False,
) -> TrustVerdict:
    """The security verdict of ``slug@version``; raises ``registry.trust-unavailable``
    when the answer cannot be trusted (wrong count, wrong identity, no usable verdict)."""
    if official:
        return TrustVerdict("skipped", note="official skill on clawhub.ai")
    try:
        return _check_release(client, slug, version, owner)
    except _Untrusted as exc:
        # Named after the registry asked ("https://hub.example.com release trust check
        # failed …"), never "ClawHub" for a registry that is not.
        raise RegistryError(exc.code, f"{client.endpoint.label} {exc.message}") from None


def _check_release(
    client: RegistryClient, slug: str, version: str, owner: str | None
) -> TrustVerdict:
    item: dict[str, Any] = {"slug": slug, "version": version}
    if owner:
        item = {"slug": slug, "ownerHandle": owner, "version": version}
    try:
        raw = client.post_json(VERDICTS_ROUTE, {"items": [item]})
    except RegistryError as exc:
        if exc.status in _NO_ROUTE:
            return TrustVerdict("unavailable", note="the registry serves no security verdicts")
        raise _untrusted(slug, version, exc.message) from None
    items = _dict(raw).get("items")
    if not isinstance(items, list) or len(items) != 1 or not isinstance(items[0], dict):
        count = len(items) if isinstance(items, list) else 0
        raise _untrusted(slug, version, f"the registry returned {count} verdicts for 1 target")
    verdict: dict[str, Any] = items[0]
    if owner and _dict(verdict.get("error")).get("code") == "skill_not_found":
        verdict = _from_verification(
            fetch_verification(client, slug, version=version, owner=owner), slug, version
        )
    _check_identity(verdict, slug, version, owner, where=client.endpoint.label)
    return _assess(verdict, slug, version)


def _check_identity(
    item: dict[str, Any], slug: str, version: str, owner: str | None, *, where: str
) -> None:
    requested = (_str(item.get("requestedSlug")) or "").lower()
    if requested != slug.lower() or _str(item.get("requestedVersion")) != version:
        raise _untrusted(slug, version, "the verdict is for another release")
    asked = _owner(item.get("requestedOwnerHandle"))
    if asked and asked != owner:
        raise _untrusted(slug, version, f"the verdict is for owner {asked}")
    resolved = (_str(item.get("slug")) or _str(item.get("requestedSlug")) or "").lower()
    if resolved != slug.lower():
        raise _untrusted(slug, version, f'the registry returned skill "{resolved or "unknown"}"')
    error = _dict(item.get("error"))
    if item.get("version") is None and error.get("code") in (None, "version_not_found"):
        raise RegistryNotFound(
            "registry.not-found", f'Version "{version}" of skill "{slug}" not found on {where}.'
        )
    if _str(item.get("version")) != version or error:
        why = _str(error.get("message"))
        raise _untrusted(slug, version, "no usable security verdict" + (f": {why}" if why else ""))
    publisher = _owner(item.get("publisherHandle"))
    if owner and publisher != owner:
        raise _untrusted(slug, version, f'the registry returned publisher "{publisher}"')


def _assess(item: dict[str, Any], slug: str, version: str) -> TrustVerdict:
    security = _dict(item.get("security"))
    status = (_str(security.get("status")) or _str(security.get("rawStatus")) or "").lower()
    passed = security.get("passed") if isinstance(security.get("passed"), bool) else None
    decision = (_str(item.get("decision")) or "").lower()
    reasons = [r.strip() for r in item.get("reasons") or [] if isinstance(r, str) and r.strip()]
    if item.get("ok") is True and decision == "pass" and not (status and passed is True):
        raise _untrusted(slug, version, "no usable security verdict")
    overview, audit_url = _str(item.get("overview")), _str(item.get("securityAuditUrl"))
    if overview is None:
        raise _untrusted(slug, version, "the verdict has no audit overview")
    if audit_url is None:
        raise _untrusted(slug, version, "the verdict has no security audit URL")
    clean_pass = item.get("ok") is True and decision == "pass" and passed is not False
    scan = (status or "clean") if clean_pass else (status if status not in ("", "clean") else "")
    if not clean_pass and not reasons:
        reasons.append(f"decision:{decision or 'fail'}")
    lowered = [r.lower() for r in reasons]
    pending = status == "pending" or any(r in _PENDING - {"scan:pending"} for r in lowered)
    stale = status == "stale" or any(r in _STALE for r in lowered)
    soft = pending or stale
    risks = []
    blocked = decision == "blocked" or status == "malicious"
    blocked = blocked or any(_blocking_reason(r) for r in lowered)
    if blocked:
        risks.append("Download disabled by the registry for this release")
    if scan != "clean" and not (
        soft and scan in ("pending", "scan_pending", "stale", "stale_scan")
    ):
        risks.append(f"security scan status is {scan or 'suspicious'}")
    notices = ["security scan is pending"] * pending + ["scan data is stale"] * stale
    for reason, low in zip(reasons, lowered, strict=True):
        text = _REASON_TEXT.get(low, reason)
        (notices if soft and low in (_PENDING | _STALE) else risks).append(text)
    if not risks and not notices:
        disposition: Disposition = "clean"
    elif blocked or any(r in _BLOCKING_EXACT for r in lowered):
        disposition = "blocked"
    else:
        disposition = "review-required" if risks else "review-recommended"
    return TrustVerdict(disposition, tuple(risks), tuple(notices), overview, audit_url, raw=item)


def _blocking_reason(reason: str) -> bool:
    return (
        "malicious" in reason
        or "malware" in reason
        or reason.endswith(("_blocked", ".blocked"))
        or reason == "blocked"
    )


def _from_verification(envelope: dict[str, Any], slug: str, version: str) -> dict[str, Any]:
    """A verdict item from a ``/verify`` envelope (OpenClaw 2026.9's owner fallback)."""
    page = _str(envelope.get("pageUrl"))
    security = dict(_dict(envelope.get("security")))
    ok = envelope.get("ok") is True and (_str(envelope.get("decision")) or "") == "pass"
    if security and "passed" not in security and ok:
        security["passed"] = True
    return {
        "requestedSlug": slug,
        "requestedVersion": version,
        "slug": _str(envelope.get("slug")),
        "version": _str(envelope.get("version")),
        "publisherHandle": _str(envelope.get("publisherHandle")),
        "ok": envelope.get("ok"),
        "decision": envelope.get("decision"),
        "reasons": envelope.get("reasons") if isinstance(envelope.get("reasons"), list) else [],
        "security": security or None,
        "overview": _str(_dict(envelope.get("security")).get("summary")) or "ClawHub verify",
        "securityAuditUrl": f"{page}/security-audit?version={quote(version)}" if page else None,
    }


def fetch_verification(
    client: RegistryClient,
    slug: str,
    *,
    version: str | None = None,
    tag: str | None = None,
    owner: str | None = None,
    reference: str | None = None,
) -> dict[str, Any]:
    """``GET /api/v1/skills/<slug>/verify``: the verification envelope, as sent."""
    params: dict[str, str] = {}
    if version:
        params["version"] = version
    elif tag:
        params["tag"] = tag
    if owner:
        params["ownerHandle"] = owner
    if reference:
        params["reference"] = reference
    raw = client.get_json(f"/api/v1/skills/{quote(slug, safe='')}/verify", params)
    if not isinstance(raw, dict):
        raise RegistryError(
            "registry.bad-response",
            f"verification of {slug} on {client.endpoint.label} is not JSON",
        )
    return raw


def verification_snapshot(envelope: dict[str, Any]) -> dict[str, Any]:
    """The part of the envelope OpenClaw 2026.9 keeps in the lock entry, in its order."""
    out: dict[str, Any] = {
        "schema": envelope.get("schema"),
        "ok": envelope.get("ok"),
        "decision": envelope.get("decision"),
        "reasons": list(envelope.get("reasons") or []),
    }
    for key in ("card", "artifact", "provenance", "security", "signature"):
        if key in envelope:
            out[key] = envelope[key]
    return out
