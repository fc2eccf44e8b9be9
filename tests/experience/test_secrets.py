"""The experience engine never writes or prints a known secret, however it got into a run.

Canary values, one per source (a skill's configured ``apiKey``, a skill's configured
``env`` value, a provider key, a registry token, a blocked variable of the skill's config
and of the environment), arrive every way (typed by the model into a command, the request
and the answer; printed by a command, raw, base64- and URL-encoded and wrapped over
lines). None of them may be in the session file, the draft's files, the promoted files or
what ``drafts`` and ``sessions`` print.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest
from click.testing import CliRunner, Result
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from experience.conftest import KEYED, Workspace, run_recorded
from skillbook.cli.app import cli
from skillbook.experience.engine import Experience
from skillbook.experience.learner import Learner
from skillbook.experience.redaction import PLACEHOLDER_KEYS, Redactor
from skillbook.experience.store import SessionStore
from skillbook.runtime.providers.scripted import call

CANARIES = {
    "config apiKey": "cfgkey-Q7x1Z9w2R4t6Y8u0",
    "skill env": "skillenv-M3n5B7v9C1x3Z5",
    "provider key": "sk-provider-K2j4H6g8F0d2S4",
    "registry token": "clh_registry-P9o7I5u3Y1t9",
    "blocked skill env": "blockedcfg-L8k6J4h2G0f8",
    "blocked host env": "AKIAHOSTBLOCKED7Z5X3C1V",
}


def forms(value: str) -> list[str]:
    """The value and the encodings the redactor also finds."""
    return [value, base64.b64encode(value.encode()).decode().rstrip("="), quote(value, safe="")]


@pytest.fixture
def secret_space(space: Workspace, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space.add_skill("keyed", KEYED)
    space.config(
        json.dumps(
            {
                "skills": {
                    "entries": {
                        "keyed": {
                            "apiKey": CANARIES["config apiKey"],
                            "env": {
                                # Not a sensitive name for the host rules: injected, and
                                # before this fix kept readable in the draft and replay.
                                "MAPS_KEY": CANARIES["skill env"],
                                "UNITS": "metric",
                                # Always blocked: never injected, still a secret.
                                "DATABASE_URL": f"postgres://u:{CANARIES['blocked skill env']}@db/x",
                            },
                        }
                    }
                }
            }
        )
    )
    for name, value in space.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_API_KEY", CANARIES["provider key"])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", CANARIES["blocked host env"])
    for name in ("XDG_CONFIG_HOME", "CLAWHUB_CONFIG_PATH", "CLAWDHUB_CONFIG_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENCLAW_CLAWHUB_CONFIG_PATH", raising=False)
    registry = space.home / ".config" / "clawhub" / "config.json"
    registry.parent.mkdir(parents=True)
    registry.write_text(json.dumps({"auth": {"token": CANARIES["registry token"]}}))
    monkeypatch.chdir(space.root)
    return space


def secret_run(space: Workspace) -> tuple[Experience, str]:
    """A successful run that meets every canary in every way; the draft it left."""
    values = list(CANARIES.values())
    printed = space.data(
        "printed.txt",
        "\n".join(f"{v} {' '.join(forms(v)[1:])}" for v in values) + "\n",
    )
    script = [
        # Typed by the model.
        call("exec", command="echo typed " + " ".join(values), skill="keyed"),
        # Printed by commands: from a file, from the skill's environment, encoded, wrapped.
        call("exec", command=f"cat {printed}"),
        call(
            "exec",
            command='printf "%s %s\\n" "$KEYED_API_KEY" "$MAPS_KEY"; '
            'printf %s "$OPENAI_API_KEY" | base64; printf "%s\\n" "$AWS_ACCESS_KEY_ID" | fold -w 7',
            skill="keyed",
        ),
        "done: " + " ".join(values),
    ]
    _, record = run_recorded(space.book(), script, "use these: " + " ".join(values))
    exp = Experience(space.book())
    learned = exp.learner().learn(record)
    assert learned.draft is not None, learned.message()
    return exp, learned.draft.id


def sb(space: Workspace, *args: str) -> Result:
    return CliRunner().invoke(cli, [*args, "-w", str(space.ws)], prog_name="skillbook")


def assert_clean(where: str, text: str) -> None:
    for source, value in CANARIES.items():
        for form in forms(value):
            assert form not in text, f"{source} ({form}) in {where}"


def test_no_known_secret_reaches_a_file_or_the_terminal(secret_space: Workspace) -> None:
    space = secret_space
    exp, draft_id = secret_run(space)
    (session,) = (space.state / "sessions").glob("*.jsonl")
    folder = exp.queue.folder(draft_id)
    written = {
        "sessions JSONL": session.read_text(encoding="utf-8"),
        "draft SKILL.md": (folder / "SKILL.md").read_text(encoding="utf-8"),
        "draft.json": (folder / "draft.json").read_text(encoding="utf-8"),
        "replay script": (folder / "replay.sh").read_text(encoding="utf-8"),
        "usage.json": (space.state / "experience" / "usage.json").read_text(encoding="utf-8"),
    }
    for command in (
        ("drafts", "show", draft_id),
        ("drafts", "show", draft_id, "--replay"),
        ("drafts", "show", draft_id, "--json"),
        ("drafts", "list", "--json"),
        ("drafts", "diff", draft_id),
        ("sessions", "show", "last"),
        ("sessions", "show", "last", "--json"),
        ("sessions", "list", "--json"),
    ):
        done = sb(space, *command)
        assert done.exit_code == 0, done.output
        written[" ".join(command)] = done.output
    promoted = exp.promote(draft_id, accept_risk=True)
    written["promoted SKILL.md"] = promoted.skill_path.read_text(encoding="utf-8")
    assert promoted.replay_path is not None  # a new skill has a helper
    written["promoted replay"] = promoted.replay_path.read_text(encoding="utf-8")
    for where, text in written.items():
        assert_clean(where, text)
    # The record still says what happened: the redaction mark, and the variables by name.
    assert "***" in written["sessions JSONL"]
    step = json.loads(written["draft.json"])["steps"][2]
    assert step["secretEnv"] == ["KEYED_API_KEY", "MAPS_KEY"] and step["env"] == {"UNITS": "metric"}
    assert ': "${MAPS_KEY:?set MAPS_KEY' in written["replay script"]
    assert "# NOTE: *** stands for a secret skillbook redacted" in written["replay script"]


def test_an_old_session_holding_secrets_is_redacted_when_shown_and_learned(
    secret_space: Workspace,
) -> None:
    # A session file from before this redaction (or written by hand) still holds values.
    space = secret_space
    values = " ".join(CANARIES.values())
    lines = [
        {"type": "session", "id": "20260105-143000-abcdef", "version": 1, "started": "x"},
        {"type": "request", "text": f"send {values}"},
        {"type": "step", "n": 1, "text": "", "calls": ["c1"]},
        {
            "type": "tool",
            "call": "c1",
            "name": "exec",
            "arguments": {"command": f"echo {values}"},
            "step": 1,
            "isError": False,
            "result": values,
        },
        {"type": "outcome", "stop": "answer", "text": f"sent {values}"},
    ]
    folder = space.state / "sessions"
    folder.mkdir()
    (folder / "20260105-143000-abcdef.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    shown = [sb(space, "sessions", "show", "last"), sb(space, "sessions", "list")]
    learned = sb(space, "drafts", "learn", "last", "--json")
    assert learned.exit_code == 0, learned.output
    draft_id = json.loads(learned.output)["draft"]
    shown += [sb(space, "drafts", "show", draft_id), sb(space, "drafts", "list", "--json")]
    for done in shown:
        assert done.exit_code == 0, done.output
        assert_clean("output", done.output)
    for path in Learner.for_book(space.book()).queue.folder(draft_id).iterdir():
        assert_clean(path.name, path.read_text(encoding="utf-8"))
    # Marking it (chat's /good) rewrites the file: redacted now.
    Experience(space.book()).sessions.add_feedback("last", "good")
    old = folder / "20260105-143000-abcdef.jsonl"
    assert_clean("the rewritten session", old.read_text(encoding="utf-8"))
    assert SessionStore(space.state).load("last").feedback == "good"


def test_the_forms_a_secret_is_found_in() -> None:
    secret = "sk-live/0123+abc=def"
    redactor = Redactor([secret, "0123"])
    for form in (
        secret,
        base64.b64encode(secret.encode()).decode(),
        base64.urlsafe_b64encode(secret.encode()).decode(),
        quote(secret, safe=""),
        quote(secret, safe="").lower(),
        secret[:7] + "\n" + secret[7:],  # wrapped
        '"sk-live/0""123+abc=def"',  # split by the shell's quotes
        "'sk-live/01'\"'\"'23+abc=def'",
    ):
        assert redactor.text(form).strip("'\"=") == "***", form
    # "0123" is a secret too: every occurrence, also inside the longer one's text.
    assert redactor.text("x0123x") == "x***x"
    assert Redactor(["abc"]).text("abc") == "abc"  # shorter than MIN_SECRET_CHARS


ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"


@settings(deadline=None)  # no timed assertions: the shared cores are slow at times
@given(
    secret=st.text(alphabet=ALNUM, min_size=8, max_size=40),
    before=st.text(max_size=30),
    after=st.text(max_size=30),
    cuts=st.lists(
        st.tuples(st.integers(1, 39), st.sampled_from(["\n", '""', "' '", "\\"])), max_size=2
    ),
)
def test_a_secret_never_survives_redaction(
    secret: str, before: str, after: str, cuts: list[tuple[int, str]]
) -> None:
    # A placeholder key (an SDK's "not-needed") is never redacted, by design; Hypothesis
    # finds it among the module's string constants.
    assume(secret not in PLACEHOLDER_KEYS)
    split = secret
    for at, noise in sorted(cuts, reverse=True):
        if at < len(secret):
            split = split[:at] + noise + split[at:]
    redactor = Redactor([secret])
    for text in (before + secret + after, before + split + after):
        assert secret not in redactor.text(text)


def test_the_key_the_model_client_holds_is_redacted(space: Workspace) -> None:
    # `--api-key-env MY_LLM` reads a variable of no sensitive name: only the model knows it.
    import asyncio
    from types import SimpleNamespace

    from skillbook.runtime.agent import Agent
    from skillbook.runtime.approval import ExecPolicy
    from skillbook.runtime.providers.scripted import ScriptedModel

    key = "llm-key-Z8x6C4v2B0n8M6"
    model = ScriptedModel([call("exec", command=f"echo {key}"), f"the key is {key}"])
    model.client = SimpleNamespace(api_key=key)  # type: ignore[attr-defined]
    exp = Experience(space.book())
    agent = Agent(space.book(), model, recorder=exp.recorder(), exec_policy=ExecPolicy.allow_all())
    asyncio.run(agent.invoke(f"print {key}"))
    (session,) = (space.state / "sessions").glob("*.jsonl")
    text = session.read_text(encoding="utf-8")
    assert key not in text and text.count("***") >= 4
