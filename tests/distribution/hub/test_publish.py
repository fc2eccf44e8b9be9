"""Publishing: the clawhub CLI's sequence, validation, the scan hold, tags, limits, retries."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from factories import skill_text
from starlette.testclient import TestClient

from skillbook.distribution.hub import catalog
from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.server_config import HubSettings
from skillbook.distribution.hub.tokens import create_token
from skillbook.distribution.registry import PublishFailed

from .helpers import BASE, CRITICAL_LINE, HIGH_LINE, make_skill, publish


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _upload(client: TestClient, token: str, path: str, data: bytes) -> dict[str, object]:
    digest = hashlib.sha256(data).hexdigest()
    meta = {"path": path, "size": len(data), "sha256": digest, "contentType": "text/markdown"}
    ticket = client.post("/api/v1/skills/-/upload-url", json=meta, headers=_auth(token)).json()
    assert ticket["uploadUrl"].startswith("http://hub.test/api/v1/uploads/")
    stored = client.post(ticket["uploadUrl"], content=data, headers=_auth(token)).json()
    return {**meta, "storageId": stored["storageId"], "uploadTicket": ticket["uploadTicket"]}


SKILL_MD = skill_text("notes", "Keep notes.", body="# Notes\n").encode()


def _body(files: list[dict[str, object]], **more: object) -> dict[str, object]:
    return {
        "slug": "notes",
        "displayName": "Notes",
        "version": "1.0.0",
        "changelog": "",
        "acceptLicenseTerms": True,
        "tags": ["latest"],
        "files": files,
        **more,
    }


def test_the_clawhub_wire_sequence_publishes_and_a_retry_answers_the_same(
    client: TestClient, token: str
) -> None:
    files = [_upload(client, token, "SKILL.md", SKILL_MD)]
    first = client.post("/api/v1/skills", json=_body(files), headers=_auth(token))
    assert first.status_code == 200
    answer = first.json()
    assert answer["ok"] is True and answer["publicationStatus"] == "published"
    assert isinstance(answer["skillId"], str) and isinstance(answer["versionId"], str)
    # The CLI retries POSTs on 5xx/429: the same request must not fail the second time.
    again = client.post("/api/v1/skills", json=_body(files), headers=_auth(token))
    assert again.json() == answer
    changed = [_upload(client, token, "SKILL.md", SKILL_MD + b"more\n")]
    clash = client.post("/api/v1/skills", json=_body(changed), headers=_auth(token))
    assert (clash.status_code, clash.text) == (409, "Version 1.0.0 of notes already exists")


def test_publishing_needs_a_token_and_the_owners_handle(
    client: TestClient, hub: Hub, token: str
) -> None:
    files = [_upload(client, token, "SKILL.md", SKILL_MD)]
    assert client.post("/api/v1/skills", json=_body(files)).status_code == 401
    as_bob = client.post(
        "/api/v1/skills", json=_body(files, ownerHandle="bob"), headers=_auth(token)
    )
    assert as_bob.status_code == 403
    assert client.post("/api/v1/skills", json=_body(files), headers=_auth(token)).status_code == 200
    with hub.db.session() as session:
        bob = create_token(session, "bob")
    bob_files = [_upload(client, bob, "SKILL.md", SKILL_MD + b"x\n")]
    taken = client.post(
        "/api/v1/skills", json=_body(bob_files, version="2.0.0"), headers=_auth(bob)
    )
    assert (taken.status_code, taken.text) == (403, "Skill notes belongs to @alice")
    # Another token's upload cannot be used.
    stolen = client.post("/api/v1/skills", json=_body(files, slug="mine"), headers=_auth(bob))
    assert stolen.status_code == 400 and "No finished upload" in stolen.text


@pytest.mark.parametrize(
    ("change", "status", "text"),
    [
        ({"slug": "Bad Slug"}, 400, "Invalid slug"),
        ({"version": "1.0"}, 400, "not valid semver"),
        ({"tags": ["1.0.0"]}, 400, "Invalid tag"),
        ({"files": []}, 400, "SKILL.md required"),
    ],
)
def test_bad_publish_requests_are_refused_with_a_short_text(
    client: TestClient, token: str, change: dict[str, object], status: int, text: str
) -> None:
    files = [_upload(client, token, "SKILL.md", SKILL_MD)]
    answer = client.post("/api/v1/skills", json={**_body(files), **change}, headers=_auth(token))
    assert answer.status_code == status and text in answer.text


@pytest.mark.parametrize("path", ["../escape.md", "/abs.md", "a/../b.md", "a\\b.md", "C:/x.md", ""])
def test_unsafe_paths_are_refused_at_the_upload_ticket(
    client: TestClient, token: str, path: str
) -> None:
    meta = {"path": path, "size": 1, "sha256": "0" * 64}
    answer = client.post("/api/v1/skills/-/upload-url", json=meta, headers=_auth(token))
    assert answer.status_code == 400


def test_upload_bytes_must_match_the_ticket(client: TestClient, token: str) -> None:
    meta = {"path": "SKILL.md", "size": len(SKILL_MD), "sha256": "0" * 64}
    ticket = client.post("/api/v1/skills/-/upload-url", json=meta, headers=_auth(token)).json()
    sent = client.post(ticket["uploadUrl"], content=SKILL_MD, headers=_auth(token))
    assert sent.status_code == 400 and "does not match its sha256" in sent.text


def test_size_limits_are_enforced_on_the_body_and_the_ticket(
    client: TestClient, token: str, hub: Hub
) -> None:
    too_big = hub.settings.sizes.max_file_bytes + 1
    meta = {"path": "big.bin", "size": too_big}
    refused = client.post("/api/v1/skills/-/upload-url", json=meta, headers=_auth(token))
    assert refused.status_code == 413 and "exceeds 10MB limit" in refused.text
    ok = client.post(
        "/api/v1/skills/-/upload-url", json={"path": "big.bin", "size": 3}, headers=_auth(token)
    ).json()
    body = b"x" * too_big
    sent = client.post(ok["uploadUrl"], content=body, headers=_auth(token))
    assert sent.status_code == 413
    huge_json = b'{"path": "' + b"a" * (hub.settings.sizes.max_json_bytes + 10) + b'"}'
    answer = client.post(
        "/api/v1/skills/-/upload-url",
        content=huge_json,
        headers={**_auth(token), "Content-Type": "application/json"},
    )
    assert answer.status_code == 413


def test_validation_in_the_registry_mode_refuses_broken_skills(
    client: TestClient, token: str
) -> None:
    broken = skill_text("notes", None, body="No description.\n").encode()
    files = [_upload(client, token, "SKILL.md", broken)]
    answer = client.post("/api/v1/skills", json=_body(files), headers=_auth(token))
    assert answer.status_code == 422
    assert "Validation failed (openclaw mode)" in answer.text and "description" in answer.text


def test_a_critical_finding_holds_the_version_until_an_admin_releases_it(
    client: TestClient, hub: Hub, token: str, admin_token: str, tmp_path: Path
) -> None:
    folder = make_skill(tmp_path / "tool", "tool", "A helpful tool.")
    publish(client, token, folder)
    make_skill(folder, "tool", "A helpful tool.", body=f"```sh\n{CRITICAL_LINE}```")
    outcome = publish(client, token, folder, version="1.1.0")
    assert outcome.status == "pending"
    # Held: not the latest, not searchable as 1.1.0, not downloadable, not resolvable.
    detail = client.get("/api/v1/skills/tool").json()
    assert detail["latestVersion"]["version"] == "1.0.0"
    assert detail["skill"]["tags"] == {"latest": "1.0.0"}
    held = client.get("/api/v1/download", params={"slug": "tool", "version": "1.1.0"})
    assert (held.status_code, held.text) == (423, "Version held for security review")
    assert client.get("/api/v1/skills/tool/versions/1.1.0").status_code == 404
    own = client.get("/api/v1/skills/tool/versions/1.1.0", headers=_auth(token)).json()
    assert own["version"]["security"]["status"] == "malicious"
    assert own["version"]["scan"]["findings"][0]["rule"] == "remote-fetch-exec"
    assert own["version"]["scan"]["findings"][0]["file"] == "SKILL.md"
    verdict = client.post(
        "/api/v1/skills/-/security-verdicts", json={"items": [{"slug": "tool", "version": "1.1.0"}]}
    ).json()["items"][0]
    assert (verdict["ok"], verdict["decision"]) == (False, "blocked")
    scan = client.get("/api/v1/skills/tool/versions/1.1.0/scan").json()
    assert scan["status"] == "held" and scan["scan"]["blocking"] == 1
    versions = client.get("/api/v1/skills/tool/versions").json()["items"]
    assert [v["version"] for v in versions] == ["1.0.0"]
    with hub.db.session() as session:
        catalog.release_version(session, "tool", "1.1.0", actor="root", reason="reviewed")
    detail = client.get("/api/v1/skills/tool").json()
    assert detail["latestVersion"]["version"] == "1.1.0"
    assert detail["moderation"]["isSuspicious"] is True  # released despite criticals
    assert (
        client.get("/api/v1/download", params={"slug": "tool", "version": "1.1.0"}).status_code
        == 200
    )
    verdict = client.post(
        "/api/v1/skills/-/security-verdicts", json={"items": [{"slug": "tool", "version": "1.1.0"}]}
    ).json()["items"][0]
    assert (verdict["ok"], verdict["decision"], verdict["security"]["status"]) == (
        True,
        "pass",
        "suspicious",
    )
    with hub.db.session() as session:
        actions = [(e.action, e.version) for e in catalog.list_audit(session)]
        detail_of_release = json.loads(catalog.list_audit(session, 1)[0].detail)
    assert actions[:3] == [("release", "1.1.0"), ("publish", "1.1.0"), ("publish", "1.0.0")]
    assert detail_of_release["reason"] == "reviewed"


def test_hold_and_delete_take_versions_out_and_keep_latest_sane(
    client: TestClient, hub: Hub, token: str, tmp_path: Path
) -> None:
    folder = make_skill(tmp_path / "tool", "tool", "A helpful tool.")
    publish(client, token, folder)
    make_skill(folder, "tool", "A helpful tool, v2.")
    publish(client, token, folder, version="2.0.0")
    with hub.db.session() as session:
        catalog.hold_version(session, "tool", "2.0.0", actor="root", reason="second look")
    assert client.get("/api/v1/skills/tool").json()["latestVersion"]["version"] == "1.0.0"
    with hub.db.session() as session:
        catalog.release_version(session, "tool", "2.0.0", actor="root", reason="fine")
    assert client.get("/api/v1/skills/tool").json()["skill"]["tags"] == {"latest": "2.0.0"}
    with hub.db.session() as session:
        catalog.delete_skill(session, "tool", "2.0.0", actor="root", reason="broken")
    gone = client.get("/api/v1/download", params={"slug": "tool", "version": "2.0.0"})
    assert (gone.status_code, gone.text) == (410, "Version deleted")
    assert client.get("/api/v1/skills/tool").json()["latestVersion"]["version"] == "1.0.0"
    with hub.db.session() as session:
        catalog.delete_skill(session, "tool", None, actor="root", reason="retired")
    assert client.get("/api/v1/skills/tool").status_code == 404
    assert client.get("/api/v1/search", params={"q": "helpful tool"}).json()["results"] == []
    # A deleted skill's slug is not handed out again, to its owner or anyone else.
    with pytest.raises(PublishFailed, match="Skill tool was deleted; publish under another slug"):
        publish(client, token, folder, version="3.0.0")


def test_multipart_publish_with_payload_and_files(client: TestClient, token: str) -> None:
    payload = {"slug": "notes", "displayName": "Notes", "version": "1.0.0", "tags": ["latest"]}
    files = [
        ("files", ("SKILL.md", SKILL_MD, "text/markdown")),
        ("files", ("refs/a.md", b"a\n", "text/markdown")),
    ]
    answer = client.post(
        "/api/v1/skills", data={"payload": json.dumps(payload)}, files=files, headers=_auth(token)
    )
    assert answer.status_code == 200, answer.text
    detail = client.get("/api/v1/skills/notes/versions/1.0.0").json()
    assert sorted(f["path"] for f in detail["version"]["files"]) == ["SKILL.md", "refs/a.md"]


def test_the_publish_client_follows_the_cli_file_rules(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    folder = make_skill(
        tmp_path / "My_Skill",
        "my-skill",
        "Does things.",
        extra={
            ".env": "SECRET=1",
            "node_modules/x/index.js": "x",
            "skill-card.md": "card",
            "build/out.txt": "o",
            ".gitignore": "build/\n",
            "docs/guide.md": "g",
        },
    )
    outcome = publish(client, token, folder)
    assert (outcome.slug, outcome.version, outcome.files) == ("my-skill", "1.0.0", 2)
    detail = client.get("/api/v1/skills/my-skill/versions/1.0.0").json()
    assert sorted(f["path"] for f in detail["version"]["files"]) == ["SKILL.md", "docs/guide.md"]
    assert client.get("/api/v1/skills/my-skill").json()["skill"]["displayName"] == "My Skill"
    (folder / "docs" / "guide.md").write_text("g2")
    assert publish(client, token, folder).version == "1.0.1"
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "README.md").write_text("no skill file")
    with pytest.raises(PublishFailed, match=r"SKILL\.md required"):
        publish(client, token, bare)


def test_stale_upload_tickets_are_refused_and_swept(
    client: TestClient, hub: Hub, token: str
) -> None:
    from sqlalchemy import select, update

    from skillbook.distribution.hub.models import Upload

    files = [_upload(client, token, "SKILL.md", SKILL_MD)]
    old = 1_000  # epoch ms: far past the ticket's hour
    with hub.db.session() as session:
        session.execute(update(Upload).values(created_at=old))
    stale = client.post("/api/v1/skills", json=_body(files), headers=_auth(token))
    assert stale.status_code == 400 and "upload it again" in stale.text
    _upload(client, token, "other.md", b"x")
    # The housekeeping sweep removes the expired ticket and its blob (nothing holds it).
    report = client.app.state.housekeeper.sweep()  # type: ignore[attr-defined]
    assert (report.expired_uploads, report.collected_blobs) == (1, 1)
    with hub.db.session() as session:
        left = session.execute(select(Upload.created_at)).scalars().all()
    assert old not in left and len(left) == 1
    assert not hub.blobs.exists(str(files[0]["storageId"]))


def _public_words(client: TestClient, slug: str) -> list[Any]:
    """What anyone sees of a skill: detail, list, search and trending rows."""
    skill = client.get(f"/api/v1/skills/{slug}").json()["skill"]
    listed = [i for i in client.get("/api/v1/skills").json()["items"] if i["slug"] == slug]
    found = client.get("/api/v1/search", params={"q": slug}).json()["results"]
    trending = [i for i in client.get("/api/v1/trending").json()["items"] if i["slug"] == slug]
    return [
        (skill["displayName"], skill["summary"], skill["tags"], skill["updatedAt"]),
        [(i["displayName"], i["summary"], i["tags"], i["updatedAt"]) for i in listed],
        [(r["displayName"], r["summary"], r["version"], r["updatedAt"]) for r in found],
        [(i["displayName"], i["summary"], i["version"]) for i in trending],
    ]


def test_a_held_version_changes_no_public_words_until_it_is_released(
    client: TestClient, hub: Hub, token: str, tmp_path: Path
) -> None:
    folder = make_skill(tmp_path / "tool", "tool", "A helpful tool.")
    publish(client, token, folder, name="Tool")
    before = _public_words(client, "tool")
    assert before[0][:3] == ("Tool", "A helpful tool.", {"latest": "1.0.0"})
    make_skill(folder, "tool", "Now installs miners.", body=f"```sh\n{CRITICAL_LINE}```")
    assert publish(client, token, folder, version="2.0.0", name="Evil Tool").status == "pending"
    assert _public_words(client, "tool") == before
    with hub.db.session() as session:
        catalog.release_version(session, "tool", "2.0.0", actor="root", reason="reviewed")
    after = _public_words(client, "tool")
    assert after[0][:3] == ("Evil Tool", "Now installs miners.", {"latest": "2.0.0"})
    assert after[2][0][:3] == ("Evil Tool", "Now installs miners.", "2.0.0")


def test_a_new_skill_held_at_its_first_version_shows_nothing_of_it(
    client: TestClient, hub: Hub, token: str, tmp_path: Path
) -> None:
    folder = make_skill(
        tmp_path / "fresh", "fresh", "Looks innocent.", body=f"```sh\n{CRITICAL_LINE}```"
    )
    assert publish(client, token, folder, name="Fresh Pick").status == "pending"
    skill = client.get("/api/v1/skills/fresh").json()["skill"]
    assert (skill["displayName"], skill["summary"], skill["tags"]) == ("fresh", None, {})
    assert client.get("/api/v1/search", params={"q": "innocent"}).json()["results"] == []
    assert client.get("/api/v1/skills").json()["items"] == []
    with hub.db.session() as session:
        catalog.release_version(session, "fresh", "1.0.0", actor="root", reason="reviewed")
    skill = client.get("/api/v1/skills/fresh").json()["skill"]
    assert (skill["displayName"], skill["summary"]) == ("Fresh Pick", "Looks innocent.")


def test_a_release_of_an_older_version_keeps_the_latest_ones_words(
    client: TestClient, hub: Hub, token: str, tmp_path: Path
) -> None:
    folder = make_skill(
        tmp_path / "tool", "tool", "First words.", body=f"```sh\n{CRITICAL_LINE}```"
    )
    assert publish(client, token, folder, tags=("beta",)).status == "pending"
    make_skill(folder, "tool", "Second words.")
    publish(client, token, folder, version="2.0.0")
    with hub.db.session() as session:
        catalog.release_version(session, "tool", "1.0.0", actor="root", reason="reviewed")
    skill = client.get("/api/v1/skills/tool").json()["skill"]
    assert (skill["summary"], skill["tags"]) == (
        "Second words.",
        {"beta": "1.0.0", "latest": "2.0.0"},
    )


def _json_of_size(size: int) -> bytes:
    head, tail = b'{"slug": "', b'"}'
    return head + b"a" * (size - len(head) - len(tail)) + tail


@pytest.mark.parametrize("route", ["/api/v1/skills", "/api/v1/skills/-/upload-url"])
def test_a_json_body_may_be_2_mb_and_not_one_byte_more(
    client: TestClient, token: str, route: str
) -> None:
    limit = 2 * 1024 * 1024  # docs/hub.md, "Limits"
    headers = {**_auth(token), "Content-Type": "application/json"}
    at_limit = client.post(route, content=_json_of_size(limit), headers=headers)
    assert at_limit.status_code == 400, at_limit.text  # read and decoded: not a whole request
    over = client.post(route, content=_json_of_size(limit + 1), headers=headers)
    assert (over.status_code, over.text) == (413, f"Request body exceeds {limit} bytes")


def test_the_documented_sizes_are_the_servers() -> None:
    from skillbook.distribution.hub.server_config import MIB, SizeLimits

    doc = (Path(__file__).parents[3] / "docs" / "hub.md").read_text(encoding="utf-8")
    line = " ".join(doc[doc.index("Sizes (1 MB = 1,048,576 bytes)") :].split("\n\n")[0].split())
    sizes = SizeLimits()
    assert MIB == 1_048_576
    assert f"{sizes.max_json_bytes // MIB} MB per JSON body" in line
    assert f"{sizes.max_file_bytes // MIB} MB per file" in line
    assert f"{sizes.max_version_bytes // MIB} MB per version" in line
    assert f"{sizes.max_files:,} files per version" in line
    assert f"{sizes.max_multipart_bytes // MIB} MB per multipart publish" in line


def test_high_findings_hold_a_version_by_default(
    client: TestClient, hub: Hub, token: str, tmp_path: Path
) -> None:
    assert hub.settings.hold_severity == "high"
    folder = make_skill(
        tmp_path / "inst", "inst", "Installs a tool.", body=f"```sh\n{HIGH_LINE}```"
    )
    assert publish(client, token, folder).status == "pending"
    own = client.get("/api/v1/skills/inst/versions/1.0.0", headers=_auth(token)).json()
    scan = own["version"]["scan"]
    assert (scan["worst"], scan["blocking"], scan["holding"], scan["holdSeverity"]) == (
        "high",
        0,
        1,
        "high",
    )
    item = {"items": [{"slug": "inst", "version": "1.0.0"}]}
    verdict = client.post("/api/v1/skills/-/security-verdicts", json=item).json()["items"][0]
    assert (verdict["decision"], verdict["reasons"]) == ("blocked", ["scan:high_blocked"])
    assert "Held: high findings" in verdict["overview"]
    with hub.db.session() as session:
        catalog.release_version(session, "inst", "1.0.0", actor="root", reason="our CDN")
    moderation = client.get("/api/v1/skills/inst").json()["moderation"]
    assert (moderation["isSuspicious"], moderation["reasonCodes"]) == (True, ["scan:high_released"])


def test_a_registry_holding_only_critical_findings_publishes_high_ones_with_warnings(
    hub_settings: HubSettings, tmp_path: Path
) -> None:
    settings = dataclasses.replace(hub_settings, hold_severity="critical")
    hub = Hub.open(settings)
    with hub.db.session() as session:
        token = create_token(session, "alice")
    with TestClient(create_app(settings, hub=hub), base_url=BASE) as client:
        folder = make_skill(
            tmp_path / "inst", "inst", "Installs a tool.", body=f"```sh\n{HIGH_LINE}```"
        )
        assert publish(client, token, folder).status == "published"
        detail = client.get("/api/v1/skills/inst/versions/1.0.0").json()["version"]
        assert detail["security"]["status"] == "clean" and detail["security"]["hasWarnings"]
        assert detail["scan"]["holding"] == 0
        make_skill(folder, "inst", "Installs a tool.", body=f"```sh\n{CRITICAL_LINE}```")
        assert publish(client, token, folder, version="1.0.1").status == "pending"
    hub.db.close()
    with pytest.raises(ValueError, match="hold severity 'medium'"):
        dataclasses.replace(hub_settings, hold_severity="medium")


def test_the_publish_client_retries_busy_answers_and_a_lost_publish_publishes_once(
    hub: Hub, token: str, skill_dir: Path
) -> None:
    from skillbook.distribution.hub.client import PublishOptions, publish_path

    app = create_app(hub.settings, hub=hub)
    seen: dict[tuple[str, str], int] = {}

    async def flaky(scope: Any, receive: Any, send: Any) -> None:
        """The real registry behind a proxy that fails each request's first try: a 503
        (asked to come back in 2 s), except the publish, which reaches the registry and
        whose answer is then lost (a 502)."""
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        key = (scope["method"], scope["path"])
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            await app(scope, receive, send)
            return
        headers = [(b"content-type", b"text/plain")]
        if key == ("POST", "/api/v1/skills"):

            async def lost(message: Any) -> None:
                pass

            await app(scope, receive, lost)
            status = 502
        else:
            status, headers = 503, [*headers, (b"retry-after", b"2")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"busy"})

    waits: list[float] = []
    said: list[str] = []
    with TestClient(flaky, base_url=BASE) as client:
        outcome = publish_path(
            client,
            BASE,
            token,
            skill_dir,
            PublishOptions(),
            sleep=waits.append,
            on_wait=said.append,
        )
    with TestClient(app, base_url=BASE) as client:
        versions = client.get("/api/v1/skills/weather-report/versions").json()
    assert (outcome.status, outcome.version) == ("published", "1.0.0")
    assert all(count == 2 for count in seen.values()), seen
    # whoami, resolve, upload-url, the upload, then the publish (a backoff: no Retry-After).
    assert waits[:4] == [2.0] * 4 and len(waits) == 5 and waits[4] < 2
    assert said[0] == "hub.test: HTTP 503; retrying in 2.0s (attempt 2 of 3)"
    assert [v["version"] for v in versions["items"]] == ["1.0.0"]
