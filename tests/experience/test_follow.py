"""New or refine (issue 20): a run that did what a skill states leaves no draft; one that
followed a skill but did more, less or otherwise leaves a refine draft against it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from factories import skill_text
from hypothesis import given, settings
from hypothesis import strategies as st

from experience.conftest import Workspace, run_recorded
from skillbook.experience.follow import (
    CatalogSkill,
    find_following,
    slash_skill,
    stated_commands,
)
from skillbook.experience.learner import Learned, Learner
from skillbook.experience.procedure import Procedure, reconstruct
from skillbook.experience.record import Outcome, SessionRecord, ToolEntry
from skillbook.runtime.providers.scripted import call

WORDFREQ = """---
name: wordfreq
description: Count the words of a text file and list the most frequent ones.
---
# Word frequencies

1. Count the words:

   ```sh
   wc -w < FILE
   ```

2. List the N most frequent ones:

   ```bash
   tr -s ' ' '\\n' < FILE | sort | uniq -c | sort -rn | head -n N
   ```
"""
REQUEST = "Count the words in {file} and show the top {top}"


def wordfreq_commands(file: Path, top: int) -> list[str]:
    return [
        f"wc -w < {file}",
        f"tr -s ' ' '\\n' < {file} | sort | uniq -c | sort -rn | head -n {top}",
    ]


def follow_script(
    space: Workspace, commands: list[str], *, read: bool = True, skill: str | None = "wordfreq"
) -> list[Any]:
    steps: list[Any] = []
    if read:
        steps.append(call("read", path=str(space.ws / "skills" / "wordfreq" / "SKILL.md")))
    for command in commands:
        steps.append(
            call("exec", command=command, skill=skill) if skill else call("exec", command=command)
        )
    steps.append("done")
    return steps


def learn(space: Workspace, script: list[Any], text: str) -> Learned:
    _, record = run_recorded(space.book(), script, text)
    return Learner.for_book(space.book()).learn(record)


@pytest.fixture
def freq(space: Workspace) -> Workspace:
    space.add_skill("wordfreq", WORDFREQ)
    return space


def notes(space: Workspace, name: str = "notes.txt") -> Path:
    return space.data(name, "pear apple pear fig\n")


def test_a_pure_follow_leaves_no_draft_and_says_why(freq: Workspace) -> None:
    file = notes(freq)
    learned = learn(
        freq, follow_script(freq, wordfreq_commands(file, 2)), REQUEST.format(file=file, top=2)
    )
    assert learned.action == "followed-skill" and learned.skill == "wordfreq"
    assert learned.draft is None and not learned.quiet
    (note,) = learned.diagnostics
    assert note.code == "experience.followed-skill" and note.severity == "info"
    assert "wordfreq" in note.message and "workspace" in note.message
    assert "followed the skill wordfreq and did what it states" in learned.message()
    assert learned.to_json()["skill"] == "wordfreq"
    assert Learner.for_book(freq.book()).queue.drafts(None) == []


def test_following_by_exec_alone_counts(freq: Workspace) -> None:
    file = notes(freq)
    script = follow_script(freq, wordfreq_commands(file, 1), read=False)
    assert learn(freq, script, REQUEST.format(file=file, top=1)).action == "followed-skill"


def test_following_by_slash_command_counts(freq: Workspace) -> None:
    # The user typed /wordfreq: the model was told to use the skill; it runs the commands
    # without reading the file or naming the skill.
    file = notes(freq)
    script = follow_script(freq, wordfreq_commands(file, 2), read=False, skill=None)
    learned = learn(freq, script, f"/wordfreq {file} 2")
    assert learned.action == "followed-skill" and learned.skill == "wordfreq"


def test_the_users_value_for_the_skills_example_value_is_a_pure_follow(
    space: Workspace,
) -> None:
    # The skill shows an example city; the user asked about another one: an input,
    # not other arguments.
    space.add_skill(
        "weather",
        skill_text(
            "weather",
            "Weather for a city.",
            body='Run `printf "%s: sunny\\n" "London"` as skill weather.\n',
        ),
    )
    script = [
        call("exec", command='printf "%s: sunny\\n" "Paris"', skill="weather"),
        "Paris: sunny",
    ]
    learned = learn(space, script, "What is the weather in Paris?")
    assert learned.action == "followed-skill" and learned.skill == "weather"
    # Another value the user did not ask for is other arguments.
    script[0] = call("exec", command='printf "%s: rainy\\n" "Paris"', skill="weather")
    learned = learn(space, script, "What is the weather in Paris?")
    assert learned.draft is not None and learned.draft.target is not None
    (change,) = learned.draft.target.changes
    assert change.startswith("other arguments: ")


def test_the_same_commands_without_following_the_skill_are_a_new_draft(freq: Workspace) -> None:
    file = notes(freq)
    script = follow_script(freq, wordfreq_commands(file, 2), read=False, skill=None)
    learned = learn(freq, script, REQUEST.format(file=file, top=2))
    assert learned.action == "created" and learned.draft is not None
    assert learned.draft.kind == "new" and learned.draft.target is None


def test_an_extra_step_gives_a_refine_draft(freq: Workspace) -> None:
    file = notes(freq)
    commands = [*wordfreq_commands(file, 2), f"wc -l < {file}"]
    learned = learn(freq, follow_script(freq, commands), REQUEST.format(file=file, top=2))
    draft = learned.draft
    assert learned.action == "created" and draft is not None and learned.skill == "wordfreq"
    assert draft.kind == "refine" and draft.target is not None
    assert draft.target.name == "wordfreq" and draft.target.source == "openclaw-workspace"
    assert draft.target.path == str(freq.ws / "skills" / "wordfreq" / "SKILL.md")
    assert draft.target.followed == ("read", "exec")
    assert draft.target.changes == ('extra step: `wc -l < "${file}"`',)
    assert "refine draft" in learned.message() and "drafts diff" in learned.message()
    codes = [d.code for d in learned.diagnostics]
    assert "experience.refine" in codes
    # The skill it refines is no near-duplicate of it.
    assert all(d.of != "wordfreq" for d in draft.near_duplicates)


def test_other_arguments_give_a_refine_draft(freq: Workspace) -> None:
    file = notes(freq)
    commands = [f"wc -w < {file}", f"tr -s ' ' '\\n' < {file} | sort | uniq -c | sort -n"]
    learned = learn(freq, follow_script(freq, commands), f"Count the words in {file}, least first")
    assert learned.draft is not None and learned.draft.target is not None
    (change,) = learned.draft.target.changes
    assert change.startswith("other arguments: `tr -s ' ' '\\n' < FILE | sort")
    assert "→" in change and "sort -n" in change


def test_a_step_left_out_gives_a_refine_draft(freq: Workspace) -> None:
    three = WORDFREQ.replace(
        "2. List", "2. Count the lines:\n\n   ```sh\n   wc -l < FILE\n   ```\n\n3. List"
    )
    freq.add_skill("wordfreq", three)
    file = notes(freq)
    learned = learn(
        freq, follow_script(freq, wordfreq_commands(file, 2)), REQUEST.format(file=file, top=2)
    )
    assert learned.draft is not None and learned.draft.target is not None
    assert learned.draft.target.changes == ("left out: `wc -l < FILE`",)


def test_a_fixed_mistake_gives_a_refine_draft(space: Workspace) -> None:
    space.add_skill("wordfreq", WORDFREQ.replace("wc -w < FILE", "wc --wordz < FILE"))
    file = notes(space)
    script = follow_script(space, ["wc --wordz < " + str(file), *wordfreq_commands(file, 2)])
    learned = learn(space, script, REQUEST.format(file=file, top=2))
    assert learned.draft is not None and learned.draft.target is not None
    changes = learned.draft.target.changes
    assert changes[0].startswith("other arguments: `wc --wordz < FILE` → `wc -w <")
    assert changes[1].startswith("fixed a mistake: `wc --wordz < FILE` failed (")
    assert changes[1].endswith(f"`wc -w < {file}` worked")
    assert learned.draft.pitfalls  # the failed attempt is also a pitfall of the procedure


def test_the_same_refine_again_updates_its_draft(freq: Workspace) -> None:
    first_file, other = notes(freq, "a.txt"), notes(freq, "b.txt")
    first = learn(
        freq,
        follow_script(freq, [*wordfreq_commands(first_file, 2), f"wc -l < {first_file}"]),
        REQUEST.format(file=first_file, top=2),
    )
    again = learn(
        freq,
        follow_script(freq, [*wordfreq_commands(other, 1), f"wc -l < {other}"]),
        REQUEST.format(file=other, top=1),
    )
    assert (first.action, again.action) == ("created", "updated")
    assert again.draft is not None and first.draft is not None
    assert again.draft.kind == "refine" and again.draft.id == first.draft.id
    assert again.draft.run_count == 2 and again.skill == "wordfreq"


def test_a_skill_that_states_no_command_is_not_followed_step_by_step(space: Workspace) -> None:
    # conftest's wordcount names programs but states no command: a new skill.
    file = notes(space)
    script = follow_script(space, wordfreq_commands(file, 2), read=False, skill="wordcount")
    learned = learn(space, script, REQUEST.format(file=file, top=2))
    assert learned.draft is not None and learned.draft.kind == "new"


def test_commands_run_as_another_skill_make_a_new_procedure(freq: Workspace) -> None:
    file = notes(freq)
    script = follow_script(freq, wordfreq_commands(file, 2))
    script.insert(-1, call("exec", command=f"wc -c < {file}", skill="wordcount"))
    learned = learn(freq, script, REQUEST.format(file=file, top=2))
    assert learned.draft is not None and learned.draft.kind == "new"


def test_find_skills_alone_is_not_following(freq: Workspace) -> None:
    freq.config(
        '{skills: {selection: {mode: "always", backend: "bm25", minScore: 0.01, indexDir: "%s"}}}'
        % (freq.root / "index")
    )
    file = notes(freq)
    script = [
        call("find_skills", query="word frequencies"),
        *follow_script(freq, wordfreq_commands(file, 2), read=False, skill=None),
    ]
    _, record = run_recorded(freq.book(), script, REQUEST.format(file=file, top=2))
    assert record.tools[0].name == "find_skills" and "wordfreq" in record.tools[0].result
    learned = Learner.for_book(freq.book()).learn(record)
    assert learned.draft is not None and learned.draft.kind == "new"


def test_stated_commands_of_a_skill() -> None:
    text = skill_text(
        "x",
        "X.",
        body=(
            "Run `curl -s wttr.in/CITY` or `gh pr list --repo <repo>`; see `README.md`.\n\n"
            "```sh\n$ git status\n# a comment\ngit log \\\n  --oneline\n```\n\n"
            "```python\nprint('not a command')\n```\n"
        ),
    )
    assert stated_commands(text) == (
        "curl -s wttr.in/CITY",
        "gh pr list --repo <repo>",
        "git status",
        "git log --oneline",
    )


def test_slash_skill_reads_the_command_name() -> None:
    names = ["word-freq", "other"]
    assert slash_skill("/word_freq notes.txt", names) == "word-freq"
    assert slash_skill("/other", names) == "other"
    assert slash_skill("word_freq", names) is None and slash_skill("/", names) is None


# ---------------------------------------------------------------------- parsers


def _record(*commands: str) -> tuple[SessionRecord, Procedure]:
    tools = [ToolEntry("r", "read", {"path": "/p/x/SKILL.md"}, skill="x")]
    tools += [ToolEntry(f"c{i}", "exec", {"command": c}, skill="x") for i, c in enumerate(commands)]
    record = SessionRecord(
        "s",
        "2026-01-05T14:30:00Z",
        "do it",
        skills={"x": "/p/x"},
        tools=tuple(tools),
        outcome=Outcome("answer", "ok"),
    )
    return record, reconstruct(record)


def _skill(text: str) -> CatalogSkill:
    return CatalogSkill("x", "/p/x/SKILL.md", "openclaw-workspace", text)


@settings(deadline=None)  # no timed assertions: the two shared cores are slow at times
@given(st.text(max_size=400))
def test_stated_commands_never_fail_and_give_one_line_each(text: str) -> None:
    for command in stated_commands(text):
        assert command and "\n" not in command and command == " ".join(command.split())
    record, procedure = _record("echo hi")
    find_following(record, procedure, [_skill(text)])  # never raises


_LINE = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="`~\\"),
    min_size=1,
    max_size=60,
).filter(lambda c: c.strip() and not c.strip().startswith(("#", "$")))


@settings(deadline=None)
@given(_LINE)
def test_a_run_of_exactly_the_stated_command_is_a_pure_follow(command: str) -> None:
    text = f"---\nname: x\ndescription: X.\n---\n```sh\n{command}\n```\n"
    record, procedure = _record(command)
    found = find_following(record, procedure, [_skill(text)])
    assert found is not None and found.pure, (command, found)


def test_a_hostile_skill_text_is_read_in_one_pass() -> None:
    # Thousands of fences never closed, and a code span never closed: each line is read
    # once (a regex looking ahead for each fence's end would take minutes here).
    text = "```x\n" * 20000 + "`" + "a " * 100000
    assert stated_commands(text) == ()
    record, procedure = _record("a a")
    assert find_following(record, procedure, [_skill(text)]) is None


_LEARNED = (
    "---\nname: x\ndescription: X.\n---\n## Replay\n\n```sh\n"
    "bash ../../../scripts/auto/1-x.sh [column] [file]\n```\n"
)


@pytest.mark.parametrize(
    "command",
    [
        "bash ../../../scripts/auto/1-x.sh 3 /data/b.csv",  # another value for each
        'bash ../../../scripts/auto/1-x.sh 2 "/data/b.csv"',
        "bash ../../../scripts/auto/1-x.sh 5",  # the file left out: the run's default
        "bash ../../../scripts/auto/1-x.sh",
    ],
)
def test_values_for_a_learned_helpers_parameters_are_a_pure_follow(command: str) -> None:
    # The eval's sum-column paraphrase run passed its own column to the helper, which
    # takes it as a parameter: that is using the skill, not a refine.
    record, procedure = _record(command)
    found = find_following(record, procedure, [_skill(_LEARNED)])
    assert found is not None and found.pure, found


def test_more_arguments_than_a_learned_helper_takes_are_other_arguments() -> None:
    record, procedure = _record("bash ../../../scripts/auto/1-x.sh 3 /data/b.csv extra")
    found = find_following(record, procedure, [_skill(_LEARNED)])
    assert found is not None and not found.pure
    assert found.changes[0].startswith("other arguments")


def test_a_bracketed_word_inside_a_command_stays_literal() -> None:
    # Only a whole word [name] is an argument; a[i] in a command is the command's own.
    text = "---\nname: x\ndescription: X.\n---\n```sh\nawk {print a[i]} data.txt\n```\n"
    record, procedure = _record("awk {print b} data.txt")
    found = find_following(record, procedure, [_skill(text)])
    assert found is not None and not found.pure
