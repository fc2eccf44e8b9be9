"""Two ``skillbook serve --transport http --stateless`` processes behind one proxy.

Scale-out (issue 11 §3): replicas keep no session, so any of them answers any
request; each watches the same skill tree, so a change reaches every client through
whichever replica holds its ``subscriptions/listen`` stream. The proxy
(``http_proxy.py``) sends requests to the replicas in turn, on 127.0.0.1 only.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from factories import write_skill
from mcp import Client
from serve_process import ServeProcess, free_port
from test_server import LAUNCH, Workspace, all_skills, wait_for

pytestmark = [pytest.mark.subprocess, pytest.mark.e2e]

PROXY = Path(__file__).with_name("http_proxy.py")


class Replica(ServeProcess):
    def __init__(self, space: Workspace, port: int, n: int) -> None:
        args = ["--workspace", str(space.ws), "serve", "--transport", "http", "--stateless"]
        super().__init__(
            [sys.executable, *LAUNCH, *args, "--port", str(port)],
            port=port,
            env=space.env(),
            cwd=space.tmp,
            log=space.tmp / f"replica-{n}.log",
        )


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[Workspace, ServeProcess, Path]]:
    space = Workspace(tmp_path)
    replicas = [Replica(space, free_port(), n) for n in range(2)]
    log = tmp_path / "proxy-requests.log"
    port = free_port()
    proxy = ServeProcess(
        [
            sys.executable,
            str(PROXY),
            str(port),
            str(log),
            *(f"http://127.0.0.1:{r.port}" for r in replicas),
        ],
        port=port,
        env=space.env() | {"PYTHONPATH": str(Path(__file__).parent)},
        cwd=tmp_path,
        log=tmp_path / "proxy.log",
    )
    try:
        for process in (*replicas, proxy):
            process.wait_listening()
        yield space, proxy, log
    finally:
        for process in (proxy, *replicas):
            process.stop()


def served_by(log: Path, method: str | None = None) -> set[str]:
    rows = [line.split(" ", 1) for line in log.read_text().splitlines()]
    return {index for index, what in rows if method is None or what == method}


def test_two_replicas_answer_alike_and_both_notify(
    cluster: tuple[Workspace, ServeProcess, Path],
) -> None:
    space, proxy, log = cluster

    async def main() -> None:
        async with Client(proxy.url, mode="auto") as one, Client(proxy.url, mode="auto") as two:
            first = [e["uri"] for e in await all_skills(one.session)]
            again = [e["uri"] for e in await all_skills(two.session)]
            assert first == again and "skill://alpha/SKILL.md" in first
            for _ in range(2):  # one read on each replica
                read = await one.read_resource("skill://alpha/SKILL.md")
                assert "alpha" in read.contents[0].text  # type: ignore[union-attr]
            seen: dict[str, set[str]] = {"one": set(), "two": set()}
            async with (
                one.listen(resources_list_changed=True, prompts_list_changed=True) as sub1,
                two.listen(resources_list_changed=True, prompts_list_changed=True) as sub2,
            ):

                async def collect(name: str, sub: object) -> None:
                    async for event in sub:  # type: ignore[attr-defined]
                        seen[name].add(type(event).__name__)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(collect, "one", sub1)
                    tg.start_soon(collect, "two", sub2)
                    write_skill(space.skills / "gamma")
                    await wait_for(lambda: all("ResourcesListChanged" in s for s in seen.values()))
                    tg.cancel_scope.cancel()
            uris = [e["uri"] for e in await all_skills(two.session)]
            assert "skill://gamma/SKILL.md" in uris
        async with Client(proxy.url, mode="legacy") as legacy:
            names = {p.name for p in (await legacy.list_prompts()).prompts}
            assert {"alpha", "beta", "gamma"} <= names

    try:
        anyio.run(main)
    except BaseException:
        for name in ("replica-0.log", "replica-1.log", "proxy.log"):
            print(name, (space.tmp / name).read_text())
        raise
    assert served_by(log) == {"0", "1"}
    # The two listen streams were held by different replicas: each notified its client.
    assert served_by(log, "subscriptions/listen") == {"0", "1"}
    assert served_by(log, "resources/read") == {"0", "1"}
