"""``skillbook run`` and ``skillbook chat`` end to end, as subprocesses.

The model is the fake OpenAI-compatible server of ``tests/fake_openai_server.py`` on 127.0.0.1;
``curl`` is a stub on ``PATH`` printing canned weather. Spec §6.5 (§12 "Commands"):
a ``command-dispatch: tool`` command runs its tool with the raw arguments and no model.
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
from factories import skill_text, stub_bins, write_skill

pytestmark = pytest.mark.e2e


CANNED = "Shanghai: ☀️ +21°C"
COMMAND = 'curl -s "wttr.in/Shanghai?format=3"'
NOT_CONFIGURED = (
    "skillbook: no model configured: set SKILLBOOK_MODEL and OPENAI_API_KEY "
    "(or --base-url http://localhost:11434/v1 for Ollama), or ANTHROPIC_API_KEY"
)
MODEL_SKILL = skill_text(
    "weather",
    "Current weather for a city.",
    metadata={"openclaw": {"requires": {"bins": ["curl"]}}},
    body=f'Run `{COMMAND}` with exec (skill "weather") and report the result.\n',
)
DISPATCH_SKILL = skill_text(
    "weather",
    "Run a weather command directly.",
    command_dispatch="tool",
    command_tool="exec",
    body="Type the command after /weather.\n",
)


COMMAND_LINE = [sys.executable, "-m", "skillbook"]
#: The sources under test, not whichever skillbook the interpreter has installed.
SRC = Path(__file__).resolve().parents[2] / "src"


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.root = root
        home, bins = root / "home", root / "bin"
        (root / "bundled").mkdir()
        stub_bins(bins, ["curl"], f"#!/bin/sh\necho '{CANNED}'\n")
        self.env = {
            "HOME": str(home),
            "PATH": f"{bins}{os.pathsep}/usr/bin{os.pathsep}/bin",
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(root / "bundled"),
            "SKILLBOOK_STATE_DIR": str(root / "state"),
            "LANG": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONPATH": str(SRC),
        }
        self.model_ws = self.workspace("model-ws", MODEL_SKILL)
        self.dispatch_ws = self.workspace("dispatch-ws", DISPATCH_SKILL)

    def workspace(self, name: str, skill: str) -> Path:
        ws = Path(self.env["HOME"]) / name
        write_skill(ws / "skills" / "weather", text=skill)
        return ws

    def run(self, ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*COMMAND_LINE, "--workspace", str(ws), *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


def weather_script(location: str) -> list[Any]:
    """read the skill → exec its command → answer with the command's output."""

    def after_read(body: dict[str, Any]) -> list[Any]:
        assert body["messages"][-1]["content"] == MODEL_SKILL
        return [fake.Call("exec", {"command": COMMAND, "skill": "weather"})]

    def answer(body: dict[str, Any]) -> str:
        return "Weather report: " + str(body["messages"][-1]["content"]).strip()

    return [[fake.Call("read", {"path": location})], after_read, answer]


