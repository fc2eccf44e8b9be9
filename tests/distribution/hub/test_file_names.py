"""Published file names over real HTTP: every name rule is a 400 with a JSON body, never a 500.

The registry runs under uvicorn on 127.0.0.1; the requests are what the clawhub CLI
and other clients send (upload tickets, the JSON publish, the multipart publish).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from factories import skill_text

from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.server_config import HubSettings
from skillbook.distribution.hub.tokens import create_token

from .conftest import GENEROUS
from .helpers import LiveServer

SKILL_MD = skill_text("names", "Test file names.", body="# Names\n").encode()

#: One path per rule checked on its own, as the upload ticket sees it.
SINGLE = [
    ("a" * 256 + ".md", "name-too-long"),
    ("CON", "windows-reserved"),
    ("con.txt", "windows-reserved"),
    ("docs/NUL", "windows-reserved"),
    ("COM1", "windows-reserved"),
    ("c:x", "drive-or-stream"),
    ("a:b", "drive-or-stream"),
    ("evil\u202egpj.sh", "invisible-character"),
    ("zero\u200bwidth.md", "invisible-character"),
    ("bell\x07.md", "invisible-character"),
]
#: Sets of paths that clash with each other, as the publish call sees them.
CLASHES = [
    (["SKILL.md", "skill.md"], "case"),
    (["SKILL.md", "caf\u00e9.md", "cafe\u0301.md"], "normalisation"),
    (["SKILL.md", "docs", "docs/a.md"], "file-folder"),
]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    root = tmp_path_factory.mktemp("names")
    settings = HubSettings(
        database_url=f"sqlite:///{root / 'db.sqlite3'}",
        blob_url=str(root / "blobs"),
        search_backend="bm25",
        rate_limits=GENEROUS,
    )
    hub = Hub.open(settings)
    with hub.db.session() as session:
        token = create_token(session, "alice")
    with LiveServer(create_app(settings, hub=hub)) as server:
        yield server.url, token
    hub.db.close()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _refusal(answer: httpx.Response, rule: str, path: str) -> None:
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    body = answer.json()
    assert body["error"] == "publish.file-name" and body["rule"] == rule
    assert body["path"] == path and body["message"]


def _upload(url: str, token: str, path: str, data: bytes) -> dict[str, object]:
    meta = {"path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    ticket = httpx.post(f"{url}/api/v1/skills/-/upload-url", json=meta, headers=_auth(token))
    assert ticket.status_code == 200, ticket.text
    stored = httpx.post(ticket.json()["uploadUrl"], content=data, headers=_auth(token)).json()
    return {**meta, "storageId": stored["storageId"], "uploadTicket": ticket.json()["uploadTicket"]}


@pytest.mark.parametrize(("path", "rule"), SINGLE)
def test_the_upload_ticket_refuses_each_bad_name(
    live: tuple[str, str], path: str, rule: str
) -> None:
    url, token = live
    meta = {"path": path, "size": 1, "sha256": "0" * 64}
    answer = httpx.post(f"{url}/api/v1/skills/-/upload-url", json=meta, headers=_auth(token))
    _refusal(answer, rule, path)


# httpx percent-encodes a control character in a part's filename, so that one case stays out.
@pytest.mark.parametrize(("path", "rule"), [c for c in SINGLE if not c[0].startswith("bell")])
def test_the_multipart_publish_refuses_each_bad_name(
    live: tuple[str, str], path: str, rule: str
) -> None:
    url, token = live
    payload = {"slug": "names", "version": "1.0.0"}
    files = [("files", ("SKILL.md", SKILL_MD)), ("files", (path, b"x"))]
    answer = httpx.post(
        f"{url}/api/v1/skills",
        data={"payload": json.dumps(payload)},
        files=files,
        headers=_auth(token),
    )
    _refusal(answer, rule, path)


@pytest.mark.parametrize(("paths", "rule"), CLASHES)
def test_the_json_publish_refuses_names_that_fold_into_one(
    live: tuple[str, str], paths: list[str], rule: str
) -> None:
    url, token = live
    refs = [_upload(url, token, p, SKILL_MD if p == "SKILL.md" else p.encode()) for p in paths]
    body = {"slug": "names", "version": "1.0.0", "files": refs}
    answer = httpx.post(f"{url}/api/v1/skills", json=body, headers=_auth(token))
    _refusal(answer, rule, paths[-1])
    assert answer.json()["other"] == ("docs" if rule == "file-folder" else paths[-2])


def test_a_lone_surrogate_in_a_path_is_a_400(live: tuple[str, str]) -> None:
    url, token = live
    body = b'{"path": "a\\ud800.md", "size": 1}'
    answer = httpx.post(
        f"{url}/api/v1/skills/-/upload-url",
        content=body,
        headers={**_auth(token), "Content-Type": "application/json"},
    )
    assert answer.status_code == 400


def test_the_publish_client_refuses_bad_names_before_uploading(
    live: tuple[str, str], tmp_path: Path
) -> None:
    from skillbook.distribution.hub.client import PublishOptions, publish_path
    from skillbook.distribution.registry import PublishFailed

    url, token = live
    folder = tmp_path / "names"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(SKILL_MD)
    (folder / "aux.md").write_text("x")
    with httpx.Client() as client, pytest.raises(PublishFailed, match="windows-reserved"):
        publish_path(client, url, token, folder, PublishOptions())


def test_a_lone_surrogate_in_a_multipart_payload_is_a_400(live: tuple[str, str]) -> None:
    url, token = live
    payload = '{"slug": "names", "version": "1.0.0", "displayName": "a\\ud800"}'
    answer = httpx.post(
        f"{url}/api/v1/skills",
        data={"payload": payload},
        files=[("files", ("SKILL.md", SKILL_MD))],
        headers=_auth(token),
    )
    assert answer.status_code == 400 and "lone surrogate" in answer.text
