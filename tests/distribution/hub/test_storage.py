"""Storage: content-addressed blobs (folder and S3), migrations that match the models."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text

from skillbook.distribution.hub import HubNotFound
from skillbook.distribution.hub.blobs import FolderBlobStore, S3BlobStore, open_blob_store
from skillbook.distribution.hub.db import MIGRATIONS, Database, migrate
from skillbook.distribution.hub.models import Base


def test_folder_store_is_content_addressed_and_leaves_no_temp_files(tmp_path: Path) -> None:
    store = FolderBlobStore(tmp_path / "blobs")
    key = store.put(b"hello")
    assert key == hashlib.sha256(b"hello").hexdigest()
    assert store.put(b"hello") == key and store.get(key) == b"hello" and store.exists(key)
    files = [p for p in (tmp_path / "blobs").rglob("*") if p.is_file()]
    assert [p.name for p in files] == [key]
    with pytest.raises(HubNotFound):
        store.get("0" * 64)
    with pytest.raises(HubNotFound):
        store.get("../../etc/passwd")
    assert not store.exists("nothex")
    store.delete(key)
    store.delete(key)  # a second sweep finds nothing: no error
    assert not store.exists(key)


def test_s3_store_round_trips_through_an_s3_api(monkeypatch: pytest.MonkeyPatch) -> None:
    moto = pytest.importorskip("moto")
    import boto3

    for name, value in {
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    with moto.mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="skills")
        store = S3BlobStore("skills", "/registry/", client=client)
        key = store.put(b"zip bytes")
        assert store.get(key) == b"zip bytes" and store.exists(key)
        names = [o["Key"] for o in client.list_objects_v2(Bucket="skills")["Contents"]]
        assert names == [f"registry/{key}"]
        assert not store.exists("1" * 64)
        with pytest.raises(HubNotFound):
            store.get("1" * 64)
        assert store.describe() == "s3://skills/registry"
        store.delete(key)
        assert not store.exists(key) and store.remove_partial(float("inf")) == 0


def _alembic(engine: Engine, action: str, revision: str) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        getattr(command, action)(cfg, revision)


def test_rate_counters_move_into_one_btree_and_back_with_their_counts(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'm.sqlite3'}")
    _alembic(engine, "upgrade", "0003")
    rows = [("read:a:10.0.0.1", 30_000_000, 7), ("download:t:abc", 30_000_001, 2)]

    def table() -> tuple[str, list[tuple[str, int, int]]]:
        with engine.connect() as conn:
            sql = conn.execute(
                text("SELECT sql FROM sqlite_master WHERE name = 'rate_counters'")
            ).scalar_one()
            found = conn.execute(text('SELECT "key", "window", "count" FROM rate_counters'))
            return str(sql), sorted((str(k), int(w), int(c)) for k, w, c in found)

    with engine.begin() as conn:
        conn.execute(
            text('INSERT INTO rate_counters ("key", "window", "count") VALUES (:k, :w, :c)'),
            [{"k": k, "w": w, "c": c} for k, w, c in rows],
        )
    assert "WITHOUT ROWID" not in table()[0]
    assert migrate(engine) == "0004"
    sql, kept = table()
    assert "WITHOUT ROWID" in sql and kept == sorted(rows)
    _alembic(engine, "downgrade", "0003")
    sql, kept = table()
    assert "WITHOUT ROWID" not in sql and kept == sorted(rows)
    with engine.connect() as conn:
        indexes = conn.execute(
            text(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rate_counters'"
            )
        ).scalars()
        assert "ix_rate_counters_window" in set(indexes)
    engine.dispose()


def test_blob_urls(tmp_path: Path) -> None:
    assert isinstance(open_blob_store(str(tmp_path / "a")), FolderBlobStore)
    assert isinstance(open_blob_store(f"file://{tmp_path / 'b'}"), FolderBlobStore)
    s3 = open_blob_store("s3://bucket/pre?endpoint_url=http://127.0.0.1:9&region=eu-west-1")
    assert isinstance(s3, S3BlobStore) and s3.endpoint_url == "http://127.0.0.1:9"
    with pytest.raises(ValueError, match="unsupported"):
        open_blob_store("ftp://host/x")


def test_migrations_build_exactly_the_models_schema(tmp_path: Path) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    engine = create_engine(f"sqlite:///{tmp_path / 'm.sqlite3'}")
    assert migrate(engine) == "0004"
    assert migrate(engine) == "0004"  # idempotent
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []
    engine.dispose()
    db = Database.open(f"sqlite:///{tmp_path / 'new' / 'deeper' / 'r.sqlite3'}")
    assert db.generation() == 0 and db.backend == "sqlite"
    db.close()
