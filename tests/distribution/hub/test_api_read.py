"""The read side answers in the shapes the clients read (clawhub-api.md §3, §9 A1–A9, B, C)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from factories import write_skill
from starlette.testclient import TestClient

from skillbook.distribution.hub.http import Hub

from .helpers import make_skill, publish


def _two_file_skill(tmp_path: Path) -> Path:
    return make_skill(
        tmp_path / "weather",
        "weather",
        "Get a weather forecast for any city.",
        body="Use the forecast API.",
        extra={"references/a.md": "codes\n"},
    )


def test_well_known_names_this_registry_as_the_api_base(client: TestClient) -> None:
    for path in ("/.well-known/clawhub.json", "/.well-known/clawdhub.json"):
        assert client.get(path).json() == {
            "apiBase": "http://hub.test",
            "authBase": "http://hub.test",
        }


def test_search_rows_carry_what_openclaw_2026_9_needs(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    publish(client, token, _two_file_skill(tmp_path))
    rows = client.get("/api/v1/search", params={"q": "forecast", "limit": "5"}).json()["results"]
    assert len(rows) == 1
    row = rows[0]
    # OpenClaw 2026.9 drops a row without source "clawhub" and a non-empty ownerHandle.
    assert row["source"] == "clawhub" and row["ownerHandle"] == "alice"
    assert isinstance(row["score"], float)
    assert {k: row[k] for k in ("slug", "displayName", "summary", "version")} == {
        "slug": "weather",
        "displayName": "Weather",
        "summary": "Get a weather forecast for any city.",
        "version": "1.0.0",
    }
    assert set(row["publisher"]) == {"kind", "handle", "displayName", "image", "official"}
    assert isinstance(row["updatedAt"], int)


def test_star_and_empty_queries_list_everything_and_trending_has_items(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    publish(client, token, make_skill(tmp_path / "alpha", "alpha", "First skill."))
    publish(client, token, make_skill(tmp_path / "beta", "beta", "Second skill."))
    star = client.get("/api/v1/search", params={"q": "*"}).json()["results"]
    assert {r["slug"] for r in star} == {"alpha", "beta"}
    items = client.get("/api/v1/trending", params={"kind": "skills", "limit": "1"}).json()["items"]
    assert len(items) == 1 and items[0]["source"] == "clawhub"
    assert items[0]["publisher"]["handle"] == "alice"


def test_detail_has_the_three_required_keys_and_tags(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    publish(client, token, _two_file_skill(tmp_path))
    body = client.get("/api/v1/skills/weather").json()
    assert set(body) >= {"skill", "latestVersion", "owner", "moderation"}
    assert body["skill"]["tags"] == {"latest": "1.0.0"}
    assert body["latestVersion"]["version"] == "1.0.0"
    assert body["latestVersion"]["changelog"] == ""
    assert body["owner"]["handle"] == "alice"
    assert body["moderation"]["isMalwareBlocked"] is False
    assert client.get("/api/v1/skills/weather", params={"ownerHandle": "@Alice"}).status_code == 200
    other = client.get("/api/v1/skills/weather", params={"ownerHandle": "bob"})
    assert (other.status_code, other.text) == (404, "Skill not found")
    missing = client.get("/api/v1/skills/nope")
    assert (missing.status_code, missing.text) == (404, "Skill not found")


def test_versions_version_detail_and_files(client: TestClient, token: str, tmp_path: Path) -> None:
    folder = _two_file_skill(tmp_path)
    publish(client, token, folder)
    (folder / "references" / "a.md").write_text("codes v2\n")
    publish(client, token, folder, changelog="new codes")
    items = client.get("/api/v1/skills/weather/versions", params={"limit": "10"}).json()
    assert [i["version"] for i in items["items"]] == ["1.0.1", "1.0.0"]
    assert items["nextCursor"] is None
    page = client.get("/api/v1/skills/weather/versions", params={"limit": "1"}).json()
    assert page["nextCursor"] == "1"
    detail = client.get("/api/v1/skills/weather/versions/1.0.1").json()
    assert detail["skill"] == {"slug": "weather", "displayName": "Weather"}
    files = {f["path"]: f for f in detail["version"]["files"]}
    assert set(files) == {"SKILL.md", "references/a.md"}
    assert files["references/a.md"]["size"] == len("codes v2\n")
    assert detail["version"]["security"]["status"] == "clean"
    assert detail["version"]["changelog"] == "new codes"
    raw = client.get(
        "/api/v1/skills/weather/file", params={"path": "references/a.md", "version": "1.0.0"}
    )
    assert raw.content == b"codes\n"
    assert client.get("/api/v1/skills/weather/versions/9.9.9").status_code == 404


def test_download_is_a_flat_zip_and_version_wins_over_tag(
    client: TestClient, hub: Hub, token: str, tmp_path: Path
) -> None:
    folder = _two_file_skill(tmp_path)
    publish(client, token, folder)
    write_skill(folder, "weather", "Weather v2.", body="v2\n")
    publish(client, token, folder, version="2.0.0", tags=("latest", "beta"))
    zipped = client.get(
        "/api/v1/download", params={"slug": "weather", "version": "1.0.0", "tag": "beta"}
    )
    assert zipped.status_code == 200
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as zf:
        assert sorted(zf.namelist()) == ["SKILL.md", "references/a.md"]
        assert b"Use the forecast API" in zf.read("SKILL.md")
    latest = client.get("/api/v1/download", params={"slug": "weather"})
    with zipfile.ZipFile(io.BytesIO(latest.content)) as zf:
        assert b"v2" in zf.read("SKILL.md")
    again = client.get("/api/v1/download", params={"slug": "weather", "version": "2.0.0"})
    assert again.content == latest.content  # deterministic archives
    assert (
        client.get("/api/v1/download", params={"slug": "weather", "version": "3.0.0"}).status_code
        == 404
    )
    assert client.get("/api/v1/download", params={"slug": "ghost"}).text == "Skill not found"
    hub.flush()  # counts reach the database in batches (hub.md "Counting")
    assert client.get("/api/v1/skills/weather").json()["skill"]["stats"]["downloads"] == 3


def test_resolve_matches_the_clawhub_fingerprint_in_either_order(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    outcome = publish(client, token, _two_file_skill(tmp_path))
    ok = client.get("/api/v1/resolve", params={"slug": "weather", "hash": outcome.fingerprint})
    assert ok.json() == {
        "slug": "weather",
        "match": {"version": "1.0.0"},
        "latestVersion": {"version": "1.0.0"},
    }
    miss = client.get("/api/v1/resolve", params={"slug": "weather", "hash": "0" * 64}).json()
    assert miss["match"] is None and miss["latestVersion"] == {"version": "1.0.0"}
    # The CLI treats "skill not found" on 404 as a new skill when publishing.
    new = client.get("/api/v1/resolve", params={"slug": "fresh", "hash": "0" * 64})
    assert new.status_code == 404 and "skill not found" in new.text.lower()


def test_list_sorts_prefixes_and_pages(client: TestClient, token: str, tmp_path: Path) -> None:
    for name in ("pdf-merge", "pdf-split", "weather"):
        publish(client, token, make_skill(tmp_path / name, name, f"The {name} skill."))
    newest = client.get("/api/v1/skills", params={"sort": "createdAt", "limit": "2"}).json()
    assert len(newest["items"]) == 2 and newest["nextCursor"] == "2"
    rest = client.get(
        "/api/v1/skills", params={"sort": "createdAt", "limit": "2", "cursor": newest["nextCursor"]}
    ).json()
    assert len(rest["items"]) == 1 and rest["nextCursor"] is None
    item = rest["items"][0]
    assert set(item) >= {"slug", "displayName", "tags", "stats", "createdAt", "updatedAt"}
    assert item["latestVersion"]["version"] == "1.0.0"
    pdf = client.get("/api/v1/skills", params={"prefix": "pdf"}).json()["items"]
    assert sorted(i["slug"] for i in pdf) == ["pdf-merge", "pdf-split"]


def test_install_route_verify_envelope_and_whoami(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    publish(client, token, _two_file_skill(tmp_path))
    install = client.get("/api/v1/skills/weather/install").json()
    assert install == {
        "ok": True,
        "slug": "weather",
        "installKind": "archive",
        "archive": {
            "version": "1.0.0",
            "downloadUrl": "http://hub.test/api/v1/download?slug=weather&version=1.0.0",
        },
    }
    verify = client.get("/api/v1/skills/weather/verify", params={"version": "1.0.0"}).json()
    required = {
        "schema",
        "ok",
        "decision",
        "reasons",
        "slug",
        "displayName",
        "pageUrl",
        "publisherHandle",
        "publisherDisplayName",
        "publisherProfileUrl",
        "version",
        "resolvedFrom",
        "tag",
        "createdAt",
        "card",
        "artifact",
        "provenance",
        "security",
        "signature",
    }
    assert required <= set(verify)
    assert (verify["schema"], verify["ok"], verify["resolvedFrom"]) == (
        "clawhub.skill.verify.v1",
        True,
        "version",
    )
    me = client.get("/api/v1/whoami", headers={"Authorization": f"Bearer {token}"}).json()
    assert me["user"]["handle"] == "alice"
    assert client.get("/api/v1/whoami").status_code == 401
    bad = client.get("/api/v1/whoami", headers={"Authorization": "Bearer clh_nope"})
    assert (bad.status_code, bad.text) == (401, "Unauthorized")


def test_security_verdicts_answer_every_item_in_order(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    publish(client, token, _two_file_skill(tmp_path))
    items = [
        {"slug": "WEATHER", "version": "1.0.0", "ownerHandle": "alice"},
        {"slug": "weather", "version": "7.0.0"},
        {"slug": "ghost", "version": "1.0.0"},
    ]
    out = client.post("/api/v1/skills/-/security-verdicts", json={"items": items}).json()["items"]
    assert len(out) == 3
    first = out[0]
    assert first["requestedSlug"] == "WEATHER" and first["requestedOwnerHandle"] == "alice"
    assert (first["slug"], first["version"], first["publisherHandle"]) == (
        "weather",
        "1.0.0",
        "alice",
    )
    assert (first["ok"], first["decision"], first["security"]) == (
        True,
        "pass",
        {"status": "clean", "passed": True},
    )
    assert first["overview"] and first["securityAuditUrl"].startswith("http://hub.test/")
    assert out[1]["version"] is None and out[1]["error"]["code"] == "version_not_found"
    assert out[2]["error"]["code"] == "skill_not_found"
    too_many = {"items": [{"slug": "x", "version": "1.0.0"}] * 101}
    assert client.post("/api/v1/skills/-/security-verdicts", json=too_many).status_code == 400


def test_unknown_routes_and_telemetry(client: TestClient) -> None:
    assert client.get("/api/v1/nothing").status_code == 404
    assert client.post("/api/cli/telemetry/install", json={"event": "install"}).json() == {
        "ok": True
    }
    assert client.get("/healthz").json()["ok"] is True
