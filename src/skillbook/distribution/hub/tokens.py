"""Bearer tokens: created by an operator, shown once, stored only as a hash.

A token is ``clh_`` plus 32 random bytes in URL-safe base64, the shape the hosted
ClawHub uses (no client checks it). With that much entropy a plain sha256 is the
right hash: there is nothing to brute-force, and a lookup is one indexed query.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import dataclass
from typing import Final

from sqlalchemy import select
from sqlalchemy.orm import Session

from skillbook.distribution.hub import HubError, HubNotFound
from skillbook.distribution.hub.models import Token

__all__ = [
    "HANDLE_RE",
    "Caller",
    "authenticate",
    "create_token",
    "hash_token",
    "list_tokens",
    "revoke_token",
]

TOKEN_PREFIX: Final = "clh_"
#: OpenClaw 2026.9's rule for owner handles (origin.json), so every client accepts ours.
HANDLE_RE: Final = re.compile(r"^[a-z0-9](?:[a-z0-9._-]{0,38}[a-z0-9])?$")


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a valid token belongs to."""

    token_id: int
    handle: str
    admin: bool
    token_hash: str


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def now_ms() -> int:
    return int(time.time() * 1000)


def create_token(session: Session, handle: str, *, admin: bool = False, label: str = "") -> str:
    """A new token for ``handle``; the only time the token itself exists."""
    handle = handle.strip().lstrip("@").lower()
    if not HANDLE_RE.match(handle):
        raise HubError(
            400,
            f"invalid handle {handle!r}: use 1-40 of a-z, 0-9, '.', '_', '-' "
            "(starting and ending with a letter or digit)",
        )
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    session.add(
        Token(
            token_hash=hash_token(token),
            prefix=token[:10],
            handle=handle,
            admin=admin,
            label=label,
            created_at=now_ms(),
        )
    )
    session.flush()
    return token


def authenticate(session: Session, token: str) -> Caller | None:
    """The caller a presented token stands for, or None (unknown or revoked)."""
    if not token or "\r" in token or "\n" in token:
        return None
    digest = hash_token(token)
    row = session.execute(
        select(Token).where(Token.token_hash == digest, Token.revoked_at.is_(None))
    ).scalar_one_or_none()
    if row is None:
        return None
    return Caller(token_id=row.id, handle=row.handle, admin=row.admin, token_hash=digest)


def list_tokens(session: Session) -> list[Token]:
    return list(session.execute(select(Token).order_by(Token.id)).scalars())


def revoke_token(session: Session, prefix_or_id: str) -> Token:
    """Revoke the token with that id or that shown prefix (``clh_AbCdE…``)."""
    query = select(Token).where(Token.revoked_at.is_(None))
    if prefix_or_id.isdigit():
        query = query.where(Token.id == int(prefix_or_id))
    else:
        query = query.where(Token.prefix == prefix_or_id[:10])
    rows = list(session.execute(query).scalars())
    if len(rows) != 1:
        raise HubNotFound(f"no single active token matches {prefix_or_id!r}")
    rows[0].revoked_at = now_ms()
    return rows[0]
