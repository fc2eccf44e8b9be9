"""A learned skill declares the secret variables its run had (issue 20's secrets task):
``metadata.openclaw.requires.env`` with the config entry of the skill that gave them
(``skillKey``, ``primaryEnv``), so the catalog lists it as ready only when they can be
had and ``exec`` gives them to it; the value is never written."""

from __future__ import annotations

import json
import os

import pytest

from experience.conftest import KEYED, Workspace, run_recorded
from skillbook.experience.draft import Draft
from skillbook.experience.engine import Experience
from skillbook.experience.learner import with_env_source
from skillbook.experience.procedure import ProcedureStep
from skillbook.experience.promotion import Promotion
from skillbook.experience.skill_file import render_skill
from skillbook.runtime.providers.scripted import call

KEY = "cfgkey-T4r6E8w0Q2a4S6"
CHECK = 'test -n "$KEYED_API_KEY" && wc -c < {file}'


@pytest.fixture
def keyed(space: Workspace) -> Workspace:
    space.add_skill("keyed", KEYED)
    space.config(json.dumps({"skills": {"entries": {"keyed": {"apiKey": KEY}}}}))
    return space


def learn_and_promote(space: Workspace) -> Promotion:
    file = space.data("payload.txt", "x" * 12)
    script = [call("exec", command=CHECK.format(file=file), skill="keyed"), "12 bytes"]
    _, record = run_recorded(
        space.book(), script, f"Check the keyed key and count the bytes of {file}"
    )
    exp = Experience(space.book())
    learned = exp.learner().learn(record)
    assert learned.draft is not None, learned.message()
    return exp.promote(learned.draft.id)


def test_the_learned_skill_declares_the_secret_and_whose_entry_has_it(keyed: Workspace) -> None:
    done = learn_and_promote(keyed)
    skill = keyed.book().get(done.draft.name)
    meta = skill.metadata
    assert meta is not None and meta.requires is not None
    assert meta.requires.env == ("KEYED_API_KEY",)
    assert skill.skill_key == "keyed" and meta.primary_env == "KEYED_API_KEY"
    assert done.replay_path is not None
    for path in (done.skill_path, done.replay_path):
        assert KEY not in path.read_text(encoding="utf-8")
    assert "`skills.entries.keyed`" in done.skill_path.read_text(encoding="utf-8")


def test_the_catalog_lists_it_as_ready_only_when_the_secret_can_be_had(keyed: Workspace) -> None:
    name = learn_and_promote(keyed).draft.name
    book = keyed.book()
    assert book.find(name).ready and name in book.prompt
    keyed.config("{}")  # keyed's key is gone: the learned skill needs setup too
    book = keyed.book()
    entry = book.find(name)
    assert not entry.ready and entry.missing.env == ("KEYED_API_KEY",)
    assert name not in book.prompt
    # Set in the environment, it is ready again (OpenClaw's hasEnv).
    keyed.env["KEYED_API_KEY"] = "from-the-environment"
    assert keyed.book().find(name).ready


def test_exec_as_the_learned_skill_gives_its_commands_the_secret(keyed: Workspace) -> None:
    done = learn_and_promote(keyed)
    assert done.replay_path is not None
    other = keyed.data("other.txt", "y" * 30)
    rel = os.path.relpath(done.replay_path, done.skill_path.parent)
    script = [call("exec", command=f"bash {rel} {other}", skill=done.draft.name), "30"]
    # The helper stops with KEYED_API_KEY unset; exec must set it as for keyed.
    _, record = run_recorded(keyed.book(), script, f"Verify the keyed key and size {other}")
    (run,) = [t for t in record.tools if t.name == "exec"]
    assert not run.is_error and run.result.strip() == "30", run.result


def _draft(*steps: ProcedureStep) -> Draft:
    return Draft("1-x", "x", "X", "Use when x.", "openclaw", "f", "s", "c", "r", steps=steps)


def _step(skill: str | None, *secrets: str) -> ProcedureStep:
    return ProcedureStep("exec", command="true", raw="true", skill=skill, secret_env=secrets)


def test_secrets_from_two_skills_declare_the_names_without_a_shared_entry() -> None:
    keys = {"a": ("a", "A_TOKEN"), "b": ("b-key", "")}
    one = with_env_source(_draft(_step("a", "A_TOKEN"), _step("a")), keys)
    assert (one.env_skill_key, one.env_primary) == ("a", "A_TOKEN")
    both = with_env_source(_draft(_step("a", "A_TOKEN"), _step("b", "B_SECRET")), keys)
    assert both.env_skill_key == "" and both.needs_env == ("A_TOKEN", "B_SECRET")
    text = render_skill(both)
    assert "skillKey" not in text and '- "A_TOKEN"' in text and '- "B_SECRET"' in text
    # A primaryEnv the commands did not have is not declared (its apiKey is not theirs).
    not_primary = with_env_source(_draft(_step("b", "B_SECRET")), {"b": ("b", "OTHER")})
    assert (not_primary.env_skill_key, not_primary.env_primary) == ("b", "")
    # No secret: no gates at all.
    assert "openclaw" not in render_skill(with_env_source(_draft(_step("a")), keys))


def test_the_draft_keeps_where_its_secrets_come_from() -> None:
    draft = with_env_source(_draft(_step("a", "A_TOKEN")), {"a": ("a", "A_TOKEN")})
    again = Draft.from_json(json.loads(json.dumps(draft.to_json())))
    assert (again.env_skill_key, again.env_primary) == ("a", "A_TOKEN")
