"""The ``read`` and ``exec`` tools, with real files and real subprocesses.

Includes THE LEAK TEST (openclaw#78528, PR #36293): two skills run concurrently
each see only their own key, and the Python process's ``os.environ`` never has any.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from factories import group_alive, wait_until, write_skill

from skillbook.config.file import Config
from skillbook.model import (
    Frontmatter,
    InvocationPolicy,
    ParsedSkillFile,
    Requires,
    Skill,
    SkillMetadata,
)
from skillbook.runtime.tools import (
    ExecTool,
    ReadTool,
    Tool,
    ToolResult,
)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="exec uses /bin/sh and process groups")

ALPHA = "alpha-5ecr3t-value-111"
BETA = "beta-5ecr3t-value-222"


def make_skill(
    folder: Path, name: str, *, body: str = "", primary: str | None = None, key: str | None = None
) -> Skill:
    write_skill(folder, name, f"{name} things", body=body)
    meta = SkillMetadata(skill_key=key, primary_env=primary, requires=Requires())
    parsed = ParsedSkillFile(
        frontmatter=Frontmatter(),
        body=body,
        body_line=5,
        metadata=meta,
        invocation=InvocationPolicy(),
        dispatch=None,
    )
    return Skill(
        name=name,
        description=f"{name} things",
        file_path=folder / "SKILL.md",
        base_dir=folder,
        source="openclaw-workspace",
        parsed=parsed,
    )


def env_snapshot() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}


@pytest.fixture
def weather(tmp_path: Path) -> Skill:
    sk = make_skill(
        tmp_path / "skills" / "weather",
        "weather",
        body="Run `{baseDir}/scripts/forecast.sh` for a forecast.\n",
        primary="WEATHER_API_KEY",
    )
    (sk.base_dir / "scripts").mkdir()
    (sk.base_dir / "scripts" / "forecast.sh").write_text("#!/bin/sh\necho sunny\n")
    return sk


# =========================================================================== read


def test_read_skill_md_substitutes_base_dir(weather: Skill) -> None:
    result = ReadTool([weather]).run({"path": str(weather.file_path)})
    assert result == ToolResult(
        "---\nname: weather\ndescription: weather things\n---\n"
        f"Run `{weather.base_dir}/scripts/forecast.sh` for a forecast.\n",
        False,
    )


def test_read_file_in_skill_folder(weather: Skill) -> None:
    result = ReadTool([weather]).run({"path": str(weather.base_dir / "scripts" / "forecast.sh")})
    assert not result.is_error
    assert result.text == "#!/bin/sh\necho sunny\n"


def test_read_expands_tilde(weather: Skill, tmp_path: Path) -> None:
    result = ReadTool([weather], home=tmp_path).run({"path": "~/skills/weather/SKILL.md"})
    assert not result.is_error
    assert "name: weather" in result.text


def test_read_relative_path_needs_a_workspace(weather: Skill, tmp_path: Path) -> None:
    refused = ReadTool([weather]).run({"path": "skills/weather/SKILL.md"})
    assert refused.is_error and "absolute path" in refused.text
    ok = ReadTool([weather], workspace=tmp_path).run({"path": "skills/weather/SKILL.md"})
    assert not ok.is_error and "name: weather" in ok.text


def test_read_offset_and_limit(weather: Skill) -> None:
    (weather.base_dir / "lines.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    tool = ReadTool([weather])
    path = str(weather.base_dir / "lines.txt")
    result = tool.run({"path": path, "offset": 3, "limit": 2})
    assert (
        result.text == "line 3\nline 4\n\n[more lines follow; call read with offset=5 to continue]"
    )
    tail = tool.run({"path": path, "offset": 9})
    assert tail.text == "line 9\nline 10\n"
    exact = tool.run({"path": path, "offset": 9, "limit": 2})
    assert exact.text == "line 9\nline 10\n"
    past = tool.run({"path": path, "offset": 11})
    assert past.is_error and "past the end" in past.text and "10 lines" in past.text
    assert tool.run({"path": path, "offset": 2.0, "limit": 1}).text.startswith("line 2\n")


def test_read_size_cap_says_how_to_continue(weather: Skill) -> None:
    (weather.base_dir / "big.txt").write_text("".join(f"{i:04d} {'x' * 44}\n" for i in range(100)))
    tool = ReadTool([weather], max_bytes=500)  # 50 bytes a line: 10 lines fit
    result = tool.run({"path": str(weather.base_dir / "big.txt")})
    assert not result.is_error
    shown, note = result.text.split("\n\n[")
    assert len(shown.encode()) <= 500 and shown.count("\n") == 9
    assert "cut at 500 bytes (lines 1-10)" in note and "offset=11" in note
    more = tool.run({"path": str(weather.base_dir / "big.txt"), "offset": 11})
    assert more.text.startswith("0010 ")


def test_read_cuts_a_single_overlong_line(weather: Skill) -> None:
    (weather.base_dir / "one.txt").write_text("é" * 1000 + "\nnext\n")
    result = ReadTool([weather], max_bytes=101).run({"path": str(weather.base_dir / "one.txt")})
    first = result.text.split("\n")[0]
    assert first == "é" * 50  # 100 bytes; a split character is not shown
    assert "line 1 is longer than 101 bytes" in result.text and "offset=2" in result.text


def test_read_refuses_binary(weather: Skill) -> None:
    (weather.base_dir / "blob.bin").write_bytes(b"PK\x03\x04\x00\x00binary")
    result = ReadTool([weather]).run({"path": str(weather.base_dir / "blob.bin")})
    assert result.is_error and "binary" in result.text


def test_read_refuses_path_outside_skills(weather: Skill, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("top secret")
    tool = ReadTool([weather])
    for path in (
        str(tmp_path / "secret.txt"),
        "/etc/passwd",
        str(weather.base_dir / ".." / ".." / "secret.txt"),
        f"{weather.base_dir}/scripts/../../../secret.txt",
        str(weather.base_dir) + "-evil/SKILL.md",
    ):
        result = tool.run({"path": path})
        assert result.is_error, path
        assert "not inside a skill folder" in result.text
        assert "top secret" not in result.text


def test_read_refuses_symlink_escaping_the_folder(weather: Skill, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("top secret")
    (weather.base_dir / "link.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (weather.base_dir / "linkdir").symlink_to(tmp_path / "outside")
    tool = ReadTool([weather])
    for path in (weather.base_dir / "link.txt", weather.base_dir / "linkdir" / "secret.txt"):
        result = tool.run({"path": str(path)})
        assert result.is_error and "top secret" not in result.text


def test_read_follows_a_symlink_inside_the_folder(weather: Skill) -> None:
    (weather.base_dir / "alias.sh").symlink_to(weather.base_dir / "scripts" / "forecast.sh")
    result = ReadTool([weather]).run({"path": str(weather.base_dir / "alias.sh")})
    assert result.text == "#!/bin/sh\necho sunny\n"


def test_read_through_a_symlinked_skill_folder(tmp_path: Path) -> None:
    real = make_skill(tmp_path / "store" / "notes", "notes", body="See {baseDir}/x\n")
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "notes").symlink_to(real.base_dir)
    linked = make_skill(tmp_path / "skills" / "notes", "notes", body="See {baseDir}/x\n")
    result = ReadTool([linked]).run({"path": str(linked.file_path)})
    assert not result.is_error
    assert f"See {linked.base_dir}/x" in result.text


def test_read_errors_for_directory_missing_file_and_bad_arguments(weather: Skill) -> None:
    tool = ReadTool([weather])
    listing = tool.run({"path": str(weather.base_dir)})
    assert listing.is_error and "is a directory" in listing.text and "SKILL.md" in listing.text
    assert "scripts/" in listing.text
    missing = tool.run({"path": str(weather.base_dir / "nope.md")})
    assert missing.is_error and "No such file" in missing.text
    for args in (
        {},
        {"path": 3},
        {"path": "  "},
        {"path": str(weather.file_path), "offset": 0},
        {"path": str(weather.file_path), "offset": True},
        {"path": str(weather.file_path), "offset": 1.5},
        {"file_path": str(weather.file_path)},
    ):
        result = tool.run(args)
        assert result.is_error and result.text.startswith("read: "), args


def test_read_refuses_fifo_without_hanging(weather: Skill) -> None:
    os.mkfifo(weather.base_dir / "pipe")
    result = ReadTool([weather]).run({"path": str(weather.base_dir / "pipe")})
    assert result.is_error and "not a regular file" in result.text


def test_read_arun(weather: Skill) -> None:
    result = asyncio.run(ReadTool([weather]).arun({"path": str(weather.file_path)}))
    assert "name: weather" in result.text


# =========================================================================== exec


def exec_tool(
    skills: list[Skill], workspace: Path, cfg: dict[str, Any] | None = None, **kw: Any
) -> ExecTool:
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C"}
    return ExecTool(
        skills, config=Config.from_mapping(cfg or {}), base_env=base, workspace=workspace, **kw
    )


def test_exec_cwd_defaults(weather: Skill, tmp_path: Path) -> None:
    tool = exec_tool([weather], tmp_path)
    assert tool.run({"command": "pwd", "skill": "weather"}).text == f"{weather.base_dir}\n"
    assert tool.run({"command": "pwd"}).text == f"{tmp_path}\n"
    assert tool.run({"command": "pwd", "skill": "weather", "cwd": "scripts"}).text == (
        f"{weather.base_dir / 'scripts'}\n"
    )
    assert (
        tool.run({"command": "pwd", "cwd": str(weather.base_dir)}).text == f"{weather.base_dir}\n"
    )
    missing = tool.run({"command": "pwd", "cwd": "nowhere"})
    assert missing.is_error and "does not exist" in missing.text


def test_exec_finds_skill_by_key(tmp_path: Path) -> None:
    sk = make_skill(tmp_path / "s" / "wpro", "weather-pro", key="weather", primary="W_API_KEY")
    tool = exec_tool([sk], tmp_path, {"skills": {"entries": {"weather": {"apiKey": ALPHA}}}})
    for name in ("weather-pro", "weather"):
        result = tool.run(
            {"command": 'test "$W_API_KEY" = ' + ALPHA + " && echo ok", "skill": name}
        )
        assert result == ToolResult("ok\n", False)


def test_exec_non_zero_exit(tmp_path: Path) -> None:
    result = exec_tool([], tmp_path).run({"command": "echo out; echo oops >&2; exit 7"})
    assert result.is_error
    assert result.text == "exit code 7\nout\noops\n"


def test_exec_killed_by_signal_and_no_output(tmp_path: Path) -> None:
    tool = exec_tool([], tmp_path)
    killed = tool.run({"command": "kill -9 $$"})
    assert killed.is_error and killed.text == "killed by signal SIGKILL"
    assert tool.run({"command": "true"}) == ToolResult("(no output)", False)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_exec_timeout_kills_the_process_group(tmp_path: Path, mode: str) -> None:
    pidfile = tmp_path / "pgid"
    command = f"echo $$ > {pidfile}; echo started; sleep 5 & sleep 5; echo never"
    tool = exec_tool([], tmp_path)
    started = time.monotonic()
    if mode == "sync":
        result = tool.run({"command": command, "timeout": 0.5})
    else:
        result = asyncio.run(tool.arun({"command": command, "timeout": 0.5}))
    elapsed = time.monotonic() - started
    assert elapsed < 3, elapsed
    assert result.is_error
    assert result.text.startswith("timed out after 0.5 s")
    assert "started" in result.text and "never" not in result.text
    pgid = int(pidfile.read_text())
    assert wait_until(lambda: not group_alive(pgid), 3.0)


def test_exec_timeout_default_comes_from_the_tool(tmp_path: Path) -> None:
    result = exec_tool([], tmp_path, timeout_s=0.3).run({"command": "sleep 5"})
    assert result.text.startswith("timed out after 0.3 s")


def test_exec_output_cap(tmp_path: Path) -> None:
    tool = exec_tool([], tmp_path, max_output=1000)
    result = tool.run({"command": "head -c 100000 /dev/zero | tr '\\0' x"})
    assert not result.is_error
    body, note = result.text.rsplit("\n", 1)
    assert body == "x" * 1000
    assert note == (
        "[output truncated: showed the first 1000 of 100000 bytes; "
        "redirect to a file and look at parts of it (head, tail, grep, sed -n)]"
    )


def test_exec_redacts_secrets(weather: Skill, tmp_path: Path) -> None:
    cfg = {"skills": {"entries": {"weather": {"apiKey": ALPHA, "env": {"UNITS": "metric"}}}}}
    tool = exec_tool([weather], tmp_path, cfg)
    result = tool.run(
        {
            "command": 'echo "key=$WEATHER_API_KEY units=$UNITS"; echo "$WEATHER_API_KEY" >&2; exit 2',
            "skill": "weather",
        }
    )
    assert result.text == "exit code 2\nkey=*** units=metric\n***\n"
    assert ALPHA not in result.text


def test_exec_redaction_survives_the_output_cap(weather: Skill, tmp_path: Path) -> None:
    cfg = {"skills": {"entries": {"weather": {"apiKey": ALPHA}}}}
    tool = exec_tool([weather], tmp_path, cfg, max_output=100)
    result = tool.run({"command": 'printf "%0995d$WEATHER_API_KEY" 0', "skill": "weather"})
    tool_small = exec_tool([weather], tmp_path, cfg, max_output=1000)
    straddling = tool_small.run(
        {"command": 'printf "%0995d$WEATHER_API_KEY" 0', "skill": "weather"}
    )
    for r in (result, straddling):
        assert ALPHA[:5] not in r.text and "output truncated" in r.text


def test_exec_secret_error_is_a_result_without_the_value(weather: Skill, tmp_path: Path) -> None:
    ref = {"source": "env", "provider": "default", "id": "MISSING_VAULT_VAR"}
    tool = exec_tool([weather], tmp_path, {"skills": {"entries": {"weather": {"apiKey": ref}}}})
    result = tool.run({"command": "echo hi", "skill": "weather"})
    assert result.is_error
    assert "skills.entries.weather.apiKey" in result.text
    assert "env:default:MISSING_VAULT_VAR" in result.text


def test_exec_bad_arguments_and_unknown_skill(weather: Skill, tmp_path: Path) -> None:
    tool = exec_tool([weather], tmp_path)
    for args in (
        {},
        {"command": ""},
        {"command": 3},
        {"command": "true", "timeout": 0},
        {"command": "true", "timeout": "5"},
        {"command": "true", "shell": "bash"},
    ):
        result = tool.run(args)
        assert result.is_error and result.text.startswith("exec: "), args
    unknown = tool.run({"command": "true", "skill": "nope"})
    assert unknown.is_error and "no skill 'nope'" in unknown.text and "weather" in unknown.text


def test_exec_missing_shell_is_a_result(tmp_path: Path) -> None:
    tool = exec_tool([], tmp_path, shell=str(tmp_path / "no-such-shell"))
    for result in (tool.run({"command": "true"}), asyncio.run(tool.arun({"command": "true"}))):
        assert result.is_error and "cannot start" in result.text


def test_exec_arun_basic(weather: Skill, tmp_path: Path) -> None:
    tool = exec_tool([weather], tmp_path)

    async def main() -> list[ToolResult]:
        return list(
            await asyncio.gather(
                tool.arun({"command": "pwd", "skill": "weather"}),
                tool.arun({"command": "exit 4"}),
                tool.arun({"command": "sleep 5 & echo bg"}),
            )
        )

    pwd, failed, background = asyncio.run(main())
    assert pwd.text == f"{weather.base_dir}\n"
    assert failed == ToolResult("exit code 4", True)
    assert background == ToolResult("bg\n", False)


def test_exec_background_child_does_not_block(tmp_path: Path) -> None:
    started = time.monotonic()
    result = exec_tool([], tmp_path).run({"command": "sleep 5 & echo bg"})
    assert result == ToolResult("bg\n", False)
    assert time.monotonic() - started < 3


# =========================================================================== THE LEAK TEST


@pytest.fixture
def two_skills(tmp_path: Path) -> tuple[ExecTool, Skill, Skill]:
    alpha = make_skill(tmp_path / "skills" / "alpha", "alpha", primary="ALPHA_API_KEY")
    beta = make_skill(tmp_path / "skills" / "beta", "beta", primary="BETA_API_KEY")
    cfg = {"skills": {"entries": {"alpha": {"apiKey": ALPHA}, "beta": {"apiKey": BETA}}}}
    # The base is the real process environment: what an agent would pass.
    tool = ExecTool(
        [alpha, beta], config=Config.from_mapping(cfg), base_env=os.environ, workspace=tmp_path
    )
    return tool, alpha, beta


CHECK = (
    f'sleep 0.3; env; test "$ALPHA_API_KEY" = {ALPHA} && echo ALPHA_MATCH; '
    f'test "$BETA_API_KEY" = {BETA} && echo BETA_MATCH; true'
)


def _assert_isolated(name: str, result: ToolResult) -> None:
    assert not result.is_error, result.text
    own, other = ("ALPHA", "BETA") if name == "alpha" else ("BETA", "ALPHA")
    assert f"{own}_API_KEY=***" in result.text
    assert f"{own}_MATCH" in result.text
    assert f"{other}_API_KEY" not in result.text and f"{other}_MATCH" not in result.text
    assert ALPHA not in result.text and BETA not in result.text


class EnvironWatch:
    """Samples ``os.environ`` in a thread while commands run."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.seen |= {k for k in ("ALPHA_API_KEY", "BETA_API_KEY") if k in os.environ}
            self.seen |= (
                {"value"} if any(v in (ALPHA, BETA) for v in os.environ.values()) else set()
            )
            self.samples += 1
            time.sleep(0.005)

    def __enter__(self) -> EnvironWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def test_leak_concurrent_threads(two_skills: tuple[ExecTool, Skill, Skill]) -> None:
    """#78528: each skill's command sees only its own key; os.environ never has either."""
    tool, _, _ = two_skills
    before = env_snapshot()
    names = ["alpha", "beta"] * 4
    with EnvironWatch() as watch, ThreadPoolExecutor(max_workers=len(names)) as pool:
        started = time.monotonic()
        results = list(pool.map(lambda n: tool.run({"command": CHECK, "skill": n}), names))
        elapsed = time.monotonic() - started
    assert elapsed < 0.3 * len(names)  # they did overlap
    for name, result in zip(names, results, strict=True):
        _assert_isolated(name, result)
    assert watch.samples > 0 and watch.seen == set()
    assert env_snapshot() == before
    plain = tool.run({"command": CHECK})
    assert "ALPHA_API_KEY" not in plain.text and "BETA_API_KEY" not in plain.text
    assert "_MATCH" not in plain.text


