"""A ClawHub-compatible registry for the tests, on 127.0.0.1 (clawhub-api.md §9).

It serves what the real clients call: search, ``/trending``, skill detail, version
detail, versioned downloads (flat ZIPs built from files given in the test, usually a
corpus skill), ``/resolve`` with the fingerprint of every stored version, ``/install``
(an archive, a GitHub hand-off or a structured refusal set by the test), the
security-verdicts POST and ``/verify`` of OpenClaw 2026.9 (a clean pass unless the test
sets a verdict), and ``/.well-known/clawhub.json`` when the test sets one. Tests
script failures per route (a status with headers and body, served before the normal
answer: 404, 429 with ``Retry-After``, 5xx), slow answers, hostile archives served as
a version's bytes, and read the requests it got (paths, queries, headers).
"""

from __future__ import annotations

import contextlib
import http.server
import io
import json
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from skillbook.distribution.fingerprint import fingerprint_hashes, sha256_hex


def flat_zip(files: dict[str, bytes], *, prefix: str = "") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            # A fixed time: the same files give the same bytes (and artifact sha256).
            zf.writestr(zipfile.ZipInfo(prefix + path, (1980, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


def folder_files(folder: Path) -> dict[str, bytes]:
    """The regular files of ``folder`` by relative path (a corpus skill, say)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(folder).as_posix()] = path.read_bytes()
    return out


@dataclass
class Version:
    files: dict[str, bytes]
    #: Bytes served instead of a ZIP of ``files`` (a hostile archive).
    archive: bytes | None = None

    def body(self) -> bytes:
        return self.archive if self.archive is not None else flat_zip(self.files)


@dataclass
class Skill:
    slug: str
    owner: str = "bar-owner"
    display_name: str = ""
    summary: str = ""
    versions: dict[str, Version] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    latest: str | None = None
    suspicious: bool = False
    malware: bool = False


@dataclass
class Failure:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


class ClawHubState:
    def __init__(self) -> None:
        self.skills: dict[tuple[str, str], Skill] = {}
        self.failures: dict[str, list[Failure]] = {}
        self.delay: dict[str, float] = {}
        self.requests: list[dict[str, Any]] = []
        self.resolve_route = True
        #: Where ``/install`` points ``downloadUrl`` (default: this server, relative).
        self.download_base = ""
        #: Other files served as they are (``/demo.zip`` for archive URLs).
        self.static: dict[str, bytes] = {}
        #: Serve the 2026.9 trust routes (False: an older registry, 404 for both).
        self.trust_routes = True
        #: Verdict fields per ``(slug, version)`` that replace the clean pass.
        self.verdicts: dict[tuple[str, str], dict[str, Any]] = {}
        #: ``/install`` answers per slug: ``(status, JSON)`` (a GitHub hand-off, a refusal).
        self.install: dict[str, tuple[int, Any]] = {}
        self.lock = threading.Lock()

    def publish(
        self,
        slug: str,
        version: str,
        files: dict[str, bytes],
        *,
        owner: str = "bar-owner",
        archive: bytes | None = None,
        tag: str = "latest",
        **meta: Any,
    ) -> Skill:
        skill = self.skills.get((owner, slug)) or Skill(slug, owner, **meta)
        self.skills[(owner, slug)] = skill
        skill.versions[version] = Version(dict(files), archive)
        skill.tags[tag] = version
        if tag == "latest":
            skill.latest = version
        return skill

    def find(self, slug: str, owner: str | None) -> Skill | None:
        if owner:
            return self.skills.get((owner, slug))
        found = [s for (o, s_), s in self.skills.items() if s_ == slug]
        return found[0] if found else None

    def fail(self, route: str, *failures: Failure) -> None:
        self.failures.setdefault(route, []).extend(failures)

    def routes(self) -> list[str]:
        return [r["path"] for r in self.requests]


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    def _json(self, value: Any, status: int = 200) -> None:
        self._send(status, json.dumps(value).encode(), {"Content-Type": "application/json"})

    def do_POST(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        state = self.server.state
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        body = None
        if self.command == "POST":
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        with state.lock:
            state.requests.append(
                {
                    "path": path,
                    "query": query,
                    "headers": dict(self.headers.items()),
                    "method": self.command,
                    "body": body,
                }
            )
            pending = state.failures.get(path)
            failure = pending.pop(0) if pending else None
            delay = state.delay.get(path, 0.0)
        if delay:
            time.sleep(delay)
        if failure is not None:
            self._send(failure.status, failure.body, failure.headers)
            return
        if body is not None:
            self._post(state, path, body)
        else:
            self._route(state, path, query)

    def _post(self, state: ClawHubState, path: str, body: Any) -> None:
        if path != "/api/v1/skills/-/security-verdicts" or not state.trust_routes:
            self._send(404, b"Not found")
            return
        items = []
        for item in body.get("items", []):
            slug, version = item["slug"], item["version"]
            skill = state.find(slug, item.get("ownerHandle"))
            verdict: dict[str, Any] = {
                "requestedSlug": slug,
                "requestedVersion": version,
                **({"requestedOwnerHandle": item["ownerHandle"]} if "ownerHandle" in item else {}),
                "slug": slug,
                "version": version if skill and version in skill.versions else None,
                "publisherHandle": skill.owner if skill else None,
                "ok": True,
                "decision": "pass",
                "reasons": [],
                "security": {"status": "clean", "passed": True},
                "overview": "No findings.",
                "securityAuditUrl": f"https://hub.test/skills/{slug}/security-audit",
            }
            verdict.update(state.verdicts.get((slug, version), {}))
            items.append(verdict)
        self._json({"items": items})

    def _verify(self, skill: Skill, query: dict[str, str]) -> None:
        version = query.get("version") or skill.tags.get(query.get("tag", "")) or skill.latest
        if version not in skill.versions:
            self._send(404, b"Version not found")
            return
        self._json(
            {
                "schema": "clawhub.skill.verify.v1",
                "ok": True,
                "decision": "pass",
                "reasons": [],
                "slug": skill.slug,
                "displayName": skill.display_name or skill.slug.title(),
                "pageUrl": f"https://hub.test/{skill.owner}/skills/{skill.slug}",
                "publisherHandle": skill.owner,
                "publisherDisplayName": None,
                "publisherProfileUrl": None,
                "version": version,
                "resolvedFrom": "version" if query.get("version") else "latest",
                "tag": None,
                "createdAt": 1,
                "card": None,
                "artifact": None,
                "provenance": None,
                "security": {"status": "clean"},
                "signature": None,
            }
        )

    def _route(self, state: ClawHubState, path: str, query: dict[str, str]) -> None:
        if path in state.static:
            self._send(200, state.static[path])
            return
        if path == "/api/v1/trending":
            items = [
                {
                    "slug": s.slug,
                    "displayName": s.display_name or s.slug.title(),
                    "summary": s.summary or None,
                    "source": "clawhub",
                    "publisher": {"handle": s.owner},
                }
                for s in state.skills.values()
            ]
            self._json({"items": items[: int(query.get("limit", "20"))]})
            return
        if path == "/api/v1/search":
            q = query.get("q", "")
            hits = [
                {
                    "score": 1.0,
                    "slug": s.slug,
                    "displayName": s.display_name or s.slug.title(),
                    "summary": s.summary or None,
                    "version": s.latest,
                    "updatedAt": 1,
                    "ownerHandle": s.owner,
                    "source": "clawhub",
                }
                for s in state.skills.values()
                if q == "*" or q.lower() in s.slug.lower()
            ]
            limit = int(query.get("limit", "50"))
            self._json({"results": hits[:limit]})
            return
        if path == "/api/v1/download":
            skill = state.find(query.get("slug", ""), query.get("ownerHandle"))
            version = query.get("version") or (
                skill.tags.get(query.get("tag", "")) if skill else None
            )
            version = version or (skill.latest if skill else None)
            if skill is None or version not in skill.versions:
                self._send(404, b"Skill not found")
                return
            self._send(200, skill.versions[version].body(), {"Content-Type": "application/zip"})
            return
        if path == "/api/v1/resolve":
            if not state.resolve_route:
                self._send(404, b"no route")
                return
            skill = state.find(query.get("slug", ""), query.get("ownerHandle"))
            if skill is None:
                self._json({"match": None, "latestVersion": None})
                return
            match = None
            for name, stored in skill.versions.items():
                pairs = [(p, sha256_hex(b)) for p, b in stored.files.items()]
                if query.get("hash") == fingerprint_hashes(pairs):
                    match = {"version": name}
            self._json({"match": match, "latestVersion": {"version": skill.latest}})
            return
        segments = path.split("/")
        if len(segments) >= 5 and segments[:4] == ["", "api", "v1", "skills"]:
            skill = state.find(segments[4], query.get("ownerHandle"))
            if skill is None:
                self._send(404, b"Skill not found")
                return
            rest = segments[5:]
            if not rest:
                self._json(self._detail(skill))
            elif rest[0] == "versions" and len(rest) == 2 and rest[1] in skill.versions:
                files = [
                    {
                        "path": p,
                        "size": len(b),
                        "sha256": sha256_hex(b),
                        "contentType": "text/plain",
                    }
                    for p, b in skill.versions[rest[1]].files.items()
                ]
                self._json(
                    {
                        "version": {
                            "version": rest[1],
                            "createdAt": 1,
                            "changelog": "",
                            "files": files,
                        },
                        "skill": {"slug": skill.slug, "displayName": skill.slug},
                    }
                )
            elif rest == ["verify"] and state.trust_routes:
                self._verify(skill, query)
            elif rest == ["install"] and skill.slug in state.install:
                status, answer = state.install[skill.slug]
                self._json(answer, status)
            elif rest == ["install"] and skill.versions:
                version = skill.latest or sorted(skill.versions)[-1]
                self._json(
                    {
                        "ok": True,
                        "slug": skill.slug,
                        "installKind": "archive",
                        "archive": {
                            "version": version,
                            "downloadUrl": f"{state.download_base}/api/v1/download"
                            f"?slug={skill.slug}&version={version}",
                        },
                    }
                )
            else:
                self._send(404, b"Skill not found")
            return
        self._send(404, b'{"error": "no route"}')

    @staticmethod
    def _detail(skill: Skill) -> dict[str, Any]:
        latest = (
            {"version": skill.latest, "createdAt": 1, "changelog": ""} if skill.latest else None
        )
        return {
            "skill": {
                "slug": skill.slug,
                "displayName": skill.display_name or skill.slug.title(),
                "summary": skill.summary or None,
                "tags": dict(skill.tags),
                "stats": {},
                "createdAt": 1,
                "updatedAt": 1,
            },
            "latestVersion": latest,
            "owner": {"handle": skill.owner},
            "moderation": {"isSuspicious": skill.suspicious, "isMalwareBlocked": skill.malware},
        }


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: ClawHubState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


class ClawHub:
    """A running test registry: ``url``, ``state``; stop with :meth:`close`."""

    def __init__(self) -> None:
        self.state = ClawHubState()
        self._server = _Server(self.state)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def running() -> Iterator[ClawHub]:
    hub = ClawHub()
    try:
        yield hub
    finally:
        hub.close()
