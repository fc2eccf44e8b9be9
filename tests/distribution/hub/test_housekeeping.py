"""Crash and abuse hygiene: leftovers of a crash, expired uploads, the per-token quota.

The sweep runs with an injected clock (hours pass without sleeping); the start-up sweep
runs in the app's lifespan, before the first request.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from factories import skill_text
from sqlalchemy import select, update
from starlette.testclient import TestClient

from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.blobs import FolderBlobStore
from skillbook.distribution.hub.housekeeping import (
    Housekeeper,
    SweepReport,
    sweep_forever,
    token_usage,
)
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.models import Upload
from skillbook.distribution.hub.server_config import Housekeeping, HubSettings

from .helpers import BASE

HOUR = 3600
SKILL_MD = skill_text("notes", "Keep notes.", body="# Notes\n").encode()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _upload(client: TestClient, token: str, path: str, data: bytes) -> dict[str, object]:
    meta = {"path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    ticket = client.post("/api/v1/skills/-/upload-url", json=meta, headers=_auth(token))
    assert ticket.status_code == 200, ticket.text
    stored = client.post(ticket.json()["uploadUrl"], content=data, headers=_auth(token))
    assert stored.status_code == 200, stored.text
    return {
        **meta,
        "storageId": stored.json()["storageId"],
        "uploadTicket": ticket.json()["uploadTicket"],
    }


def _publish(
    client: TestClient, token: str, files: list[dict[str, object]], version: str = "1.0.0"
) -> int:
    body = {"slug": "notes", "version": version, "files": files}
    return client.post("/api/v1/skills", json=body, headers=_auth(token)).status_code


def _age(path: Path, seconds: float) -> None:
    past = time.time() - seconds
    os.utime(path, (past, past))


def _keeper(hub: Hub, shift: float, temp_dir: Path | None = None) -> Housekeeper:
    return Housekeeper(
        hub.db, hub.blobs, hub.settings, clock=lambda: time.time() + shift, temp_dir=temp_dir
    )


def test_partial_blobs_and_check_folders_go_once_their_grace_has_passed(
    hub: Hub, tmp_path: Path
) -> None:
    store = hub.blobs
    assert isinstance(store, FolderBlobStore)
    key = store.put(b"whole")
    partial = store.root / key[:2] / key[2:4] / ".tmp-killed01"
    partial.write_bytes(b"half of a blob")
    temp = tmp_path / "systmp"
    temp.mkdir()
    check_copy = temp / "skillbook-hub-a1b2c3"
    (check_copy / "notes").mkdir(parents=True)
    (check_copy / "notes" / "SKILL.md").write_bytes(SKILL_MD)
    _age(check_copy, 0)
    other = temp / "someone-else-x"
    other.mkdir()

    # A temporary younger than the grace may be a write in progress: kept.
    assert _keeper(hub, 0, temp).sweep() == SweepReport()
    assert partial.exists() and check_copy.exists()
    report = _keeper(hub, 2 * HOUR, temp).sweep()
    assert (report.partial_blobs, report.temp_folders) == (1, 1)
    assert not partial.exists() and not check_copy.exists()
    assert other.exists() and store.get(key) == b"whole"


def test_the_start_up_sweep_removes_a_crash_leftover_before_the_first_request(hub: Hub) -> None:
    store = hub.blobs
    assert isinstance(store, FolderBlobStore)
    shard = store.root / "ab" / "cd"
    shard.mkdir(parents=True)
    partial = shard / ".tmp-crashed1"
    partial.write_bytes(b"half")
    _age(partial, 2 * HOUR)
    with TestClient(create_app(hub.settings, hub=hub), base_url=BASE) as client:
        assert not partial.exists()
        assert client.get("/healthz").status_code == 200


def test_unpublished_uploads_expire_and_their_blobs_are_collected(
    client: TestClient, hub: Hub, token: str
) -> None:
    published = [_upload(client, token, "SKILL.md", SKILL_MD)]
    assert _publish(client, token, published) == 200
    stray = _upload(client, token, "draft.md", b"never published\n")
    again = _upload(client, token, "copy.md", SKILL_MD)  # same bytes as a published file
    stray_key, same_key = str(stray["storageId"]), str(again["storageId"])

    # Not yet: 24 h is the default time to publish, and the grace follows it.
    assert _keeper(hub, 24 * HOUR).sweep().expired_uploads == 0
    report = _keeper(hub, 25 * HOUR + 1).sweep()
    assert report.expired_uploads == 3 and report.collected_blobs == 1
    assert not hub.blobs.exists(stray_key)
    assert hub.blobs.exists(same_key)  # a version holds these bytes
    with hub.db.session() as session:
        assert session.execute(select(Upload)).all() == []
    assert client.get("/api/v1/download", params={"slug": "notes"}).status_code == 200


def test_an_expired_upload_is_refused_at_publish(client: TestClient, hub: Hub, token: str) -> None:
    files = [_upload(client, token, "SKILL.md", SKILL_MD)]
    with hub.db.session() as session:
        day_ago = int((time.time() - 24 * HOUR - 1) * 1000)
        session.execute(update(Upload).values(created_at=day_ago))
    answer = client.post(
        "/api/v1/skills",
        json={"slug": "notes", "version": "1.0.0", "files": files},
        headers=_auth(token),
    )
    assert answer.status_code == 400 and "No finished upload" in answer.text


class _ClaimedWhileDeleting(FolderBlobStore):
    """A store on which an upload of the same bytes lands while the sweep deletes them."""

    hub: Hub

    def delete(self, key: str) -> None:
        super().delete(key)
        with self.hub.db.session() as session:
            session.add(
                Upload(
                    ticket="late",
                    token_id=1,
                    path="late.md",
                    size=1,
                    content_type="text/plain",
                    storage_id=key,
                    created_at=int((time.time() + 26 * HOUR) * 1000),  # the sweep's "now"
                )
            )


def test_a_blob_claimed_during_the_sweep_is_put_back(
    client: TestClient, hub: Hub, token: str
) -> None:
    stray = _upload(client, token, "draft.md", b"claimed at the last moment\n")
    key = str(stray["storageId"])
    store = _ClaimedWhileDeleting(Path(hub.settings.blob_url))
    store.hub = hub
    keeper = Housekeeper(hub.db, store, hub.settings, clock=lambda: time.time() + 26 * HOUR)
    report = keeper.sweep()
    assert report.expired_uploads == 1 and report.collected_blobs == 0
    assert store.get(key) == b"claimed at the last moment\n"


@pytest.fixture
def small_quota(hub_settings: HubSettings) -> Iterator[tuple[TestClient, Hub, str]]:
    from skillbook.distribution.hub.tokens import create_token

    settings = dataclasses.replace(
        hub_settings, housekeeping=Housekeeping(quota_bytes_per_token=1000)
    )
    opened = Hub.open(settings)
    with opened.db.session() as session:
        token = create_token(session, "alice")
    with TestClient(create_app(settings, hub=opened), base_url=BASE) as client:
        yield client, opened, token
    opened.db.close()


def test_the_quota_refuses_an_upload_past_it_saying_quota_and_usage(
    small_quota: tuple[TestClient, Hub, str],
) -> None:
    client, hub, token = small_quota
    _upload(client, token, "a.md", b"a" * 600)
    meta = {"path": "b.md", "size": 600}
    refused = client.post("/api/v1/skills/-/upload-url", json=meta, headers=_auth(token))
    assert refused.status_code == 413
    assert refused.text == (
        "Storage quota exceeded: this token holds 600 bytes of its 1000 bytes quota, "
        'and "b.md" needs 600 bytes more (uploads not published within 24 h expire and stop counting)'
    )
    # Once the upload has expired it stops counting.
    with hub.db.session() as session:
        session.execute(update(Upload).values(created_at=int((time.time() - 25 * HOUR) * 1000)))
        assert token_usage(session, 1, hub.settings, int(time.time() * 1000)) == 0
    assert (
        client.post("/api/v1/skills/-/upload-url", json=meta, headers=_auth(token)).status_code
        == 200
    )


def test_published_files_count_and_a_multipart_publish_past_the_quota_is_refused(
    small_quota: tuple[TestClient, Hub, str],
) -> None:
    client, hub, token = small_quota
    assert _publish(client, token, [_upload(client, token, "SKILL.md", SKILL_MD)]) == 200
    with hub.db.session() as session:
        # The upload that became the published file is counted once.
        assert token_usage(session, 1, hub.settings, int(time.time() * 1000)) == len(SKILL_MD)
    payload = '{"slug": "notes", "version": "2.0.0"}'
    files = [("files", ("SKILL.md", SKILL_MD)), ("files", ("big.md", b"b" * 900))]
    answer = client.post(
        "/api/v1/skills", data={"payload": payload}, files=files, headers=_auth(token)
    )
    assert answer.status_code == 413 and "this publish needs" in answer.text


def test_the_periodic_sweep_runs_every_interval(hub: Hub) -> None:
    runs: list[float] = []
    slept: list[float] = []

    class Counting(Housekeeper):
        def sweep(self) -> SweepReport:
            runs.append(self.clock())
            return SweepReport()

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) > 3:
            raise asyncio.CancelledError

    keeper = Counting(hub.db, hub.blobs, hub.settings, clock=lambda: float(len(runs)))
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(sweep_forever(keeper, 600, sleep=fake_sleep))
    assert slept == [600, 600, 600, 600] and runs == [0.0, 1.0, 2.0]


def test_the_housekeeping_settings_travel_to_the_workers(hub_settings: HubSettings) -> None:
    settings = dataclasses.replace(
        hub_settings,
        upload_ttl_seconds=60,
        housekeeping=Housekeeping(quota_bytes_per_token=5, sweep_seconds=7),
    )
    assert HubSettings.from_json(settings.to_json()) == settings
    assert HubSettings.__dataclass_fields__["upload_ttl_seconds"].default == 24 * HOUR