def test_run_dispatch_command_needs_no_model(box: Sandbox) -> None:
    """§6.5: `/weather <raw args>` calls exec with the raw text; no model configured."""
    proc = box.run(box.dispatch_ws, "run", f"/weather {COMMAND}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == CANNED + "\n"
    assert "→ exec curl" in proc.stderr and "[weather]" in proc.stderr

    as_json = json.loads(box.run(box.dispatch_ws, "run", "--json", f"/weather {COMMAND}").stdout)
    assert as_json["dispatched"] is True and as_json["model"] is None
    assert as_json["toolCalls"][0]["arguments"] == {"command": COMMAND, "skill": "weather"}

    # The raw text is the command: "Shanghai" alone is not one, and the tool says so.
    failed = box.run(box.dispatch_ws, "run", "/weather Shanghai")
    assert failed.returncode == 1
    assert failed.stdout.startswith("❌ exit code 127") and "Shanghai" in failed.stdout


GEO_JSON = '{"results":[{"name":"Shanghai","latitude":31.23,"longitude":121.47,"country":"China"}]}'
FORECAST_JSON = '{"current":{"temperature_2m":21.4,"weather_code":1}}'
#: A curl that answers like Open-Meteo (geocoding, then forecast) and logs its arguments.
OPEN_METEO_CURL = f"""#!/bin/sh
printf '%s\\n' "$@" >> "$CURL_LOG"
case "$*" in
  *geocoding-api*) echo '{GEO_JSON}' ;;
  *api.open-meteo.com*) echo '{FORECAST_JSON}' ;;
  *) echo "unexpected: $*" >&2; exit 22 ;;
esac
"""


def bundled_weather(box: Sandbox) -> tuple[Path, dict[str, str]]:
    """The package's own bundled skills, an empty workspace and an Open-Meteo curl."""
    bins = box.root / "meteo-bin"
    stub_bins(bins, ["curl"], OPEN_METEO_CURL)
    env = {k: v for k, v in box.env.items() if k != "SKILLBOOK_BUNDLED_SKILLS_DIR"}
    env["PATH"] = f"{bins}{os.pathsep}{env['PATH']}"
    env["CURL_LOG"] = str(box.root / "curl.log")
    ws = box.root / "empty-ws"
    ws.mkdir()
    return ws, env


def test_run_bundled_weather_command_exec_needs_no_model(box: Sandbox) -> None:
    """`/weather Shanghai` runs the skill's own forecast.sh (metadata.skillbook.commandExec)
    with the place as $1: no model is configured, and the stub's output is the reply."""
    ws, box.env = bundled_weather(box)
    proc = box.run(ws, "run", "/weather Shanghai")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"# Shanghai, China (31.23,121.47)\n{FORECAST_JSON}\n"
    assert '→ exec ./scripts/forecast.sh "$1"  [weather]' in proc.stderr
    log = (box.root / "curl.log").read_text(encoding="utf-8").splitlines()
    assert "name=Shanghai" in log and "latitude=31.23" in log

    as_json = json.loads(box.run(ws, "run", "--json", "/weather Shanghai").stdout)
    assert as_json["dispatched"] is True and as_json["model"] is None
    assert as_json["command"] == "weather" and as_json["skill"] == "weather"
    assert as_json["toolCalls"][0]["arguments"] == {
        "command": './scripts/forecast.sh "$1"',
        "skill": "weather",
    }

    # The text is data: nothing in it runs, all of it reaches the geocoder as the name.
    evil = "Shanghai; touch pwned $(touch pwned2)"
    box.run(ws, "run", f"/weather {evil}")
    assert f"name={evil}" in (box.root / "curl.log").read_text(encoding="utf-8").splitlines()
    assert not list(box.root.rglob("pwned*"))

    # Nothing after the command: the script's usage, as a failed command.
    bare = box.run(ws, "run", "/weather")
    assert bare.returncode == 1
    assert bare.stdout.startswith("❌ exit code 2\nUsage: forecast.sh PLACE")


def test_run_without_a_model_prints_one_line_and_exits_2(box: Sandbox) -> None:
    proc = box.run(box.model_ws, "run", "what's the weather in Shanghai?")
    assert proc.returncode == 2
    assert proc.stderr == NOT_CONFIGURED + "\n"
    assert proc.stdout == ""


def test_run_against_an_openai_compatible_server(box: Sandbox) -> None:
    location = "~/model-ws/skills/weather/SKILL.md"
    with fake.FakeOpenAIServer(weather_script(location)) as server:
        proc = box.run(
            box.model_ws,
            "run",
            "what's the weather in Shanghai?",
            "--base-url",
            server.base_url,
            "--model",
            "fake-model",
            "--yes",
            # The model is scripted for the task only: no draft's words asked of it.
            "--no-refine",
        )
    assert server.errors == [], server.errors[0] if server.errors else ""
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"Weather report: {CANNED}\n"
    assert "→ read ~/…/weather/SKILL.md" in proc.stderr
    assert f"→ exec {COMMAND}  [weather]" in proc.stderr
    assert f"  ← {CANNED}" in proc.stderr
    system = server.requests[0]["messages"][0]["content"]
    assert "## Skills (mandatory)" in system and f"<location>{location}</location>" in system
    assert server.requests[0]["model"] == "fake-model"


def test_run_json_and_env_configuration(box: Sandbox) -> None:
    with fake.FakeOpenAIServer(["Plain answer."]) as server:
        box.env.update(
            {"SKILLBOOK_BASE_URL": server.base_url, "SKILLBOOK_MODEL": "m", "MY_KEY": "sekret"}
        )
        proc = box.run(box.model_ws, "run", "--json", "--api-key-env", "MY_KEY", "hello")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["text"] == "Plain answer." and out["dispatched"] is False
    assert (out["model"], out["steps"], out["stop"], out["toolCalls"]) == ("m", 1, "answer", [])
    assert server.headers[0]["authorization"] == "Bearer sekret"


def test_chat_in_a_terminal(box: Sandbox) -> None:
    pexpect = pytest.importorskip("pexpect")
    pytest.importorskip("prompt_toolkit")
    location = "~/model-ws/skills/weather/SKILL.md"
    slow = fake.Reply("x" * 400, delay_s=0.05)
    script = [*weather_script(location), slow, "Still here."]
    with fake.FakeOpenAIServer(script) as server:
        env = {**box.env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
        # --no-refine: the model is scripted for the chat only, not for a draft's words.
        args = [*COMMAND_LINE[1:], "--workspace", str(box.model_ws), "chat", "--no-refine"]
        args += ["--base-url", server.base_url, "--model", "fake-model"]
        child = pexpect.spawn(
            COMMAND_LINE[0], args, env=env, encoding="utf-8", timeout=30, dimensions=(40, 160)
        )
        try:
            child.expect_exact("skillbook chat · model fake-model · 1/1 skills ready")
            child.expect_exact("›")
            child.sendline("what's the weather in Shanghai?")
            child.expect_exact("→ read ~/…/weather/SKILL.md")
            # On a terminal the chat asks before the model's command runs (the default).
            child.expect_exact("? The model wants to run this command as skill weather:")
            child.expect_exact("Run it? [y/N]")
            child.sendline("y")
            child.expect_exact(f"→ exec {COMMAND}")
            child.expect_exact(f"← {CANNED}")
            child.expect_exact(f"Weather report: {CANNED}")
            child.expect_exact("›")
            child.sendline("/skills")
            child.expect_exact("Skills (1/1 ready)")
            child.expect(r"ready\s+weather\s+/weather")
            child.expect_exact("›")
            # Ctrl-C while the answer streams cancels that answer, not the chat.
            child.sendline("tell me a long story")
            child.expect_exact("xxxxx")
            child.sendintr()
            child.expect_exact("[cancelled]")
            child.expect_exact("›")
            child.sendline("still there?")
            child.expect_exact("Still here.")
            child.expect_exact("›")
            child.sendeof()
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    assert child.exitstatus == 0, child.before
    assert server.errors == []
    # The turn after the cancelled one carries the earlier, completed exchange only.
    last = server.requests[-1]["messages"]
    assert [m["role"] for m in last][:2] == ["system", "user"]
    assert last[-1] == {"role": "user", "content": "still there?"}
    assert not any(m.get("content") == "tell me a long story" for m in last)


def test_chat_without_a_model_still_dispatches(box: Sandbox) -> None:
    """No model: the one-line how-to, yet tool-dispatch commands and /skills work."""
    pexpect = pytest.importorskip("pexpect")
    pytest.importorskip("prompt_toolkit")
    env = {**box.env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    args = [*COMMAND_LINE[1:], "--workspace", str(box.dispatch_ws), "chat"]
    child = pexpect.spawn(COMMAND_LINE[0], args, env=env, encoding="utf-8", timeout=30)
    try:
        child.expect_exact("model none")
        child.expect_exact(
            NOT_CONFIGURED
            + "; slash commands that run a tool or a command, and /skills, still work"
        )
        child.expect_exact("›")
        child.sendline(f"/weather {COMMAND}")
        child.expect_exact(f"\n{CANNED}")
        child.expect_exact("›")
        child.sendline("hello?")
        child.expect_exact(NOT_CONFIGURED)
        child.expect_exact("›")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_chat_reads_piped_input_without_a_terminal(box: Sandbox) -> None:
    proc = subprocess.run(
        [*COMMAND_LINE, "--workspace", str(box.dispatch_ws), "chat"],
        input=f"/skills\n/weather {COMMAND}\n",
        cwd=box.root,
        env=box.env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "Skills (1/1 ready)" in lines
    assert any(line.split() == ["✓", "ready", "weather", "/weather"] for line in lines)
    assert lines[-1] == CANNED


# --------------------------------------------------------------------------- --confirm

DECLINED = "exec: the user declined to run this command"
REFUSED = (
    "exec: not run: commands need the user's approval and no one could be asked (no "
    "terminal). The user can allow them with --yes, or allow this one with a command "
    "prefix in skills.exec.allow or skills.entries.<skill>.exec.allow."
)
NO_TERMINAL = (
    "skillbook: stdin is not a terminal, so commands the model asks to run are refused; "
    "run them anyway with --yes, or allow command prefixes in skills.exec.allow or "
    "skills.entries.<skill>.exec.allow"
)


def answer_after_decline(text: str, expected: str = DECLINED) -> Any:
    def answer(body: dict[str, Any]) -> str:
        results = [m for m in body["messages"] if m["role"] == "tool"]
        assert results and all(m["content"] == expected for m in results), results
        return text

    return answer


def run_piped(
    box: Sandbox, server: Any, *flags: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    model = ["--base-url", server.base_url, "--model", "m"]
    return subprocess.run(
        [*COMMAND_LINE, "--workspace", str(box.model_ws), "run", *flags, *model, "make"],
        input="y\ny\n",
        cwd=box.root,
        env=env or box.env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


def test_chat_confirm_asks_before_each_command(box: Sandbox) -> None:
    """`chat --confirm`: "n" runs nothing and tells the model; "y" runs the command."""
    pexpect = pytest.importorskip("pexpect")
    pytest.importorskip("prompt_toolkit")
    marker = box.root / "pwned"
    touch = f"touch {marker}"
    script = [
        [fake.Call("exec", {"command": touch, "skill": "weather"})],
        answer_after_decline("Not run."),
        [fake.Call("exec", {"command": COMMAND, "skill": "weather"})],
        lambda body: "Got: " + str(body["messages"][-1]["content"]).strip(),
    ]
    with fake.FakeOpenAIServer(script) as server:
        env = {**box.env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
        args = [*COMMAND_LINE[1:], "--workspace", str(box.model_ws), "chat", "--confirm"]
        args.append("--no-refine")  # the model is scripted for the chat only
        args += ["--base-url", server.base_url, "--model", "fake-model"]
        child = pexpect.spawn(
            COMMAND_LINE[0], args, env=env, encoding="utf-8", timeout=30, dimensions=(40, 200)
        )
        try:
            child.expect_exact("›")
            child.sendline("make a file")
            child.expect_exact("? The model wants to run this command as skill weather:")
            child.expect_exact(f"    {touch}")
            child.expect_exact("Run it? [y/N]")
            child.sendline("n")
            child.expect_exact(f"✗ declined: {touch}  [weather]")
            child.expect_exact("Not run.")
            child.expect_exact("›")
            child.sendline("weather?")
            child.expect_exact(f"    {COMMAND}")
            child.expect_exact("Run it? [y/N]")
            child.sendline("y")
            child.expect_exact(f"→ exec {COMMAND}  [weather]")
            child.expect_exact(f"Got: {CANNED}")
            child.expect_exact("›")
            child.sendeof()
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    assert child.exitstatus == 0, child.before
    assert server.errors == [], server.errors[0] if server.errors else ""
    assert not marker.exists()
    assert len(server.requests) == 4


@pytest.mark.parametrize("how", ["default", "flag", "env"])
def test_run_without_a_terminal_refuses_the_models_commands(box: Sandbox, how: str) -> None:
    """With piped stdin nobody can be asked: a piped "y" is not an answer, every command
    is refused (the model is told why), and stderr explains it once. Also with
    `--confirm` or SKILLBOOK_CONFIRM_EXEC=1."""
    markers = [box.root / "one", box.root / "two"]
    calls = [fake.Call("exec", {"command": f"touch {m}"}) for m in markers]
    with fake.FakeOpenAIServer([calls, answer_after_decline("Refused.", REFUSED)]) as server:
        flags = ["--confirm"] if how == "flag" else []
        env = {**box.env, "SKILLBOOK_CONFIRM_EXEC": "1"} if how == "env" else box.env
        proc = run_piped(box, server, *flags, env=env)
    assert server.errors == [], server.errors[0] if server.errors else ""
    # Nothing the model wanted ran: the answer is printed, the exit code says "not done".
    assert proc.returncode == 5, proc.stderr
    assert proc.stdout == "Refused.\n"
    assert proc.stderr.count(NO_TERMINAL) == 1
    assert proc.stderr.count("✗ refused: touch") == 2
    assert proc.stderr.endswith(NOT_DONE.format(2) + "\n")
    assert not any(m.exists() for m in markers)


NOT_DONE = (
    "skillbook: not done: none of the {} commands the model asked to run ran (refused or declined)"
)


def test_run_exit_codes_tell_done_from_not_done(box: Sandbox) -> None:
    """Issue 18 §6: a script sees from the exit code alone whether the request was done.
    0 answered, 3 the model request failed (also after tool calls), 4 the step limit
    stopped the model, 5 every command refused; `--json` names the same outcome."""
    model = ["--model", "m"]
    with fake.FakeOpenAIServer(["Hello."]) as server:
        done = box.run(box.model_ws, "run", "--json", "--base-url", server.base_url, *model, "hi")
    assert done.returncode == 0 and json.loads(done.stdout)["outcome"] == "answered"

    read = fake.Call("read", {"path": "~/model-ws/skills/weather/SKILL.md"})
    looping = [[read], [read], [read]]
    with fake.FakeOpenAIServer(looping) as server:
        limit = box.run(
            box.model_ws, "run", "--base-url", server.base_url, *model, "--max-steps", "2", "go"
        )
        stopped = box.run(
            box.model_ws,
            "run",
            "--json",
            "--base-url",
            server.base_url,
            *model,
            "--max-steps",
            "1",
            "go",
        )
    assert limit.returncode == 4, limit.stderr
    assert "[stopped after 2 steps" in limit.stdout
    assert stopped.returncode == 4 and json.loads(stopped.stdout)["outcome"] == "max-steps"

    scripts: list[list[fake.Turn]] = [
        [fake.HttpError(400, "bad request")],
        [[read], fake.HttpError(400, "gone")],
    ]
    for script in scripts:
        with fake.FakeOpenAIServer(script) as server:
            failed = box.run(box.model_ws, "run", "--base-url", server.base_url, *model, "hi")
        assert failed.returncode == 3, failed.stderr
        assert failed.stderr.splitlines()[-1].startswith("skillbook: model request failed: ")
        assert failed.stdout == ""
    with fake.FakeOpenAIServer([fake.HttpError(400, "bad request")]) as server:
        as_json = box.run(
            box.model_ws, "run", "--json", "--base-url", server.base_url, *model, "hi"
        )
    assert as_json.returncode == 3
    assert json.loads(as_json.stdout)["code"] == "model-error"

    refused = [fake.Call("exec", {"command": "true"}), fake.Call("exec", {"command": "true"})]
    with fake.FakeOpenAIServer([refused, "Could not."]) as server:
        out = run_piped(box, server, "--json")
    assert out.returncode == 5, out.stderr
    result = json.loads(out.stdout)
    assert result["outcome"] == "refused"
    assert [c["declined"] for c in result["toolCalls"]] == [True, True]


def test_run_exit_codes_with_an_anthropic_model(box: Sandbox) -> None:
    """The same codes through the Anthropic provider: a failed request is 3, the step
    limit 4."""
    from fake_anthropic_server import FakeAnthropicServer

    box.env["ANTHROPIC_API_KEY"] = "test-key"
    model = ["--provider", "anthropic", "--model", "claude-fake"]
    with FakeAnthropicServer([fake.HttpError(400, "bad request")]) as server:
        failed = box.run(box.model_ws, "run", "--base-url", server.base_url, *model, "hi")
    assert failed.returncode == 3, failed.stderr
    assert failed.stderr.startswith("skillbook: model request failed: ")
    read = fake.Call("read", {"path": "~/model-ws/skills/weather/SKILL.md"})
    with FakeAnthropicServer([[read], [read]]) as server:
        limit = box.run(
            box.model_ws, "run", "--base-url", server.base_url, *model, "--max-steps", "2", "go"
        )
    assert limit.returncode == 4, limit.stderr
    with FakeAnthropicServer(["Done."]) as server:
        done = box.run(box.model_ws, "run", "--base-url", server.base_url, *model, "hi")
    assert done.returncode == 0 and done.stdout == "Done.\n", done.stderr


def test_run_yes_runs_the_models_commands(box: Sandbox) -> None:
    marker = box.root / "made"
    calls = [fake.Call("exec", {"command": f"touch {marker} && echo made"})]
    with fake.FakeOpenAIServer([calls, "Done."]) as server:
        proc = run_piped(box, server, "-y")
    assert proc.returncode == 0, proc.stderr
    assert marker.exists() and "← made" in proc.stderr and "refused" not in proc.stderr


def test_run_with_a_config_allowlist_needs_no_terminal(box: Sandbox) -> None:
    config = box.root / "skillbook.json"
    allow = {"weather": {"exec": {"allow": ["curl -s wttr.in/*"]}}}
    config.write_text(json.dumps({"skills": {"entries": allow}}))
    marker = box.root / "pwned"
    calls = [
        fake.Call("exec", {"command": COMMAND, "skill": "weather"}),
        fake.Call("exec", {"command": f"{COMMAND}; touch {marker}", "skill": "weather"}),
    ]
    with fake.FakeOpenAIServer([calls, "Checked."]) as server:
        proc = run_piped(box, server, env={**box.env, "SKILLBOOK_CONFIG_PATH": str(config)})
    assert proc.returncode == 0, proc.stderr
    assert f"→ exec {COMMAND}  [weather]" in proc.stderr and f"← {CANNED}" in proc.stderr
    assert proc.stderr.count("✗ refused: curl") == 1 and not marker.exists()
    results = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert results == [CANNED + "\n", REFUSED]


def test_yes_and_confirm_conflict_and_no_confirm_is_deprecated(box: Sandbox) -> None:
    proc = box.run(box.model_ws, "run", "--yes", "--confirm", "hi")
    assert proc.returncode == 2
    assert proc.stderr == "skillbook: --yes and --confirm contradict each other: pass one of them\n"
    with fake.FakeOpenAIServer(["Hello."]) as server:
        proc = box.run(
            box.model_ws, "run", "--no-confirm", "--base-url", server.base_url, "-m", "m", "hi"
        )
    assert proc.returncode == 0 and proc.stdout == "Hello.\n"
    assert proc.stderr.startswith(
        "skillbook: --no-confirm (or SKILLBOOK_CONFIRM_EXEC=0) is deprecated"
    )


def test_run_on_a_terminal_asks_and_shows_hidden_characters(box: Sandbox) -> None:
    """The default on a terminal: the question shows the command with its invisible
    characters escaped (a bidi override, a zero-width space, an ESC); "n" runs nothing."""
    pexpect = pytest.importorskip("pexpect")
    marker = box.root / "pwned"
    sneaky = f"touch {marker} #\u202e\u200b\x1b[2J"
    calls = [fake.Call("exec", {"command": sneaky})]
    with fake.FakeOpenAIServer([calls, answer_after_decline("Not run.")]) as server:
        args = [*COMMAND_LINE[1:], "--workspace", str(box.model_ws), "run"]
        args += ["--base-url", server.base_url, "--model", "m", "make a file"]
        env = {**box.env, "TERM": "xterm"}
        child = pexpect.spawn(
            COMMAND_LINE[0], args, env=env, encoding="utf-8", timeout=30, dimensions=(40, 200)
        )
        try:
            child.expect_exact("? The model wants to run this command with no skill:")
            child.expect_exact(f"    touch {marker} #\\u202e\\u200b\\x1b[2J")
            child.expect_exact("Run it? [y/N]")
            child.sendline("n")
            child.expect_exact("Not run.")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    # Declined, so nothing ran: not done (5).
    assert child.exitstatus == 5, child.before
    assert not marker.exists()
