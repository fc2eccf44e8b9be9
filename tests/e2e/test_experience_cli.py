"""The experience engine end to end: ``skillbook run``/``chat`` as subprocesses against the
scripted OpenAI-compatible server on 127.0.0.1, then ``drafts`` and the replay helper.

A task reads the wordcount skill and runs two commands; it succeeds and leaves a draft
with the right frontmatter, procedure and fingerprint; the replay helper, executed,
reproduces the result; the same task with other inputs updates the same draft; a
failed run leaves none; a run that read a credential file without approval is marked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import fake_openai_server as fake
import pytest
from factories import write_skill

from skillbook.pipeline.parse.skill_file import parse_skill_text

pytestmark = pytest.mark.e2e


COMMAND_LINE = [sys.executable, "-m", "skillbook"]
#: The checkout's sources, not whichever skillbook the interpreter has installed.
SRC = Path(__file__).resolve().parents[2] / "src"
WORDCOUNT = """---
name: wordcount
description: Count the words of a text file and list the most frequent ones.
---
Count the words with `wc`, the most frequent ones with `tr`, `sort` and `uniq`,
with exec and skill "wordcount".
"""
# The same skill stating the commands: a run that repeats them is a pure follow (issue 20).
STATED = WORDCOUNT.replace(
    "Count the words with `wc`, the most frequent ones with `tr`, `sort` and `uniq`,",
    "Run `wc -w < FILE`, then `tr -s ' ' '\\n' < FILE | sort | uniq -c | sort -rn | head -n N`,",
)


class Box:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = root / "home" / "ws"
        write_skill(self.ws / "skills" / "wordcount", text=WORDCOUNT)
        (root / "bundled").mkdir()
        self.state = root / "state"
        self.env = {
            "HOME": str(root / "home"),
            "PATH": f"/usr/bin{os.pathsep}/bin",
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(root / "bundled"),
            "SKILLBOOK_STATE_DIR": str(self.state),
            "LANG": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONPATH": str(SRC),
        }

    def data(self, name: str, text: str) -> Path:
        path = self.root / "data" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def sb(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*COMMAND_LINE, "--workspace", str(self.ws), *args],
            cwd=self.root,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )

    def run(self, server: Any, text: str, *extra: str) -> subprocess.CompletedProcess[str]:
        # --yes: no terminal to ask on, and the model's commands must run. The model is
        # scripted for the task only: it writes no draft's words unless a test says so.
        words = () if "--refine" in extra else ("--no-refine",)
        return self.sb(
            "run", text, "--base-url", server.base_url, "-m", "fake", "--yes", *words, *extra
        )

    def drafts(self, *extra: str) -> list[dict[str, Any]]:
        listed = self.sb("drafts", "list", "--json", *extra)
        assert listed.returncode == 0, listed.stderr
        return list(json.loads(listed.stdout)["drafts"])


@pytest.fixture
def box(tmp_path: Path) -> Box:
    return Box(tmp_path)


def count_task(box: Box, file: Path, top: int) -> list[Any]:
    skill = "~/ws/skills/wordcount/SKILL.md"

    def answer(body: dict[str, Any]) -> str:
        return "Top words:\n" + str(body["messages"][-1]["content"])

    return [
        [fake.Call("read", {"path": skill})],
        [fake.Call("exec", {"command": f"wc -w < {file}", "skill": "wordcount"})],
        [
            fake.Call(
                "exec",
                {
                    "command": f"tr -s ' ' '\\n' < {file} | sort | uniq -c | sort -rn"
                    f" | head -n {top}",
                    "skill": "wordcount",
                },
            )
        ],
        answer,
    ]


def test_a_successful_run_leaves_a_draft_that_replays_and_updates(box: Box) -> None:
    notes = box.data("notes.txt", "pear apple pear fig pear apple\n")
    request = f"Count the words in {notes} and show the top 2"
    with fake.FakeOpenAIServer(count_task(box, notes, 2)) as server:
        done = box.run(server, request)
    assert server.errors == [], server.errors
    assert done.returncode == 0, done.stderr
    assert "skillbook: learned draft " in done.stderr
    (draft,) = box.drafts()
    assert draft["runCount"] == 1 and draft["skillsUsed"] == ["wordcount"]
    # The session it came from.
    session = json.loads(box.sb("sessions", "show", draft["sourceSession"], "--json").stdout)
    assert session["success"] is True and session["skillsRead"] == ["wordcount"]
    assert [t["name"] for t in session["tools"]] == ["read", "exec", "exec"]
    # The skill file: frontmatter and procedure.
    shown = json.loads(box.sb("drafts", "show", draft["id"], "--json").stdout)
    parsed = parse_skill_text(shown["skill"])
    # The name is the task's slug; the id (and the files) keep the timestamp.
    assert parsed.name == draft["name"] != draft["id"] and "Use when" in parsed.description
    meta = parsed.frontmatter.data["metadata"]
    assert meta["source_session"] == draft["sourceSession"]
    assert meta["behavior_fingerprint"] == draft["behaviorFingerprint"]
    assert len(meta["behavior_fingerprint"]) == 12 and meta["skills_used"] == "wordcount"
    assert meta["created"] == draft["created"]
    assert 'wc -w < "${file}"' in parsed.body and 'head -n "${top}"' in parsed.body
    assert shown["gate"]["ok"] is True
    # Strict validation of the file as it would be promoted, and skills-ref's validator.
    # (in a folder named by the skill, as `drafts promote --strict-name` lays it out)
    folder = box.root / "check" / draft["name"]
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(shown["skill"], encoding="utf-8")
    strict = box.sb("validate", "--mode", "strict", str(folder))
    assert strict.returncode == 0, strict.stdout
    skills_ref = pytest.importorskip("skills_ref")
    assert list(skills_ref.validate(folder)) == []
    # The replay helper reproduces the result, in a subprocess.
    replay = Path(shown["replayFile"])
    replayed = subprocess.run(
        ["bash", str(replay)],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    tools = session["tools"]
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == tools[1]["result"] + tools[2]["result"]

    # The same task with other inputs: the same draft, updated.
    other = box.data("other.txt", "kiwi lime kiwi\n")
    with fake.FakeOpenAIServer(count_task(box, other, 1)) as server:
        again = box.run(server, f"Count the words in {other} and show the top 1")
    assert again.returncode == 0, again.stderr
    assert f"skillbook: updated draft {draft['id']}: same procedure, 2 runs" in again.stderr
    (updated,) = box.drafts()
    assert updated["id"] == draft["id"] and updated["runCount"] == 2
    assert [e["top"] for e in updated["examples"]] == ["2", "1"]
    diff = box.sb("drafts", "diff", draft["id"])
    assert '-  run_count: "1"' in diff.stdout and '+  run_count: "2"' in diff.stdout

    # Promotion: the catalog has it, and the helper sits in scripts/auto.
    promoted = box.sb("drafts", "promote", draft["id"])
    assert promoted.returncode == 0, promoted.stdout + promoted.stderr
    assert (box.ws / "scripts" / "auto" / f"{draft['id']}.sh").is_file()
    assert draft["id"] in box.sb("prompt").stdout


def test_a_run_that_did_what_the_skill_states_leaves_no_draft(box: Box) -> None:
    write_skill(box.ws / "skills" / "wordcount", text=STATED)
    notes = box.data("notes.txt", "pear apple pear fig\n")
    with fake.FakeOpenAIServer(count_task(box, notes, 2)) as server:
        done = box.run(server, f"Count the words in {notes} and show the top 2")
    assert done.returncode == 0, done.stderr
    assert "followed the skill wordcount and did what it states" in done.stderr
    assert "experience.followed-skill" in done.stderr
    assert box.drafts() == []
    # One more step than the skill states: a refine draft against it.
    script = count_task(box, notes, 1)
    script.insert(-1, [fake.Call("exec", {"command": f"wc -l < {notes}", "skill": "wordcount"})])
    with fake.FakeOpenAIServer(script) as server:
        done = box.run(server, f"Count the words and lines in {notes}, top 1")
    assert "learned refine draft" in done.stderr, done.stderr
    (draft,) = box.drafts()
    assert draft["kind"] == "refine" and draft["skill"] == "wordcount"
    diff = box.sb("drafts", "diff", draft["id"])
    assert diff.returncode == 0 and "+## Refined from a run" in diff.stdout


def test_a_failed_run_leaves_no_draft(box: Box) -> None:
    missing = box.root / "missing.txt"
    script: list[fake.Turn] = [
        [fake.Call("exec", {"command": f"wc -w < {missing}", "skill": "wordcount"})],
        "The file does not exist.",
    ]
    with fake.FakeOpenAIServer(script) as server:
        done = box.run(server, f"Count the words in {missing}")
    assert done.returncode == 0, done.stderr
    assert "nothing learned from session" in done.stderr and "failed" in done.stderr
    assert box.drafts() == []
    listed = json.loads(box.sb("sessions", "list", "--json").stdout)["sessions"]
    assert len(listed) == 1 and listed[0]["failed"] == 1


def test_reading_a_credential_file_without_approval_is_marked(box: Box) -> None:
    creds = box.root / "home" / ".aws" / "credentials"
    creds.parent.mkdir(parents=True)
    creds.write_text("[default]\naws_access_key_id = AKIAEXAMPLE\n", encoding="utf-8")
    script: list[fake.Turn] = [
        [fake.Call("exec", {"command": f"grep -c aws_access_key_id {creds}"})],
        "One key.",
    ]
    with fake.FakeOpenAIServer(script) as server:
        done = box.run(server, "How many AWS keys are configured?")
    assert done.returncode == 0, done.stderr
    (draft,) = box.drafts()
    assert [r["capability"] for r in draft["risks"]] == ["credential-files"]
    shown = box.sb("drafts", "show", draft["id"])
    assert "⚠️ **Warning:**" in shown.stdout and "experience.risk-unacknowledged" in shown.stdout
    refused = box.sb("drafts", "promote", draft["id"])
    assert refused.returncode == 1 and "--accept-risk" in refused.stdout
    assert box.sb("drafts", "promote", draft["id"], "--accept-risk").returncode == 0


def test_no_learn_and_json(box: Box) -> None:
    notes = box.data("n.txt", "a b a\n")
    with fake.FakeOpenAIServer(count_task(box, notes, 1)) as server:
        done = box.run(
            server, f"Count the words in {notes} and show the top 1", "--no-learn", "--json"
        )
    out = json.loads(done.stdout)
    assert out["learned"] is None and out["session"]
    assert box.drafts() == []
    with fake.FakeOpenAIServer(count_task(box, notes, 1)) as server:
        learned = json.loads(
            box.run(server, f"Count the words in {notes} and show the top 1", "--json").stdout
        )["learned"]
    assert learned["action"] == "created" and learned["draft"]


def test_refine_through_the_configured_provider(box: Box) -> None:
    notes = box.data("n.txt", "a b a\n")
    refined = {
        "slug": "word-frequencies",
        "title": "List the most frequent words of a file",
        "description": "Counts and ranks words. Use when asked for the most frequent words.",
        "triggers": ["most frequent words"],
        "notes": ["Read the skill.", "Count the words.", "Rank them."],
        "checks": ["The last command prints one line per word, most frequent first."],
    }
    script = [*count_task(box, notes, 1), json.dumps(refined)]
    with fake.FakeOpenAIServer(script) as server:
        done = box.run(server, f"Count the words in {notes} and show the top 1", "--refine")
    assert done.returncode == 0, done.stderr
    (draft,) = box.drafts()
    assert draft["id"].endswith("-word-frequencies") and draft["refined"] is True
    assert draft["description"] == refined["description"]
    # The refinement request went to the same server, and changed no command.
    assert "Never change" in server.requests[-1]["messages"][0]["content"]
    assert next(s["raw"] for s in draft["steps"] if s["raw"]) == f"wc -w < {notes}"


def test_a_failing_refinement_keeps_the_unrefined_draft(box: Box) -> None:
    notes = box.data("n.txt", "a b a\n")
    script = [*count_task(box, notes, 1), fake.HttpError(500, "overloaded")]
    with fake.FakeOpenAIServer(script) as server:
        done = box.run(server, f"Count the words in {notes} and show the top 1", "--refine")
    assert done.returncode == 0, done.stderr
    assert "[experience.refine-failed]" in done.stderr
    (draft,) = box.drafts()
    assert draft["refined"] is False and "the model request failed" in draft["refineError"]


def test_chat_good_and_bad(box: Box) -> None:
    first, second = box.data("a.txt", "a b a\n"), box.data("b.txt", "x y\n")
    other_task = [
        [fake.Call("exec", {"command": f"sort {second}"})],
        "Sorted.",
    ]
    script = [*count_task(box, first, 1), *other_task]
    lines = [
        f"Count the words in {first} and show the top 1",
        "/bad",
        f"Sort {second}",
        "/good",
        "/exit",
    ]
    with fake.FakeOpenAIServer(script) as server:
        done = box.sb(
            "chat",
            "--base-url",
            server.base_url,
            "-m",
            "fake",
            "--yes",
            stdin="\n".join(lines) + "\n",
        )
    assert done.returncode == 0, done.stderr
    assert "nothing will be learned from it" in done.stdout
    assert "learned draft" in done.stdout
    (draft,) = box.drafts()
    assert draft["request"] == f"Sort {second}"
    sessions = json.loads(box.sb("sessions", "list", "--json").stdout)["sessions"]
    assert sorted(s["feedback"] for s in sessions) == ["bad", "good"]
