"""Concurrent publishes on SQLite: who owns a new slug, and identical publishes racing.

A real uvicorn serves the registry; two client threads publish at once. The checks
(validation and scan) are where a publish spends its time, so both threads are held
there on a barrier: each has passed the early ownership and version checks before
either writes, which is the moment the two could disagree.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from skillbook.distribution.hub import checks
from skillbook.distribution.hub import publish as publish_module
from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.models import Skill, Version
from skillbook.distribution.hub.tokens import create_token

from .helpers import LiveServer, auth_header, publish_body, skill_md, upload


@pytest.fixture
def live(hub: Hub) -> Iterator[str]:
    with LiveServer(create_app(hub.settings, hub=hub)) as server:
        yield server.url


def meet_in_checks(monkeypatch: pytest.MonkeyPatch) -> threading.Barrier:
    """From now on two publishes wait for each other in the checks (after the early decisions)."""
    barrier = threading.Barrier(2, timeout=60)
    real: Callable[..., Any] = checks.check_files

    def meeting(*args: Any, **kwargs: Any) -> Any:
        barrier.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(publish_module, "check_files", meeting)
    return barrier


def race(*calls: Callable[[], httpx.Response]) -> list[httpx.Response]:
    with ThreadPoolExecutor(len(calls)) as pool:
        return [f.result() for f in [pool.submit(c) for c in calls]]


def test_two_handles_racing_for_a_new_slug_one_owns_it_the_other_is_refused(
    live: str, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    with hub.db.session() as session:
        alice, bob = create_token(session, "alice"), create_token(session, "bob")
    a_files = [upload(live, alice, "SKILL.md", skill_md("contested", "Alice's tool."))]
    b_files = [upload(live, bob, "SKILL.md", skill_md("contested", "Bob's tool."))]
    meet_in_checks(monkeypatch)
    answers = race(
        lambda: httpx.post(
            live + "/api/v1/skills",
            json=publish_body("contested", "1.0.0", a_files),
            headers=auth_header(alice),
            timeout=60,
        ),
        # A higher version: before the fix it landed in Alice's skill and took latest.
        lambda: httpx.post(
            live + "/api/v1/skills",
            json=publish_body("contested", "2.0.0", b_files),
            headers=auth_header(bob),
            timeout=60,
        ),
    )
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200, 403], [a.text for a in answers]
    winner = "alice" if answers[0].status_code == 200 else "bob"
    loser = next(a for a in answers if a.status_code == 403)
    assert loser.text == f"Skill contested belongs to @{winner}"
    with hub.db.session() as session:
        skill = session.query(Skill).filter_by(slug="contested").one()
        publishers = {v.publisher for v in session.query(Version).filter_by(skill_id=skill.id)}
    assert skill.owner_handle == winner and publishers == {winner}
    detail = httpx.get(live + "/api/v1/skills/contested").json()
    assert detail["owner"]["handle"] == winner
    assert detail["latestVersion"]["version"] == ("1.0.0" if winner == "alice" else "2.0.0")


@pytest.mark.parametrize("existing_skill", [False, True], ids=["new-slug", "existing-slug"])
def test_identical_concurrent_publishes_both_get_the_first_answer(
    live: str, hub: Hub, token: str, existing_skill: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if existing_skill:
        first = [upload(live, token, "SKILL.md", skill_md("twice", "Said once."))]
        done = httpx.post(
            live + "/api/v1/skills",
            json=publish_body("twice", "0.9.0", first),
            headers=auth_header(token),
        )
        assert done.status_code == 200
    meet_in_checks(monkeypatch)
    files = [upload(live, token, "SKILL.md", skill_md("twice", "Said twice."))]
    body = publish_body("twice", "1.0.0", files)
    answers = race(
        *[
            lambda: httpx.post(
                live + "/api/v1/skills", json=body, headers=auth_header(token), timeout=60
            )
        ]
        * 2
    )
    assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
    assert answers[0].json() == answers[1].json()
    with hub.db.session() as session:
        rows = session.query(Version).filter_by(version="1.0.0").all()
    assert len(rows) == 1 and str(rows[0].id) == answers[0].json()["versionId"]


def test_different_content_for_one_version_at_once_is_still_a_conflict(
    live: str, token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = [upload(live, token, "SKILL.md", skill_md("clash", "One text."))]
    other = [upload(live, token, "SKILL.md", skill_md("clash", "Another text."))]
    meet_in_checks(monkeypatch)
    answers = race(
        *[
            (
                lambda files=files: httpx.post(
                    live + "/api/v1/skills",
                    json=publish_body("clash", "1.0.0", files),
                    headers=auth_header(token),
                    timeout=60,
                )
            )
            for files in (one, other)
        ]
    )
    assert sorted(a.status_code for a in answers) == [200, 409]
    assert next(a.text for a in answers if a.status_code == 409) == (
        "Version 1.0.0 of clash already exists"
    )
