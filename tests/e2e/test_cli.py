"""The ``skillbook`` command end to end: a subprocess with an isolated environment.

Each test builds a workspace in a temporary folder and runs ``python -m skillbook``
(once the installed console script) with ``HOME``, the state dir and the bundled
skills folder pointing into that temporary folder, and ``PATH`` holding only stub
binaries, so that the machine running the tests cannot change the results.
Spec §12 "Status / CLI / gateway / install": CLI list/info/check text and JSON shapes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from factories import stub_bins, write_skill

import skillbook

pytestmark = pytest.mark.e2e

COMMANDS = (
    "list",
    "info",
    "check",
    "prompt",
    "validate",
    "watch",
    "run",
    "chat",
    "serve",
    "commands",
    "doctor",
    "new",
    "completion",
)
CONSOLE_SCRIPT = Path(sys.executable).parent / "skillbook"


@dataclass
class Sandbox:
    """A temporary home, state dir, bundled dir, ``PATH`` and workspace."""

    root: Path
    env: dict[str, str]
    workspace: Path
    bundled: Path
    state: Path
    bin_dir: Path

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        script: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        command = [str(CONSOLE_SCRIPT)] if script else [sys.executable, "-m", "skillbook"]
        return subprocess.run(
            [*command, *args],
            cwd=cwd or self.root,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )

    def json(self, *args: str, **kwargs: Any) -> Any:
        proc = self.run(*args, **kwargs)
        assert proc.returncode in (0, 1), proc.stderr
        return json.loads(proc.stdout)

    def config(self, text: str, name: str = "skillbook.json") -> Path:
        path = self.root / name
        path.write_text(text, encoding="utf-8")
        return path


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    home, state, bundled, bin_dir = (tmp_path / n for n in ("home", "state", "bundled", "bin"))
    for folder in (home, state, bundled):
        folder.mkdir()
    stub_bins(bin_dir, ["git"])
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SKILLBOOK_", "OPENCLAW_", "OPENAI_", "ANTHROPIC_"))
        and k not in ("HOME", "PATH")
    }
    env.update(
        HOME=str(home),
        PATH=str(bin_dir),
        SKILLBOOK_STATE_DIR=str(state),
        SKILLBOOK_BUNDLED_SKILLS_DIR=str(bundled),
        PYTHONIOENCODING="utf-8",
        COLUMNS="160",
    )
    ws = tmp_path / "ws"
    # Bundled: one ready, one the workspace overrides (shadowed).
    write_skill(bundled / "git-tidy", description="Tidy a git repository.")
    write_skill(bundled / "weather", description="Bundled weather.")
    # Workspace: ready, needs setup (bin + env), shadowing the bundled weather, broken.
    write_skill(ws / "skills" / "notes", description="Take meeting notes.")
    write_skill(
        ws / "skills" / "deploy",
        description="Deploy the app.",
        metadata={
            "openclaw": {
                "emoji": "🚀",
                "primaryEnv": "DEPLOY_TOKEN",
                "requires": {"bins": ["kubectl"], "env": ["DEPLOY_TOKEN"]},
            }
        },
    )
    write_skill(ws / "skills" / "weather", description="Our weather.")
    write_skill(ws / "skills" / "broken", description=None)
    return Sandbox(tmp_path, env, ws, bundled, state, bin_dir)


def rows(stdout: str) -> dict[str, str]:
    """Table rows of ``list`` by skill name (the word after the emoji)."""
    out: dict[str, str] = {}
    for line in stdout.splitlines()[3:]:
        parts = line.split()
        for i, word in enumerate(parts[:-1]):
            if word in {"ready", "disabled", "blocked", "setup"}:
                out[parts[i + 2]] = line
                break
    return out


# --------------------------------------------------------------------------- list


def test_list_prints_the_ready_count_and_a_status_per_skill(sandbox: Sandbox) -> None:
    proc = sandbox.run("-w", str(sandbox.workspace), "list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Skills (3/4 ready)"
    assert lines[1].split() == ["Status", "Skill", "Description", "Source"]
    table = rows(proc.stdout)
    assert set(table) == {"git-tidy", "notes", "deploy", "weather"}
    assert "✓ ready" in table["notes"] and table["notes"].rstrip().endswith("workspace")
    assert "△ needs setup" in table["deploy"] and "🚀 deploy" in table["deploy"]
    assert table["weather"].rstrip().endswith("workspace")
    # The broken skill is reported, not silently dropped.
    assert "1 error" in proc.stdout and "skillbook check" in proc.stdout


def test_no_command_means_list(sandbox: Sandbox) -> None:
    proc = sandbox.run("-w", str(sandbox.workspace))
    assert proc.returncode == 0
    assert proc.stdout.startswith("Skills (3/4 ready)")


def test_list_statuses_disabled_and_blocked_come_from_the_config(sandbox: Sandbox) -> None:
    cfg = sandbox.config(
        '{"skills": {"allowBundled": ["weather"], "entries": {"notes": {"enabled": false}}}}'
    )
    proc = sandbox.run("-w", str(sandbox.workspace), "-c", str(cfg), "list")
    table = rows(proc.stdout)
    assert "⏸ disabled" in table["notes"]
    assert "🚫 blocked" in table["git-tidy"]
    assert proc.stdout.startswith("Skills (1/4 ready)")


def test_list_json_has_openclaws_shape_plus_diagnostics(sandbox: Sandbox) -> None:
    data = sandbox.json("-w", str(sandbox.workspace), "list", "--json")
    assert list(data) == ["workspaceDir", "managedSkillsDir", "skills", "diagnostics"]
    assert data["workspaceDir"] == str(sandbox.workspace)
    assert data["managedSkillsDir"] == str(sandbox.state / "skills")
    by_name = {s["name"]: s for s in data["skills"]}
    assert list(by_name) == ["git-tidy", "weather", "deploy", "notes"]  # first-seen order
    deploy = by_name["deploy"]
    assert deploy["eligible"] is False and deploy["emoji"] == "🚀"
    assert deploy["primaryEnv"] == "DEPLOY_TOKEN"
    assert deploy["missing"] == {
        "bins": ["kubectl"],
        "anyBins": [],
        "env": ["DEPLOY_TOKEN"],
        "config": [],
        "os": [],
    }
    assert by_name["git-tidy"]["source"] == "openclaw-bundled"
    assert by_name["git-tidy"]["bundled"] is True
    assert by_name["weather"]["source"] == "openclaw-workspace"
    assert set(deploy) <= {
        "name",
        "description",
        "emoji",
        "eligible",
        "disabled",
        "blockedByAllowlist",
        "source",
        "bundled",
        "primaryEnv",
        "homepage",
        "missing",
    }
    codes = {(d["code"], d.get("path")) for d in data["diagnostics"]}
    broken = str(sandbox.workspace / "skills" / "broken" / "SKILL.md")
    assert ("parse.missing-description", broken) in codes


def test_list_eligible_shows_only_ready_skills(sandbox: Sandbox) -> None:
    proc = sandbox.run("-w", str(sandbox.workspace), "list", "--eligible")
    assert set(rows(proc.stdout)) == {"git-tidy", "notes", "weather"}
    data = sandbox.json("-w", str(sandbox.workspace), "list", "--eligible", "--json")
    assert all(s["eligible"] for s in data["skills"])
    assert len(data["skills"]) == 3


def test_list_eligible_with_nothing_ready_says_so(sandbox: Sandbox, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = sandbox.run(
        "-w", str(empty), "list", "--eligible", env={"SKILLBOOK_BUNDLED_SKILLS_DIR": str(empty)}
    )
    assert proc.returncode == 0
    assert (
        proc.stdout.strip() == "No eligible skills found. Run `skillbook list` to see all skills."
    )
    proc = sandbox.run("-w", str(empty), "list", env={"SKILLBOOK_BUNDLED_SKILLS_DIR": str(empty)})
    assert proc.stdout.strip() == "No skills found."


def test_list_verbose_adds_the_missing_column(sandbox: Sandbox) -> None:
    proc = sandbox.run("-w", str(sandbox.workspace), "list", "-v")
    assert proc.stdout.splitlines()[1].split()[-1] == "Missing"
    assert rows(proc.stdout)["deploy"].endswith("bins: kubectl; env: DEPLOY_TOKEN")
    # Installing the binary and exporting the variable makes it ready.
    stub_bins(sandbox.bin_dir, ["kubectl"])
    proc = sandbox.run("-w", str(sandbox.workspace), "list", "-v", env={"DEPLOY_TOKEN": "t"})
    assert "✓ ready" in rows(proc.stdout)["deploy"]


def test_list_description_is_cut_to_one_line(sandbox: Sandbox) -> None:
    write_skill(
        sandbox.workspace / "skills" / "long",
        description="|\n  First line\n  second line " + "word " * 60,
    )
    proc = sandbox.run("-w", str(sandbox.workspace), "list", env={"COLUMNS": "100"})
    row = rows(proc.stdout)["long"]
    assert "First line second line" in row and "…" in row
    assert len(row) <= 100


def test_terminal_escapes_in_skill_text_are_stripped(sandbox: Sandbox) -> None:
    """Spec §12 Status / CLI: ANSI/C1 stripping in JSON (and, here, in text too)."""
    write_skill(
        sandbox.workspace / "skills" / "loud",
        description='"Red \\e[31malert\\e[0m and \\x9b C1 \\a bell"',
    )
    args = ("-w", str(sandbox.workspace))
    for command in (("list",), ("list", "--json"), ("info", "loud"), ("check",)):
        out = sandbox.run(*args, *command).stdout
        assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out, command
        if command != ("check",):
            assert "Red alert and" in out and "bell" in out, command
    data = sandbox.json(*args, "info", "loud", "--json")
    assert data["description"] == "Red alert and  C1  bell"


# --------------------------------------------------------------------------- info


def test_info_shows_requirements_and_api_key_setup(sandbox: Sandbox) -> None:
    proc = sandbox.run("-w", str(sandbox.workspace), "info", "deploy")
    assert proc.returncode == 0
    out = proc.stdout
    assert out.startswith("🚀 deploy △ Needs setup\n\nDeploy the app.\n")
    assert "  Source: openclaw-workspace" in out
    assert "  Binaries: ✗ kubectl" in out
    assert "  Environment: ✗ DEPLOY_TOKEN" in out
    assert "export DEPLOY_TOKEN=" in out and "skills.entries.deploy.apiKey" in out


def test_info_json_is_the_whole_status_entry(sandbox: Sandbox) -> None:
    data = sandbox.json("-w", str(sandbox.workspace), "info", "deploy", "--json")
    assert data["name"] == "deploy" and data["skillKey"] == "deploy"
    assert data["filePath"] == str(sandbox.workspace / "skills" / "deploy" / "SKILL.md")
    assert data["requirements"]["bins"] == ["kubectl"]
    for key in ("always", "configChecks", "install", "baseDir", "diagnostics"):
        assert key in data


def test_info_of_an_unknown_skill_exits_1_with_a_hint(sandbox: Sandbox) -> None:
    proc = sandbox.run("-w", str(sandbox.workspace), "info", "nope")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        'skillbook: skill "nope" not found. Did you mean "notes"? '
        "Run `skillbook list` to see available skills."
    ]
    proc = sandbox.run("-w", str(sandbox.workspace), "info", "zzz", "--json")
    assert proc.returncode == 1
    # OpenClaw's shape, plus a stable code, the suggestions, and why a folder of that
    # name did not load or where a misplaced SKILL.md of it is (none here).
    assert json.loads(proc.stdout) == {
        "error": "not found",
        "skill": "zzz",
        "code": "skill-not-found",
        "suggestions": [],
        "notLoaded": [],
        "misplaced": [],
    }


# --------------------------------------------------------------------------- check


def test_check_text_counts_and_explains(sandbox: Sandbox) -> None:
    proc = sandbox.run("-w", str(sandbox.workspace), "check")
    assert proc.returncode == 0
    out = proc.stdout
    assert out.startswith("Skills Status Check\n\nTotal: 4\n✓ Eligible: 3\n")
    assert "✗ Missing requirements: 1" in out
    assert "🚀 deploy (bins: kubectl; env: DEPLOY_TOKEN)" in out
    assert "weather: openclaw-workspace hides openclaw-bundled" in out
    assert "[parse.missing-description]" in out


def test_check_json_summary_shadowed_and_broken(sandbox: Sandbox) -> None:
    data = sandbox.json("-w", str(sandbox.workspace), "check", "--json")
    assert data["summary"] == {
        "total": 4,
        "eligible": 3,
        "disabled": 0,
        "blocked": 0,
        "missingRequirements": 1,
    }
    assert data["eligible"] == ["git-tidy", "weather", "notes"]
    assert data["missingRequirements"][0]["name"] == "deploy"
    assert data["shadowed"] == [
        {
            "name": "weather",
            "winner": {
                "source": "openclaw-workspace",
                "filePath": str(sandbox.workspace / "skills" / "weather" / "SKILL.md"),
            },
            "hidden": {
                "source": "openclaw-bundled",
                "filePath": str(sandbox.bundled / "weather" / "SKILL.md"),
            },
        }
    ]
    assert data["omittedFromPrompt"] == []
    broken = [d for d in data["diagnostics"] if d["code"] == "parse.missing-description"]
    assert broken and broken[0]["severity"] == "error"
    assert broken[0]["path"] == str(sandbox.workspace / "skills" / "broken" / "SKILL.md")


def test_check_reports_skills_cut_by_a_tiny_prompt_budget(sandbox: Sandbox) -> None:
    """Spec §12 Prompt: extreme budget → `included 0 of N`; never silent here."""
    cfg = sandbox.config('{"skills": {"limits": {"maxSkillsPromptChars": 10}}}')
    args = ("-w", str(sandbox.workspace), "-c", str(cfg))
    data = sandbox.json(*args, "check", "--json")
    assert data["omittedFromPrompt"] == ["git-tidy", "weather", "notes"]
    assert "prompt.truncated" in {d["code"] for d in data["diagnostics"]}
    text = sandbox.run(*args, "check").stdout
    assert "Left out of the prompt (budget):\n  git-tidy (openclaw-bundled)" in text
    prompt = sandbox.run(*args, "prompt").stdout
    assert prompt.startswith("⚠️ Skills truncated: included 0 of 3")


# --------------------------------------------------------------------------- prompt


def test_prompt_is_byte_equal_to_the_library(sandbox: Sandbox) -> None:
    proc = sandbox.run("-w", str(sandbox.workspace), "prompt")
    assert proc.returncode == 0
    assert proc.stdout.startswith(
        "\n\nThe following skills provide specialized instructions for specific tasks.\n"
    )
    book = skillbook.load(sandbox.workspace, env=sandbox.env)
    assert proc.stdout == book.prompt + "\n"
    assert "<name>deploy</name>" not in proc.stdout  # not ready, not offered


def test_prompt_shortens_paths_under_home(sandbox: Sandbox) -> None:
    personal = Path(sandbox.env["HOME"]) / ".agents" / "skills"
    write_skill(personal / "mine", description="My personal skill.")
    out = sandbox.run("-w", str(sandbox.workspace), "prompt").stdout
    assert "<location>~/.agents/skills/mine/SKILL.md</location>" in out


def test_prompt_section(sandbox: Sandbox) -> None:
    out = sandbox.run("-w", str(sandbox.workspace), "prompt", "--section").stdout
    assert out.startswith("## Skills (mandatory)\nBefore replying: scan <available_skills>")
    assert "with `read`, then follow it." in out
    assert "\nThe following skills provide" in out
    book = skillbook.load(sandbox.workspace, env=sandbox.env)
    assert out == book.system_prompt_section() + "\n"
    read = sandbox.run("-w", str(sandbox.workspace), "prompt", "--section", "--read-tool", "Read")
    assert "with `Read`, then follow it." in read.stdout


def test_prompt_json(sandbox: Sandbox) -> None:
    data = sandbox.json("-w", str(sandbox.workspace), "prompt", "--json")
    assert list(data) == ["prompt", "compact", "truncated", "included", "omitted", "diagnostics"]
    assert data["included"] == ["git-tidy", "weather", "notes"]
    assert data["compact"] is False and data["truncated"] is False
    book = skillbook.load(sandbox.workspace, env=sandbox.env)
    assert data["prompt"] == book.prompt


def test_agent_filter_limits_what_is_offered(sandbox: Sandbox) -> None:
    cfg = sandbox.config(
        '{"agents": {"defaults": {"skills": ["notes"]},'
        ' "list": [{"id": "ops", "skills": ["git-tidy"]}, {"id": "writer"}]}}'
    )
    base = ("-w", str(sandbox.workspace), "-c", str(cfg))
    ops = sandbox.json(*base, "--agent", "ops", "prompt", "--json")
    assert ops["included"] == ["git-tidy"]
    writer = sandbox.json(*base, "-a", "writer", "prompt", "--json")
    assert writer["included"] == ["notes"]  # no own list: the defaults apply
    check = sandbox.json(*base, "-a", "ops", "check", "--json")
    assert check["filteredOut"] == ["weather", "notes"]
    # Without --agent no allowlist applies (as OpenClaw's status report).
    assert sandbox.json(*base, "prompt", "--json")["included"] == ["git-tidy", "weather", "notes"]


# --------------------------------------------------------------------------- validate


def test_validate_a_good_skill_exits_0(sandbox: Sandbox) -> None:
    proc = sandbox.run("validate", "--mode", "strict", str(sandbox.workspace / "skills" / "notes"))
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.startswith("✓ ")
    assert "1 valid, 0 invalid (strict mode)" in proc.stdout


def test_validate_a_bad_skill_exits_1_with_codes(sandbox: Sandbox) -> None:
    skills = sandbox.workspace / "skills"
    write_skill(skills / "Bad_Name", description="Bad name.", version=1)
    proc = sandbox.run(
        "--mode", "strict", "validate", str(skills / "Bad_Name"), str(skills / "notes")
    )
    assert proc.returncode == 1
    assert "[validate.name-invalid]" in proc.stdout
    assert "[validate.unknown-field]" in proc.stdout
    assert "1 valid, 1 invalid (strict mode)" in proc.stdout
    # A folder of skill folders validates each one.
    data = sandbox.json("validate", "--json", str(skills), "--mode", "strict")
    assert data["mode"] == "strict" and data["ok"] is False
    by_name = {r["name"]: r for r in data["results"]}
    assert by_name["notes"]["ok"] is True
    assert by_name["broken"]["ok"] is False
    codes = {d["code"] for d in by_name["Bad_Name"]["diagnostics"]}
    assert "validate.name-invalid" in codes


def test_validate_openclaw_mode_is_more_lenient(sandbox: Sandbox) -> None:
    deploy = str(sandbox.workspace / "skills" / "deploy")
    strict = sandbox.run("validate", "--mode", "strict", deploy)
    assert strict.returncode == 1  # flow-style metadata
    assert "would pass with --mode openclaw (also mixed, legacy): deploy" in strict.stdout
    assert sandbox.run("validate", "--mode", "openclaw", deploy).returncode == 0
    assert sandbox.run("--mode", "strict", "validate", deploy).returncode == 1
    # The default follows the global mode: skills.load.mode, else openclaw.
    assert sandbox.run("validate", deploy).returncode == 0
    cfg = sandbox.config('{skills: {load: {mode: "strict"}}}')
    assert sandbox.run("-c", str(cfg), "validate", deploy).returncode == 1
    assert sandbox.run("-c", str(cfg), "validate", "--mode", "mixed", deploy).returncode == 0


def test_validate_a_missing_path_exits_2(sandbox: Sandbox) -> None:
    proc = sandbox.run("validate", str(sandbox.root / "nope"))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        f"skillbook: no such file or folder: {sandbox.root / 'nope'}"
    ]


# --------------------------------------------------------------------------- config


def test_invalid_config_exits_2_naming_the_key_path(sandbox: Sandbox) -> None:
    cfg = sandbox.config('{"skills": {"limits": {"maxSkillsInPrompt": "many"}}}')
    for command in ("list", "check", "prompt"):
        proc = sandbox.run("-w", str(sandbox.workspace), "-c", str(cfg), command)
        assert proc.returncode == 2
        assert proc.stdout == ""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1
        assert "skills.limits.maxSkillsInPrompt" in lines[0]
        assert 'expected int >= 0, got "many"' in lines[0]


def test_unknown_config_key_and_missing_file_exit_2(sandbox: Sandbox) -> None:
    cfg = sandbox.config('{"skills": {"policy": {}}}')
    proc = sandbox.run("-w", str(sandbox.workspace), "-c", str(cfg), "list")
    assert proc.returncode == 2
    assert "skills.policy: unknown key" in proc.stderr
    proc = sandbox.run("-w", str(sandbox.workspace), "-c", str(sandbox.root / "no.json"), "list")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1


def test_missing_workspace_exits_2(sandbox: Sandbox) -> None:
    proc = sandbox.run("-w", str(sandbox.root / "nowhere"), "list")
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        == f"skillbook: workspace folder {sandbox.root / 'nowhere'} does not exist"
    )


def test_an_openclaw_json_with_comments_just_works(sandbox: Sandbox) -> None:
    openclaw_dir = sandbox.root / ".openclaw"
    openclaw_dir.mkdir()
    cfg = openclaw_dir / "openclaw.json"
    cfg.write_text(
        "// OpenClaw's own config, JSON5\n"
        "{\n"
        f"  agents: {{ defaults: {{ workspace: '{sandbox.workspace}' }} }},\n"
        "  skills: {\n"
        "    entries: {\n"
        "      deploy: { apiKey: 'secret', },  /* satisfies primaryEnv */\n"
        "    },\n"
        "  },\n"
        "  gateway: { port: 18789 },  // other sections are ignored\n"
        "}\n",
        encoding="utf-8",
    )
    stub_bins(sandbox.bin_dir, ["kubectl"])
    # No --workspace: the workspace comes from agents.defaults.workspace.
    data = sandbox.json("--config", str(cfg), "list", "--json")
    assert data["workspaceDir"] == str(sandbox.workspace)
    assert {s["name"]: s["eligible"] for s in data["skills"]}["deploy"] is True
    # The same file through the environment variable.
    proc = sandbox.run("list", env={"SKILLBOOK_CONFIG_PATH": str(cfg)})
    assert proc.stdout.startswith("Skills (4/4 ready)"), proc.stderr


def test_the_workspace_comes_from_the_agents_config(sandbox: Sandbox) -> None:
    """OpenClaw's resolveAgentWorkspaceDir, with the current folder as last resort."""
    other = sandbox.root / "other-ws"
    write_skill(other / "skills" / "solo", description="Only here.")
    (sandbox.workspace / "ops").mkdir()
    cfg = sandbox.config(
        json.dumps(
            {
                "agents": {
                    "defaults": {"workspace": str(sandbox.workspace)},
                    "list": [
                        {"id": "ops"},
                        {"id": "writer", "default": True},
                        {"id": "x", "workspace": str(other)},
                        {"id": "ghost"},
                    ],
                }
            }
        )
    )

    def workspace_of(*args: str) -> str:
        return str(sandbox.json("-c", str(cfg), *args, "list", "--json")["workspaceDir"])

    assert workspace_of() == str(sandbox.workspace)  # writer is the default agent
    assert workspace_of("-a", "ops") == str(sandbox.workspace / "ops")
    assert workspace_of("-a", "x") == str(other)
    assert workspace_of("-a", "x", "-w", str(sandbox.workspace)) == str(sandbox.workspace)
    proc = sandbox.run("-c", str(cfg), "-a", "ghost", "list")
    assert proc.returncode == 2
    assert "from agents.defaults.workspace in" in proc.stderr
    # An agent the config does not list is an error naming those it does (OpenClaw's words).
    proc = sandbox.run("-c", str(cfg), "-a", "nobody", "list")
    assert proc.returncode == 2
    assert proc.stderr == 'skillbook: unknown agent id "nobody" (known: ops, writer, x, ghost)\n'