def test_leak_concurrent_asyncio(two_skills: tuple[ExecTool, Skill, Skill]) -> None:
    tool, _, _ = two_skills
    before = env_snapshot()
    names = ["alpha", "beta", "alpha", "beta", None]

    async def main() -> list[ToolResult]:
        calls = [tool.arun({"command": CHECK, **({"skill": n} if n else {})}) for n in names]
        return list(await asyncio.gather(*calls))

    with EnvironWatch() as watch:
        started = time.monotonic()
        results = asyncio.run(main())
        elapsed = time.monotonic() - started
    assert elapsed < 0.3 * len(names)
    for name, result in zip(names, results, strict=True):
        if name is None:
            assert "_API_KEY" not in result.text.replace("OPENAI_API_KEY", "")
            assert "_MATCH" not in result.text
        else:
            _assert_isolated(name, result)
    assert watch.seen == set()
    assert env_snapshot() == before


# =========================================================================== schemas


_TYPES = {"object", "string", "integer", "number", "boolean", "array", "null"}


def _check_schema(schema: Any) -> None:
    """A minimal JSON Schema (draft 2020-12) structure check for flat object schemas."""
    assert isinstance(schema, dict) and schema["type"] == "object"
    props = schema["properties"]
    assert isinstance(props, dict) and props
    for name, prop in props.items():
        assert isinstance(name, str) and isinstance(prop, dict)
        assert prop["type"] in _TYPES
        assert isinstance(prop.get("description", ""), str)
        for bound in ("minimum", "exclusiveMinimum"):
            assert isinstance(prop.get(bound, 0), int | float)
    assert set(schema["required"]) <= set(props)
    assert schema["additionalProperties"] is False


