"""A small round-robin HTTP proxy on 127.0.0.1, standing in for a load balancer in tests.

Usage: ``python proxy_app.py PORT UPSTREAM...``. Each request goes to the next
upstream with its Host header kept and ``X-Forwarded-For`` added; the answer carries
``X-Upstream`` naming the replica that served it.
"""

from __future__ import annotations

import itertools
import sys

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "proxy-authorization",
    "proxy-authenticate",
    "content-length",
}


def build(upstreams: list[str]) -> Starlette:
    turn = itertools.cycle(upstreams)
    client = httpx.AsyncClient(timeout=120)

    async def forward(request: Request) -> Response:
        upstream = next(turn)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        client_host = request.client.host if request.client else "127.0.0.1"
        headers["x-forwarded-for"] = client_host
        answer = await client.request(
            request.method,
            upstream + request.url.path,
            params=request.url.query,
            headers=headers,
            content=await request.body(),
        )
        out = Response(answer.content, status_code=answer.status_code)
        # Header by header: a login answer sets one cookie and clears another, and two
        # Set-Cookie headers must not be merged into one (as a dict of headers would).
        out.raw_headers = [
            (k.lower().encode("latin-1"), v.encode("latin-1"))
            for k, v in answer.headers.multi_items()
            if k.lower() not in _HOP | {"content-encoding"}
        ]
        out.raw_headers.append((b"content-length", str(len(answer.content)).encode()))
        out.raw_headers.append((b"x-upstream", upstream.encode("latin-1")))
        return out

    methods = ["GET", "POST", "PUT", "DELETE", "HEAD"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)])


if __name__ == "__main__":
    port, *ups = sys.argv[1:]
    uvicorn.run(build(ups), host="127.0.0.1", port=int(port), log_level="warning")
