"""Security headers on every answer of the registry, pages and API alike.

Pages carry a strict Content-Security-Policy (no script at all, nothing from another
origin, no framing). Every other answer that names no policy of its own gets
``default-src 'none'; sandbox``: the file route serves a skill's bytes with their own
content type, and an HTML or SVG file opened from it must not run script in the
registry's origin, where an admin's session lives. API clients ignore both headers;
bodies and statuses are untouched. ``X-Content-Type-Options: nosniff`` goes on all.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["PAGE_CSP", "PAGE_HEADERS", "SecurityHeaders", "secure_headers"]

PAGE_CSP: Final = (
    "default-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'; frame-src 'none'; img-src 'self'; "
    "style-src 'self'"
)

#: What every HTML page answers with.
PAGE_HEADERS: Final = {
    "Content-Security-Policy": PAGE_CSP,
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

_OTHER_CSP: Final = b"default-src 'none'; sandbox"


def secure_headers(raw: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``raw`` header lines with ``nosniff`` and the default policy where they are missing."""
    headers = list(raw)
    names = {k.lower() for k, _ in headers}
    if b"x-content-type-options" not in names:
        headers.append((b"x-content-type-options", b"nosniff"))
    if b"content-security-policy" not in names:
        headers.append((b"content-security-policy", _OTHER_CSP))
    return headers


class SecurityHeaders:
    """Pure ASGI middleware (no buffering: downloads stream as before)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": secure_headers(message.get("headers", []))}
            await send(message)

        await self.app(scope, receive, send_with_headers)
