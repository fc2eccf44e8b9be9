"""Sign-in for the pages: a signed session cookie and CSRF tokens, no server state.

A person signs in with a registry token once: an admin's token opens the review pages,
a publisher's shows them their own held versions. The cookie then names the token (its id)
and an expiry, signed with HMAC-SHA256 under the token's stored hash. Any replica can
check it (the hash is in the shared database) and nothing is stored per session, so
revoking the token ends every session made with it, and the cookie never holds the
token itself. The CSRF token of a form is an HMAC of the session cookie under the
same key: it is bound to that session and cannot be computed without the database.

The sign-in form, before there is a session, uses a double-submit nonce: a random
cookie whose value the form repeats (a page elsewhere can neither read nor set it).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Final

from sqlalchemy import select
from sqlalchemy.orm import Session

from skillbook.distribution.hub.models import Token
from skillbook.distribution.hub.tokens import Caller

__all__ = [
    "LOGIN_COOKIE",
    "SESSION_COOKIE",
    "SESSION_SECONDS",
    "PageSession",
    "csrf_token",
    "csrf_valid",
    "new_login_nonce",
    "open_session",
    "session_value",
]

SESSION_COOKIE: Final = "skillbook_session"
LOGIN_COOKIE: Final = "skillbook_login"
#: How long a sign-in lasts (seconds); a revoked token ends it at once.
SESSION_SECONDS: Final = 12 * 3600
_VERSION: Final = "v1"


def _mac(key_hex: str, message: str) -> str:
    digest = hmac.new(bytes.fromhex(key_hex), message.encode("utf-8"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def session_value(caller: Caller, *, now: float | None = None) -> str:
    """The cookie value of a new session for ``caller``."""
    expires = int((time.time() if now is None else now) + SESSION_SECONDS)
    body = f"{_VERSION}.{caller.token_id}.{expires}"
    return f"{body}.{_mac(caller.token_hash, 'session|' + body)}"


@dataclass(frozen=True, slots=True)
class PageSession:
    """Who is signed in: ``caller.admin`` says whether they may review."""

    caller: Caller
    cookie: str

    @property
    def csrf(self) -> str:
        return csrf_token(self.caller, self.cookie)


def open_session(
    session: Session, cookie: str | None, *, now: float | None = None
) -> PageSession | None:
    """Who a session cookie stands for, or None (absent, forged, expired or revoked). The
    token's admin flag is read now, so a token no longer an admin's reviews nothing."""
    if not cookie or len(cookie) > 200:
        return None
    parts = cookie.split(".")
    if len(parts) != 4 or parts[0] != _VERSION or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    if int(parts[2]) < (time.time() if now is None else now):
        return None
    row = session.execute(
        select(Token).where(Token.id == int(parts[1]), Token.revoked_at.is_(None))
    ).scalar_one_or_none()
    if row is None:
        return None
    body = ".".join(parts[:3])
    if not hmac.compare_digest(parts[3], _mac(row.token_hash, "session|" + body)):
        return None
    caller = Caller(token_id=row.id, handle=row.handle, admin=row.admin, token_hash=row.token_hash)
    return PageSession(caller, cookie)


def csrf_token(caller: Caller, cookie: str) -> str:
    return _mac(caller.token_hash, "csrf|" + cookie)


def csrf_valid(signed_in: PageSession, presented: str | None) -> bool:
    return bool(presented) and hmac.compare_digest(str(presented), signed_in.csrf)


def new_login_nonce() -> str:
    return secrets.token_urlsafe(24)
