"""A network tripwire: a loopback HTTP(S) proxy that records every request and refuses it.

Tests that must prove a command talks only to the registry they set point
``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` at it (with ``NO_PROXY`` for loopback, so
the test's own registry is reached directly). A request for any other host, such as
the public default ``https://clawhub.ai``, then lands here as ``CONNECT clawhub.ai:443``
instead of on the network, is recorded, and fails at once with 403.
"""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        line = self.rfile.readline(8192).decode("latin-1").strip()
        self.server.seen.append(line)  # type: ignore[attr-defined]
        while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
            pass
        self.wfile.write(
            b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[str] = []


class Tripwire:
    def __init__(self, server: _Server) -> None:
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"

    @property
    def seen(self) -> list[str]:
        """The request lines that tried to leave the machine (``CONNECT host:443 …``)."""
        return list(self._server.seen)


@contextmanager
def tripwire(monkeypatch: pytest.MonkeyPatch) -> Iterator[Tripwire]:
    server = _Server()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    wire = Tripwire(server)
    try:
        for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy"):
            monkeypatch.setenv(name, wire.url)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.setenv(name, "127.0.0.1,localhost")
        yield wire
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
