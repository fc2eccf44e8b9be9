"""The team deployment: PostgreSQL + an S3-compatible store + two replicas behind a proxy.

Everything runs as real processes on 127.0.0.1: a throwaway PostgreSQL cluster
(initdb in a temp folder), moto's S3 server, two ``skillbook registry serve``
processes sharing them, and a round-robin proxy. A skill published through one
replica installs through the other; uploads and rate limits work across replicas.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import threading
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from cached_tools import clawhub_cli

from .deployment import Deployment, team_deployment
from .helpers import auth_header, fresh_rate_window, make_skill, publish_body, skill_md, upload
from .processes import serve_registry, skillbook, unavailable

pytestmark = pytest.mark.subprocess


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with team_deployment(
        tmp_path_factory.mktemp("deploy"),
        "--limit",
        "read.ip=40",
        # Counts written in every request: exact across replicas at once (the batched
        # default is checked in test_counters.py).
        "--flush-every",
        "0",
        bucket="registry",
    ) as found:
        yield found


def test_published_through_one_replica_installs_through_the_other(
    deployment: Deployment, tmp_path: Path
) -> None:
    env = deployment.env
    token = skillbook(
        "registry", "token", "create", "ops", *deployment.store_args, env=env
    ).stdout.strip()
    folder = make_skill(
        tmp_path / "deploy-demo",
        "deploy-demo",
        "Shared by two replicas.",
        extra={"references/guide.md": "guide\n"},
    )
    first, second = deployment.replicas
    published = skillbook(
        "publish",
        str(folder),
        "--registry",
        first,
        "--json",
        env={**env, "SKILLBOOK_REGISTRY_TOKEN": token},
    )
    assert json.loads(published.stdout)["status"] == "published"
    zipped = httpx.get(second + "/api/v1/download", params={"slug": "deploy-demo"})
    assert zipped.status_code == 200
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as zf:
        assert sorted(zf.namelist()) == ["SKILL.md", "references/guide.md"]
    # Search on the other replica sees the new skill (its index follows the database).
    rows = httpx.get(second + "/api/v1/search", params={"q": "shared replicas"}).json()["results"]
    assert [r["slug"] for r in rows] == ["deploy-demo"]
    found = clawhub_cli()
    if isinstance(found, str):
        unavailable(found)
    home = tmp_path / "home"
    home.mkdir()
    cli_env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "CLAWHUB_REGISTRY": second,
        "XDG_CONFIG_HOME": str(home / ".config"),
        "CLAWHUB_DISABLE_TELEMETRY": "1",
    }
    proc = subprocess.run(
        [str(found), "install", "deploy-demo", "--no-input"],
        env=cli_env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (home / "skills" / "deploy-demo" / "references" / "guide.md").read_text() == "guide\n"


def test_uploads_land_on_either_replica_behind_the_proxy(
    deployment: Deployment, tmp_path: Path
) -> None:
    env = deployment.env
    token = skillbook(
        "registry", "token", "create", "lb", *deployment.store_args, env=env
    ).stdout.strip()
    folder = make_skill(
        tmp_path / "lb-demo",
        "lb-demo",
        "Published through a load balancer.",
        extra={"a.md": "a", "b.md": "b", "c.md": "c"},
    )
    # Four uploads and the publish alternate between the replicas: tickets and bytes are shared.
    published = skillbook(
        "publish",
        str(folder),
        "--registry",
        deployment.proxy,
        "--json",
        env={**env, "SKILLBOOK_REGISTRY_TOKEN": token},
    )
    assert json.loads(published.stdout)["files"] == 4
    served_by: set[str] = set()
    for _ in range(4):
        answer = httpx.get(deployment.proxy + "/api/v1/skills/lb-demo")
        assert answer.json()["latestVersion"]["version"] == "1.0.0"
        # Links point at the proxy (the Host the client used), not at a replica.
        known = httpx.get(deployment.proxy + "/.well-known/clawhub.json")
        assert known.json()["apiBase"] == deployment.proxy
        served_by |= {answer.headers["x-upstream"], known.headers["x-upstream"]}
    assert served_by == set(deployment.replicas)


def test_rate_limits_are_counted_across_replicas(deployment: Deployment) -> None:
    first, second = deployment.replicas
    # One address nobody else in this module uses: 40 reads per minute in all, whichever
    # replica answers. The burst must fit in one fixed window to be counted as one.
    fresh_rate_window(20)
    answers = [
        httpx.get(
            (first, second)[i % 2] + "/api/v1/skills",
            headers={"X-Forwarded-For": "198.51.100.7"},
        )
        for i in range(45)
    ]
    assert len({a.headers["X-RateLimit-Reset"] for a in answers}) == 1, "burst left its window"
    assert [a.status_code for a in answers] == [200] * 40 + [429] * 5
    remaining = [int(a.headers["RateLimit-Remaining"]) for a in answers]
    assert remaining == [*range(39, -1, -1), 0, 0, 0, 0, 0]


def test_uvicorn_workers_of_one_server_share_its_database(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBOOK_")}
    env.update(HOME=str(tmp_path), SKILLBOOK_STATE_DIR=str(tmp_path / "state"))
    proc, url = serve_registry(tmp_path, env, "--workers", "2", "--search", "bm25")
    try:
        token = skillbook("registry", "token", "create", "w", env=env).stdout.strip()
        folder = make_skill(tmp_path / "workers", "workers", "Served by two workers.")
        published = skillbook(
            "publish",
            str(folder),
            "--registry",
            url,
            "--json",
            env={**env, "SKILLBOOK_REGISTRY_TOKEN": token},
        )
        assert json.loads(published.stdout)["status"] == "published"
        with httpx.Client() as client:  # new connections spread over the workers
            found = {
                tuple(
                    r["slug"]
                    for r in httpx.get(url + "/api/v1/search", params={"q": "two workers"}).json()[
                        "results"
                    ]
                )
                for _ in range(10)
            }
            assert client.get(url + "/healthz").json()["ok"] is True
        assert found == {("workers",)}
        # One parent, two worker processes, each building the app from the shared settings.
        assert proc.output().count("Started server process") == 2
    finally:
        proc.stop()


@pytest.mark.parametrize(
    ("trusted", "expected"),
    [((), [200, 200, 200, 429, 429, 429]), (("--forwarded-allow-ips", "127.0.0.1"), [200] * 6)],
    ids=["no-proxy-named", "loopback-named"],
)
def test_x_forwarded_for_counts_only_from_a_named_proxy(
    tmp_path: Path, trusted: tuple[str, ...], expected: list[int]
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBOOK_")}
    # uvicorn reads this when told nothing: it must not widen what the server trusts.
    env.update(HOME=str(tmp_path), SKILLBOOK_STATE_DIR=str(tmp_path / "state"))
    env["FORWARDED_ALLOW_IPS"] = "*"
    proc, url = serve_registry(tmp_path, env, "--search", "bm25", "--limit", "read.ip=3", *trusted)
    try:
        fresh_rate_window(5)
        # Six addresses, two requests each: believed, each has its own budget of 3;
        # not believed, they are all 127.0.0.1's and the fourth request is over.
        answers = [
            httpx.get(url + "/api/v1/skills", headers={"X-Forwarded-For": f"203.0.113.{i // 2}"})
            for i in range(6)
        ]
        assert len({a.headers["X-RateLimit-Reset"] for a in answers}) == 1, "burst left its window"
        assert [a.status_code for a in answers] == expected
    finally:
        proc.stop()


def _race_on_replicas(
    calls: list[tuple[str, str, dict[str, object]]],
) -> list[httpx.Response]:
    """POST each ``(replica, token, body)`` publish at the same moment, one thread each."""
    gate = threading.Barrier(len(calls), timeout=60)

    def send(replica: str, token: str, body: dict[str, object]) -> httpx.Response:
        with httpx.Client(timeout=120) as client:
            gate.wait()
            return client.post(replica + "/api/v1/skills", json=body, headers=auth_header(token))

    with ThreadPoolExecutor(len(calls)) as pool:
        return [f.result() for f in [pool.submit(send, *call) for call in calls]]


def _tokens(deployment: Deployment, *handles: str) -> list[str]:
    return [
        skillbook(
            "registry", "token", "create", h, *deployment.store_args, env=deployment.env
        ).stdout.strip()
        for h in handles
    ]


#: Slugs raced per test: each race is a fresh chance for the two replicas to disagree.
ROUNDS = 6


def test_two_handles_racing_on_two_replicas_one_owns_each_slug(deployment: Deployment) -> None:
    first, second = deployment.replicas
    alice, bob = _tokens(deployment, "race-alice", "race-bob")
    for n in range(ROUNDS):
        slug = f"contested-{n}"
        a_files = [upload(first, alice, "SKILL.md", skill_md(slug, "Alice's tool."))]
        b_files = [upload(second, bob, "SKILL.md", skill_md(slug, "Bob's tool."))]
        answers = _race_on_replicas(
            [
                (first, alice, publish_body(slug, "1.0.0", a_files)),
                (second, bob, publish_body(slug, "2.0.0", b_files)),
            ]
        )
        assert sorted(a.status_code for a in answers) == [200, 403], [a.text for a in answers]
        won = 0 if answers[0].status_code == 200 else 1
        owner, version = [("race-alice", "1.0.0"), ("race-bob", "2.0.0")][won]
        assert answers[1 - won].text == f"Skill {slug} belongs to @{owner}"
        detail = httpx.get(second + f"/api/v1/skills/{slug}").json()
        assert (detail["owner"]["handle"], detail["latestVersion"]["version"]) == (owner, version)
        listed = httpx.get(first + f"/api/v1/skills/{slug}/versions").json()["items"]
        assert [v["version"] for v in listed] == [version]


def test_identical_publishes_on_two_replicas_answer_alike(deployment: Deployment) -> None:
    first, second = deployment.replicas
    (token,) = _tokens(deployment, "race-twice")
    for n in range(ROUNDS):
        slug = f"twice-{n}"
        body = publish_body(
            slug, "1.0.0", [upload(first, token, "SKILL.md", skill_md(slug, "Once."))]
        )
        answers = _race_on_replicas([(first, token, body), (second, token, body)])
        assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
        assert answers[0].json() == answers[1].json()
