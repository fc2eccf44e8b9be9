"""``skillbook pin``/``unpin`` (clawhub-api.md §4.2, §5.1): the ``clawhub`` CLI's
``pinned``/``pinReason`` fields, ``update --all`` skipping pinned skills, ``update SLUG``
and ``install --force`` refusing them, and the pin surviving a reinstall's rewrite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli.conftest import Shell, shell  # noqa: F401 (fixture)
from factories import skill_text

from distribution.registry.clawhub_server import ClawHub
from distribution.registry.conftest import DEMO_V1, DEMO_V2, point_at


@pytest.fixture
def sh(shell: Shell, hub: ClawHub, monkeypatch: pytest.MonkeyPatch) -> Shell:  # noqa: F811
    point_at(shell, hub, monkeypatch)
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    hub.state.publish(
        "other", "1.0.0", {**DEMO_V1, "SKILL.md": skill_text("other", "O.", body="").encode()}
    )
    return shell


def lock(project: Path) -> dict[str, dict[str, object]]:
    entries: dict[str, dict[str, object]] = json.loads(
        (project / ".clawhub/lock.json").read_text()
    )["skills"]
    return entries


def test_pin_skips_update_all_and_refuses_update_and_reinstall(sh: Shell, hub: ClawHub) -> None:
    assert sh.run("install", "demo").exit_code == 0
    assert sh.run("install", "other").exit_code == 0
    pinned = sh.run("pin", "demo", "--reason", "audited 1.0.0")
    assert (pinned.exit_code, pinned.stdout) == (0, "Pinned demo (audited 1.0.0)\n")
    entry = lock(sh.project)["demo"]
    assert (entry["pinned"], entry["pinReason"]) == (True, "audited 1.0.0")
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    hub.state.publish("other", "1.1.0", DEMO_V2)
    every = sh.run("update", "--all")
    assert every.exit_code == 0, every.output
    assert every.stdout == ("Updated other: 1.0.0 -> 1.1.0\nSkipped 1 pinned skill: demo\n")
    assert lock(sh.project)["demo"]["version"] == "1.0.0"
    one = sh.run("update", "demo")
    assert one.exit_code == 1
    assert 'skill "demo" is pinned (audited 1.0.0); run `skillbook unpin demo` first' in one.stderr
    forced = sh.run("install", "demo", "--force")
    assert forced.exit_code == 1 and "is pinned" in forced.stderr
    as_json = json.loads(sh.run("update", "--all", "--json").stdout)["results"]
    skipped = next(r for r in as_json if r["slug"] == "demo")
    assert skipped["skipped"] is True and skipped["code"] == "registry.pinned"
    # Unpinning drops both fields; the next update goes ahead.
    assert sh.run("unpin", "demo").stdout == "Unpinned demo\n"
    assert "pinned" not in lock(sh.project)["demo"]
    assert "pinReason" not in lock(sh.project)["demo"]
    assert sh.run("unpin", "demo").stdout == "demo was not pinned\n"
    assert sh.run("update", "demo").stdout == "Updated demo: 1.0.0 -> 1.1.0\n"


def test_a_pin_without_reason_and_a_pin_the_cli_wrote(sh: Shell, hub: ClawHub) -> None:
    assert sh.run("install", "demo").exit_code == 0
    record = json.loads(sh.run("pin", "demo", "--json").stdout)
    assert record == {"slug": "demo", "pinned": True, "reason": None, "changed": True}
    entry = lock(sh.project)["demo"]
    assert entry["pinned"] is True and "pinReason" not in entry
    # Pinning again changes nothing; a pin the clawhub CLI wrote (same fields) is
    # honoured, also against --force.
    assert json.loads(sh.run("pin", "demo", "--json").stdout)["changed"] is False
    assert sh.run("unpin", "demo").exit_code == 0
    data = json.loads((sh.project / ".clawhub/lock.json").read_text())
    data["skills"]["demo"].update(pinned=True, pinReason="by clawhub")
    (sh.project / ".clawhub/lock.json").write_text(json.dumps(data, indent=2) + "\n")
    refused = sh.run("update", "demo", "--force")
    assert refused.exit_code == 1 and "(by clawhub)" in refused.stderr


def test_pin_needs_a_tracked_skill(sh: Shell) -> None:
    missing = sh.run("pin", "nope")
    assert missing.exit_code == 1
    assert 'Skill "nope" is not tracked as a ClawHub install.' in missing.stderr
