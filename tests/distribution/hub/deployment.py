"""The team deployment the rest-lane registry tests run against (test_deployment.py,
test_web_pages.py): a throwaway PostgreSQL cluster, moto's S3 server, two ``skillbook
registry serve`` replicas sharing them and a round-robin proxy, all on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .processes import S3_ENV, Postgres, Process, moto_server, proxy, serve_registry, unavailable


@dataclass
class Deployment:
    replicas: list[str]
    proxy: str
    #: The environment of the replicas (a HOME and state dir of their own).
    env: dict[str, str]
    #: ``--db`` and ``--blobs``: what ``skillbook registry token create`` needs too.
    store_args: list[str]


@contextlib.contextmanager
def team_deployment(root: Path, *serve_args: str, bucket: str) -> Iterator[Deployment]:
    """Start it under ``root`` (``serve_args``: more options for each replica; the blobs
    go under ``s3://skills/<bucket>``), stop it all after. Without PostgreSQL the test
    skips, or fails where ``SKILLBOOK_HUB_REQUIRE_SERVICES=1``."""
    try:
        pg = Postgres()
    except FileNotFoundError as exc:
        unavailable(str(exc))
    started: list[Process] = []
    try:
        s3, s3_url = moto_server(root)
        started.append(s3)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBOOK_")}
        env.update(S3_ENV, HOME=str(root / "home"), SKILLBOOK_STATE_DIR=str(root / "state"))
        store = ["--db", pg.url, "--blobs", f"s3://skills/{bucket}?endpoint_url={s3_url}"]
        replicas = []
        for _ in range(2):
            # The proxy (and the tests, standing in for it) connect from 127.0.0.1.
            proc, url = serve_registry(
                root,
                env,
                *store,
                "--search",
                "bm25",
                "--forwarded-allow-ips",
                "127.0.0.1",
                *serve_args,
            )
            started.append(proc)
            replicas.append(url)
        front, front_url = proxy(root, replicas)
        started.append(front)
        yield Deployment(replicas, front_url, env, store)
    finally:
        for proc in reversed(started):
            proc.stop()
        pg.stop()