def test_openclaw_state_dir_fallback_finds_managed_skills(sandbox: Sandbox) -> None:
    managed = sandbox.root / "openclaw-state"
    write_skill(managed / "skills" / "managed-one", description="Managed.")
    env = {k: v for k, v in sandbox.env.items() if k != "SKILLBOOK_STATE_DIR"}
    env["OPENCLAW_STATE_DIR"] = str(managed)
    proc = subprocess.run(
        [sys.executable, "-m", "skillbook", "-w", str(sandbox.workspace), "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    data = json.loads(proc.stdout)
    assert data["managedSkillsDir"] == str(managed / "skills")
    sources = {s["name"]: s["source"] for s in data["skills"]}
    assert sources["managed-one"] == "openclaw-managed"


def test_package_bundled_skills_load_when_no_folder_is_given(sandbox: Sandbox) -> None:
    env = {k: v for k, v in sandbox.env.items() if k != "SKILLBOOK_BUNDLED_SKILLS_DIR"}
    proc = subprocess.run(
        [sys.executable, "-m", "skillbook", "-w", str(sandbox.workspace), "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    data = json.loads(proc.stdout)
    bundled = [s for s in data["skills"] if s["source"] == "openclaw-bundled"]
    assert bundled and all(s["bundled"] for s in bundled)
    assert "weather" not in {s["name"] for s in bundled}  # the workspace one wins


# --------------------------------------------------------------------------- watch


def test_watch_prints_a_new_skill_then_exits(sandbox: Sandbox) -> None:
    """Spec §7.3: a new SKILL.md under <ws>/skills is picked up without a restart."""
    command = [sys.executable, "-m", "skillbook", "-w", str(sandbox.workspace), "watch"]
    with subprocess.Popen(
        [*command, "--once", "--timeout", "60"],
        env=sandbox.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    ) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert proc.stderr is not None
        assert first.startswith("Watching 4 skills (3 ready) in "), first + proc.stderr.read()
        assert proc.stdout.readline().startswith("prompt: 3 skills, ")
        write_skill(sandbox.workspace / "skills" / "fresh", description="New.")
        rest = proc.stdout.read()
        assert proc.wait(timeout=90) == 0
    lines = rest.splitlines()
    assert lines[:1] == ["+ fresh (openclaw-workspace)"], rest
    assert lines[1].startswith("prompt: 4 skills, ")


def test_watch_with_a_timeout_exits_0(sandbox: Sandbox) -> None:
    proc = sandbox.run("-w", str(sandbox.workspace), "watch", "--timeout", "0")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Watching 4 skills (3 ready)")


# --------------------------------------------------------------------------- run


def test_run_without_a_model_exits_2_with_a_hint(sandbox: Sandbox) -> None:
    proc = sandbox.run("-w", str(sandbox.workspace), "run", "What should I note?")
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skillbook: no model configured")


# --------------------------------------------------------------------------- help


@pytest.mark.parametrize("command", COMMANDS)
def test_help_of_every_command(sandbox: Sandbox, command: str) -> None:
    proc = sandbox.run(command, "--help")
    assert proc.returncode == 0
    assert proc.stdout.startswith(f"Usage: skillbook {command} [OPTIONS]")
    assert "-h, --help" in proc.stdout
    assert sandbox.run(command, "-h").stdout == proc.stdout


def test_top_level_help_and_version(sandbox: Sandbox) -> None:
    proc = sandbox.run("--help")
    assert proc.returncode == 0
    for command in COMMANDS:
        assert f"  {command} " in proc.stdout
    proc = sandbox.run("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"skillbook, version {skillbook.__version__}"


def test_bad_arguments_exit_2(sandbox: Sandbox) -> None:
    assert sandbox.run("frobnicate").returncode == 2
    assert sandbox.run("--mode", "loose", "list").returncode == 2
    assert sandbox.run("validate").returncode == 2


@pytest.mark.skipif(not CONSOLE_SCRIPT.exists(), reason="the console script is not installed")
def test_console_script(sandbox: Sandbox) -> None:
    proc = sandbox.run("-w", str(sandbox.workspace), "prompt", script=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == sandbox.run("-w", str(sandbox.workspace), "prompt").stdout