def test_schemas_are_json_schema_objects(weather: Skill, tmp_path: Path) -> None:
    tools: list[Tool] = [ReadTool([weather]), exec_tool([weather], tmp_path)]
    for tool in tools:
        assert isinstance(tool, Tool)
        _check_schema(tool.schema)
        assert tool.description and tool.name in ("read", "exec")
        tool.schema["properties"].clear()  # a copy: the tool's schema is unchanged
        assert tool.schema["properties"]
    assert ReadTool([weather]).schema["required"] == ["path"]
    assert exec_tool([], tmp_path).schema["required"] == ["command"]


def test_schemas_pass_a_json_schema_validator(weather: Skill, tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for tool in (ReadTool([weather]), exec_tool([weather], tmp_path)):
        jsonschema.Draft202012Validator.check_schema(tool.schema)


def test_read_tries_each_home_for_tilde_paths(tmp_path: Path) -> None:
    """SKILLBOOK_HOME may differ from the OS home; the catalog shortens both to ``~/``."""
    from skillbook.model import Skill

    effective, os_home = tmp_path / "effective", tmp_path / "os-home"
    folder = os_home / ".agents" / "skills" / "personal"
    folder.mkdir(parents=True)
    effective.mkdir()
    (folder / "SKILL.md").write_text("personal skill body\n", encoding="utf-8")
    skill = Skill.create("personal", "d", base_dir=folder, source="agents-skills-personal")
    only_one = ReadTool([skill], home=effective)
    assert only_one.run({"path": "~/.agents/skills/personal/SKILL.md"}).is_error
    both = ReadTool([skill], home=effective, other_homes=[os_home])
    result = both.run({"path": "~/.agents/skills/personal/SKILL.md"})
    assert not result.is_error
    assert result.text == "personal skill body\n"
