"""``skillbook sessions``, ``drafts``, ``usage`` and the stale section of ``check``, in process."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from experience.conftest import Workspace, count_script, run_recorded
from skillbook.cli.app import cli
from skillbook.experience.engine import Experience
from skillbook.runtime.providers.scripted import call


@pytest.fixture
def box(space: Workspace, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    for name, value in space.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.chdir(space.root)
    return space


def sb(space: Workspace, *args: str) -> Result:
    return CliRunner().invoke(cli, [*args, "-w", str(space.ws)], prog_name="skillbook")


def learn_once(space: Workspace, name: str = "notes.txt") -> str:
    notes = space.data(name, "a b a\n")
    run_recorded(space.book(), count_script(space, notes, 1), f"Count the words in {notes}")
    return notes.name


def test_sessions_list_and_show(box: Workspace) -> None:
    assert "No recorded sessions" in sb(box, "sessions", "list").output
    learn_once(box)
    listed = sb(box, "sessions", "list")
    assert listed.exit_code == 0 and "answer" in listed.output and "3 tool call(s)" in listed.output
    data = json.loads(sb(box, "sessions", "list", "--json").output)
    (row,) = data["sessions"]
    assert row["skills"] == ["wordcount"] and row["stop"] == "answer"
    shown = sb(box, "sessions", "show", "last")
    assert shown.exit_code == 0, shown.output
    assert "→ exec wc -w <" in shown.output and "Successful: yes" in shown.output
    full = json.loads(sb(box, "sessions", "show", row["id"][:18], "--json").output)
    assert full["id"] == row["id"] and full["success"] is True and len(full["tools"]) == 3
    missing = sb(box, "sessions", "show", "nope", "--json")
    assert missing.exit_code == 2 and json.loads(missing.output)["code"] == "not-found"


def test_drafts_learn_list_show_diff_promote(box: Workspace) -> None:
    learn_once(box)
    learned = json.loads(sb(box, "drafts", "learn", "last", "--json").output)
    assert learned["action"] == "created" and learned["success"] is True
    draft_id = learned["draft"]
    listed = sb(box, "drafts", "list")
    assert draft_id in listed.output and "runs 1" in listed.output
    shown = sb(box, "drafts", "show", draft_id)
    assert "behavior_fingerprint" in shown.output and "Gate (strict): passes" in shown.output
    replay = sb(box, "drafts", "show", draft_id, "--replay")
    assert "set -euo pipefail" in replay.output
    as_json = json.loads(sb(box, "drafts", "show", draft_id, "--json").output)
    assert as_json["gate"]["ok"] is True and as_json["skill"].startswith("---\nname: ")
    diff = sb(box, "drafts", "diff", draft_id, "--with", "wordcount")
    assert diff.exit_code == 0 and diff.output.startswith("--- ") and "+name: " in diff.output
    nothing = json.loads(sb(box, "drafts", "diff", draft_id, "--json").output)
    assert nothing["diff"].startswith("--- /dev/null")
    unknown = sb(box, "drafts", "diff", draft_id, "--with", "nope")
    assert unknown.exit_code == 2
    promoted = json.loads(sb(box, "drafts", "promote", draft_id, "--json").output)
    assert Path(promoted["skill"]).is_file() and promoted["gate"]["ok"] is True
    assert "No drafts waiting" in sb(box, "drafts", "list").output
    assert "promoted" in sb(box, "drafts", "list", "--all").output
    assert promoted["name"] == "count-words" and "count-words" in sb(box, "list").output


def test_a_refused_promotion_lists_each_failure_and_exits_1(box: Workspace) -> None:
    creds = box.home / ".ssh" / "id_ed25519"
    creds.parent.mkdir(parents=True)
    creds.write_text("KEY\n", encoding="utf-8")
    run_recorded(box.book(), [call("exec", command=f"wc -c {creds}"), "4 bytes"], "key size")
    draft_id = json.loads(sb(box, "drafts", "learn", "last", "--json").output)["draft"]
    assert "⚠ risk" in sb(box, "drafts", "list").output
    refused = sb(box, "drafts", "promote", draft_id)
    assert refused.exit_code == 1
    assert (
        "[experience.risk-unacknowledged]" in refused.output and "--accept-risk" in refused.output
    )
    as_json = json.loads(sb(box, "drafts", "promote", draft_id, "--json").output)
    assert as_json["code"] == "promotion-refused"
    errors = [d["code"] for d in as_json["diagnostics"] if d["severity"] == "error"]
    assert errors == ["experience.risk-unacknowledged"]
    assert sb(box, "drafts", "promote", draft_id, "--accept-risk").exit_code == 0


def test_drafts_reject_needs_a_reason(box: Workspace) -> None:
    learn_once(box)
    draft_id = json.loads(sb(box, "drafts", "learn", "last", "--json").output)["draft"]
    assert sb(box, "drafts", "reject", draft_id).exit_code == 2
    done = json.loads(sb(box, "drafts", "reject", draft_id, "-r", "not useful", "--json").output)
    assert done["status"] == "rejected" and done["rejectedReason"] == "not useful"
    again = json.loads(sb(box, "drafts", "learn", "last", "--json").output)
    assert again["action"] == "known"


def test_usage_pins_and_check_reports_stale_skills(box: Workspace) -> None:
    box.config("{skills: {experience: {staleAfterDays: 30}}}")
    learn_once(box)
    usage = json.loads(sb(box, "usage", "--json").output)
    assert usage["skills"]["wordcount"]["reads"] == 1 and usage["stale"] == []
    # Pretend counting started long ago.
    path = box.state / "experience" / "usage.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    long_ago = (datetime.now(UTC) - timedelta(days=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc["since"] = doc["skills"]["wordcount"]["lastUsed"] = long_ago
    path.write_text(json.dumps(doc), encoding="utf-8")
    old = box.ws / "skills" / "wordcount" / "SKILL.md"
    stamp = (datetime.now(UTC) - timedelta(days=60)).timestamp()
    import os

    os.utime(old, (stamp, stamp))
    check = sb(box, "check")
    assert "Not used for 30 days or more" in check.output and "wordcount (60 days" in check.output
    checked = json.loads(sb(box, "check", "--json").output)
    assert [s["name"] for s in checked["stale"]] == ["wordcount"]
    (note,) = [d for d in checked["diagnostics"] if d["code"] == "experience.stale-skill"]
    assert note["skill"] == "wordcount" and "usage --pin wordcount" in note["message"]
    pinned = sb(box, "usage", "--pin", "wordcount")
    assert "Pinned: wordcount" in pinned.output
    assert json.loads(sb(box, "check", "--json").output)["stale"] == []
    assert "Stale" not in sb(box, "usage").output
    sb(box, "usage", "--unpin", "wordcount")
    assert Experience(box.book()).stale()[0].name == "wordcount"
