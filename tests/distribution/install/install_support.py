"""Helpers for the installer tests: stand-in executables, a download server, tree snapshots.

Stand-ins are small Python scripts written into a private ``bin`` folder that is the
whole ``PATH`` of the machine under test. Each appends ``{"name", "argv", "env"}`` as
one JSON line to a record file, prints what it was told to, may run a snippet (for
example create the binary it "installs"), and exits with the given code.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from skillbook.distribution.install.machine import Machine


@dataclass
class Standins:
    bin_dir: Path
    record: Path

    def source(
        self, name: str, *, code: int = 0, stdout: str = "", stderr: str = "", then: str = ""
    ) -> str:
        """The script of stand-in ``name``; ``then`` is Python run after recording
        (``argv`` is bound)."""
        return (
            f"#!{sys.executable}\n"
            "import json, os, sys\n"
            "argv = sys.argv[1:]\n"
            f"with open({str(self.record)!r}, 'a') as f:\n"
            f"    f.write(json.dumps({{'name': {name!r}, 'argv': argv, 'env': dict(os.environ)}}) + '\\n')\n"
            f"sys.stdout.write({stdout!r})\n"
            f"sys.stderr.write({stderr!r})\n"
            f"{then}\n"
            f"sys.exit({code})\n"
        )

    def add(
        self, name: str, *, code: int = 0, stdout: str = "", stderr: str = "", then: str = ""
    ) -> Path:
        path = self.bin_dir / name
        path.write_text(
            self.source(name, code=code, stdout=stdout, stderr=stderr, then=then), encoding="utf-8"
        )
        path.chmod(0o755)
        return path

    def installs(self, tool: str, *, when: str = "True") -> str:
        """Code for ``then=``: when ``when`` holds, put a recording ``tool`` stand-in on PATH."""
        target = str(self.bin_dir / tool)
        return (
            f"if {when}:\n"
            f"    open({target!r}, 'w').write({self.source(tool)!r})\n"
            f"    os.chmod({target!r}, 0o755)"
        )

    def calls(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(x) for x in self.record.read_text().splitlines()]

    def argvs(self) -> list[list[str]]:
        return [[c["name"], *c["argv"]] for c in self.calls()]


def machine_for(
    standins: Standins, home: Path, *, is_root: bool = False, platform: str = "linux", **env: str
) -> Machine:
    return Machine(
        platform=platform,
        env={"PATH": str(standins.bin_dir), "HOME": str(home), **env},
        is_root=is_root,
        home=home,
        brew_locations=(),
    )


# --------------------------------------------------------------------------- HTTP


Route = Callable[[http.server.BaseHTTPRequestHandler], None]


@dataclass
class Server:
    base: str
    routes: dict[str, Route] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)

    def file(self, path: str, body: bytes, *, status: int = 200) -> str:
        def send(h: http.server.BaseHTTPRequestHandler) -> None:
            h.send_response(status)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)

        self.routes[path] = send
        return self.base + path

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        def send(h: http.server.BaseHTTPRequestHandler) -> None:
            h.send_response(status)
            h.send_header("Location", location)
            h.send_header("Content-Length", "0")
            h.end_headers()

        self.routes[path] = send
        return self.base + path

    def lying(self, path: str, body: bytes, announced: int) -> str:
        """Announces ``announced`` bytes, sends ``body``, closes the connection."""

        def send(h: http.server.BaseHTTPRequestHandler) -> None:
            h.send_response(200)
            h.send_header("Content-Length", str(announced))
            h.end_headers()
            h.wfile.write(body)
            h.wfile.flush()
            h.close_connection = True

        self.routes[path] = send
        return self.base + path


def serve() -> Iterator[Server]:
    holder: dict[str, Server] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            srv = holder["server"]
            srv.hits.append(self.path)
            route = srv.routes.get(self.path.split("?", 1)[0])
            if route is None:
                self.send_response(404, "Not Found")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            route(self)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    holder["server"] = Server(base=f"http://127.0.0.1:{httpd.server_address[1]}")
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield holder["server"]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


# --------------------------------------------------------------------------- trees


def snapshot(root: Path, *, exclude: tuple[Path, ...] = ()) -> dict[str, tuple[str, str]]:
    """Every path under ``root`` (but ``exclude``d subtrees): its type and content hash."""
    out: dict[str, tuple[str, str]] = {}
    skip = {os.fspath(p) for p in exclude}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in skip]
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            if full in skip:
                continue
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", "")
            else:
                out[rel] = ("file", hashlib.sha256(Path(full).read_bytes()).hexdigest())
    return out


# --------------------------------------------------------------------------- fixtures
# Test modules import these by name (this folder has no conftest.py of its own).


@pytest.fixture(name="standins")
def standins_fixture(tmp_path: Path) -> Standins:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    return Standins(bin_dir=bin_dir, record=tmp_path / "calls.jsonl")


@pytest.fixture(name="server")
def server_fixture() -> Iterator[Server]:
    yield from serve()
