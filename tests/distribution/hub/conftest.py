"""Fixtures for the registry server: SQLite + a blob folder, served in-process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the registry extra is not installed")

from starlette.testclient import TestClient

from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.server_config import HubSettings, RateLimits
from skillbook.distribution.hub.tokens import create_token

from .helpers import BASE, make_skill

#: Limits no ordinary test reaches; the rate-limit tests set their own.
GENEROUS = RateLimits(
    read_per_ip=100_000,
    read_per_token=100_000,
    download_per_ip=100_000,
    download_per_token=100_000,
    write_per_ip=100_000,
    write_per_token=100_000,
)


@pytest.fixture
def hub_settings(tmp_path: Path) -> HubSettings:
    return HubSettings(
        database_url=f"sqlite:///{tmp_path / 'db' / 'metadata.sqlite3'}",
        blob_url=str(tmp_path / "blobs"),
        search_backend="bm25",
        rate_limits=GENEROUS,
    )


@pytest.fixture
def hub(hub_settings: HubSettings) -> Iterator[Hub]:
    opened = Hub.open(hub_settings)
    yield opened
    opened.close()


@pytest.fixture
def client(hub: Hub) -> Iterator[TestClient]:
    with TestClient(create_app(hub.settings, hub=hub), base_url=BASE) as c:
        yield c


@pytest.fixture
def token(hub: Hub) -> str:
    with hub.db.session() as session:
        return create_token(session, "alice")


@pytest.fixture
def admin_token(hub: Hub) -> str:
    with hub.db.session() as session:
        return create_token(session, "root", admin=True)


@pytest.fixture
def skill_dir(tmp_path: Path) -> Path:
    return make_skill(
        tmp_path / "src" / "weather-report",
        "weather-report",
        "Fetch a weather forecast for a city and summarise it.",
    )
