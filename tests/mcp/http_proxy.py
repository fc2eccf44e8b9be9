"""A small round-robin HTTP reverse proxy on 127.0.0.1, standing in for a load balancer.

``python http_proxy.py PORT LOG BACKEND...``: every request goes to the next backend
in turn, with ``Host`` set to the backend's address (as nginx does by default) and
the response streamed back as it comes (server-sent events included). One line per
request goes to LOG: ``<backend index> <JSON-RPC method or HTTP method>``.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

_HOP = frozenset({"host", "content-length", "connection", "transfer-encoding", "keep-alive"})


def build(backends: list[str], log: str) -> Starlette:
    turn = itertools.cycle(range(len(backends)))
    client = httpx.AsyncClient(timeout=None)

    async def forward(request: Request) -> StreamingResponse:
        index = next(turn)
        base = backends[index]
        body = await request.body()
        try:
            method = json.loads(body).get("method", request.method) if body else request.method
        except (ValueError, AttributeError):
            method = request.method
        with open(log, "a") as fh:
            fh.write(f"{index} {method}\n")
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _HOP]
        headers.append(("host", urlsplit(base).netloc))
        upstream = client.build_request(
            request.method, base + request.url.path, headers=headers, content=body
        )
        response = await client.send(upstream, stream=True)

        async def chunks() -> AsyncIterator[bytes]:
            async for chunk in response.aiter_raw():
                yield chunk

        kept = {k: v for k, v in response.headers.items() if k.lower() not in _HOP}
        return StreamingResponse(
            chunks(),
            status_code=response.status_code,
            headers=kept,
            background=BackgroundTask(response.aclose),
        )

    methods = ["GET", "POST", "DELETE"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)])


def main() -> None:
    port, log, *backends = sys.argv[1:]
    uvicorn.run(build(backends, log), host="127.0.0.1", port=int(port), log_level="warning")


if __name__ == "__main__":
    main()
