"""The user documentation stays true: CLI options, Python examples, README commands.

- every option that ``--help`` prints, for the group and every command, is in
  ``docs/cli.md``, and each command's own options and arguments are in its section;
- every command is in the command table, and its ``--help`` ends with examples;
- every ``python`` block of ``docs/python-api.md`` runs, in order, in one fresh
  interpreter, in an empty temporary folder with an isolated home;
- the README opens with its two commands, and they name real options;
- relative links between the user docs point at files that exist.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillbook.cli.app import cli

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
USER_DOCS = (
    "concepts.md",
    "cli.md",
    "python-api.md",
    "configuration.md",
    "diagnostics.md",
    "migration.md",
    "experience.md",
    "agents.md",
    "multiple-agents.md",
)
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def code_blocks(text: str, lang: str) -> list[str]:
    return [m.group(2) for m in FENCE.finditer(text) if m.group(1) == lang]


def help_options(args: list[str]) -> set[str]:
    """The option spellings in the ``Options:`` section of ``skillbook ARGS --help``."""
    result = CliRunner().invoke(cli, [*args, "--help"], prog_name="skillbook")
    assert result.exit_code == 0, result.output
    section = result.output.split("Options:", 1)[1].split("Commands:", 1)[0]
    found: set[str] = set()
    for line in section.splitlines():
        stripped = line.strip()
        if stripped.startswith("-"):
            # Only the option column, not words of the help text.
            head = re.split(r"\s{2,}", stripped, maxsplit=1)[0]
            found |= set(OPTION.findall(head))
    return found


def command_names() -> list[str]:
    """Every command, the lazily imported ones included."""
    import click

    return sorted(cli.list_commands(click.Context(cli)))


@pytest.mark.parametrize("command", [None, *command_names()])
def test_every_help_option_is_in_the_cli_doc(command: str | None) -> None:
    doc = (DOCS / "cli.md").read_text(encoding="utf-8")
    options = help_options([command] if command else [])
    assert options, "no options parsed from --help"
    missing = sorted(o for o in options if f"`{o}" not in doc and f" {o}" not in doc)
    assert missing == [], f"options of `skillbook {command or ''}` missing from docs/cli.md"


def test_every_command_has_a_section_in_the_cli_doc() -> None:
    doc = (DOCS / "cli.md").read_text(encoding="utf-8")
    for command in command_names():
        assert f"## `skillbook {command}" in doc
        assert f"| [`{command}" in doc, f"`{command}` is missing from the command table"


def cli_doc_section(command: str) -> str:
    doc = (DOCS / "cli.md").read_text(encoding="utf-8")
    start = doc.index(f"## `skillbook {command}`")
    end = doc.find("\n## ", start + 1)
    return doc[start : end if end != -1 else len(doc)]


@pytest.mark.parametrize("command", command_names())
def test_each_command_section_covers_its_help(command: str) -> None:
    """The command's own options and arguments are explained where the command is."""
    import click

    from skillbook.cli.options import SPECS

    found = cli.get_command(click.Context(cli), command)
    assert found is not None
    global_spellings = {d for spec in SPECS for d in spec.decls}
    section = cli_doc_section(command)
    for param in found.params:
        if isinstance(param, click.Argument):
            name = (param.metavar or param.human_readable_name).removesuffix("...")
            assert name in section, (command, param.name)
            continue
        own = [o for o in (*param.opts, *param.secondary_opts) if o not in global_spellings]
        if param.name in {spec.field for spec in SPECS} and not own:
            continue
        for spelling in own:
            assert f"`{spelling}" in section or f"/`{spelling}" in section, (command, spelling)
    result = CliRunner().invoke(cli, [command, "--help"], prog_name="skillbook")
    assert "Examples:" in result.output, f"`skillbook {command} --help` has no examples"


_RUNNER = """
import json, sys, traceback

class Recorder:
    # What each block printed, with the line of the block that printed it.
    def __init__(self, real):
        self.real, self.records, self.tag = real, [], None
    def write(self, text):
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != self.tag:
            frame = frame.f_back
        if frame is not None:
            self.records.append([self.tag, frame.f_lineno, text])
        return len(text)
    def flush(self):
        pass

blocks = json.load(open(sys.argv[1], encoding="utf-8"))
namespace = {"__name__": "__main__"}
recorder = Recorder(sys.stdout)
sys.stdout = recorder
for index, source in enumerate(blocks, 1):
    recorder.tag = f"python-api.md block {index}"
    try:
        exec(compile(source, recorder.tag, "exec"), namespace)
    except BaseException:
        print(f"block {index} failed:\\n{source}", file=sys.stderr)
        traceback.print_exc()
        sys.exit(1)
json.dump(recorder.records, open(sys.argv[2], "w", encoding="utf-8"))
"""

#: ``# → X`` after a statement: what it prints. Text after " — " is a note, not output.
ARROW = "# →"
NOTE = " — "


def arrow_expectations(source: str) -> list[tuple[int, int, str]]:
    """(first line, last line, expected output) of each statement a ``# →`` comment follows.

    The comment ends the statement's last line, or stands on the lines right after it
    (one comment line per printed line)."""
    import ast
    import io
    import tokenize

    statements = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.stmt)]
    code_lines: set[int] = set()
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and token.string.startswith(ARROW):
            comments[token.start[0]] = token.string
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT,
                                tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):  # fmt: skip
            code_lines.update(range(token.start[0], token.end[0] + 1))
    grouped: dict[int, list[str]] = {}
    for line in sorted(comments):
        owner = line
        while owner not in code_lines:
            owner -= 1
            assert owner > 0, f"a {ARROW} comment with no statement before it (line {line})"
        grouped.setdefault(owner, []).append(comments[line].removeprefix(ARROW).removeprefix(" "))
    out = []
    for end, texts in grouped.items():
        ending = [n for n in statements if n.end_lineno == end]
        assert ending, f"no statement ends on line {end}"
        stmt = max(ending, key=lambda n: n.lineno)  # the innermost
        expected = "\n".join(t.split(NOTE, 1)[0] for t in texts)
        out.append((stmt.lineno, end, expected))
    return out


def test_python_api_examples_run(tmp_path: Path) -> None:
    """Every block runs, and each ``# →`` comment is what its statement prints."""
    blocks = code_blocks((DOCS / "python-api.md").read_text(encoding="utf-8"), "python")
    assert len(blocks) >= 5
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    (tmp_path / "blocks.json").write_text(json.dumps(blocks), encoding="utf-8")
    (tmp_path / "runner.py").write_text(_RUNNER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLBOOK_", "OPENCLAW_"))}
    env.update(HOME=str(home), SKILLBOOK_STATE_DIR=str(tmp_path / "state"))
    printed = tmp_path / "printed.json"
    proc = subprocess.run(
        [sys.executable, str(tmp_path / "runner.py"), str(tmp_path / "blocks.json"), str(printed)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    records = json.loads(printed.read_text(encoding="utf-8"))
    checked, wrong = 0, []
    for index, source in enumerate(blocks, 1):
        tag = f"python-api.md block {index}"
        for first, last, expected in arrow_expectations(source):
            got = "".join(t for b, line, t in records if b == tag and first <= line <= last)
            checked += 1
            if got.removesuffix("\n") != expected:
                wrong.append(f"block {index} line {last}: doc {expected!r}, printed {got!r}")
    assert checked >= 40
    assert wrong == [], "\n".join(wrong)


def test_arrow_comments_are_matched_to_their_statement() -> None:
    source = (
        "x = 1\n"
        "print(x)  # → 1 — a note\n"
        "print(\n    x, 2\n)  # → 1 2\n"
        "print('a\\nb')\n# → a\n# → b\n"
        "try:\n    print(3)  # → 3\nexcept ValueError:\n    pass\n"
    )
    assert arrow_expectations(source) == [(2, 2, "1"), (3, 5, "1 2"), (6, 6, "a\nb"), (10, 10, "3")]


def test_readme_opens_with_its_two_commands() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    top = text.split("\n## ", 1)[0]
    blocks = code_blocks(top, "sh")
    assert len(blocks) >= 2
    first, second = (b.strip() for b in blocks[:2])
    assert first.startswith("python3 -m venv .venv && .venv/bin/pip install")
    assert ".venv/bin/skillbook list" in first and "skillbook prompt --section" in first
    assert second.startswith("python3 -m venv .venv && .venv/bin/pip install")
    # The fast lane on two pytest-xdist workers; .ci/run runs this very command.
    assert second.endswith(".venv/bin/pytest -n 2")
    assert second in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    # The options the first command uses are real.
    assert "-v" in help_options(["list"]) and "--section" in help_options(["prompt"])


def test_configuration_examples_are_valid_configs() -> None:
    import json5

    from skillbook.config.file import Config

    blocks = code_blocks((DOCS / "configuration.md").read_text(encoding="utf-8"), "json5")
    assert blocks
    for block in blocks:
        Config.from_mapping(json5.loads(block))


@pytest.mark.parametrize("name", USER_DOCS)
def test_user_doc_links_resolve(name: str) -> None:
    path = DOCS / name
    assert path.is_file(), f"docs/{name} is missing"
    text = path.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (path.parent / target).exists(), f"docs/{name} links to missing {target}"


def folders_table() -> str:
    """The table of docs/multiple-agents.md: each project folder and the agents reading it,
    from the same module as the full table of docs/agents.md."""
    from skillbook.distribution.agents.table import UNIVERSAL_DIR, all_agents

    readers: dict[str, list[str]] = {}
    for agent in all_agents():
        readers.setdefault(agent.project_dir, []).append(agent.id)
    order = sorted(readers, key=lambda folder: (folder != UNIVERSAL_DIR, folder))
    lines = ["| Project folder | `--for` |", "|---|---|"]
    lines += [f"| `{f}` | {', '.join(f'`{a}`' for a in readers[f])} |" for f in order]
    return "\n".join(lines)


def test_multiple_agents_table_follows_the_module() -> None:
    text = (DOCS / "multiple-agents.md").read_text(encoding="utf-8")
    shown = text.split("<!-- folders-table:start -->\n", 1)[1].split("\n<!-- folders-table:end", 1)
    assert shown[0] == folders_table()


def test_multiple_agents_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``skillbook`` line of the page's ``sh`` blocks, in order, in one project with
    ``./my-skill``, in a home where Claude Code and Codex are installed; each exits 0."""
    import shlex

    home, project = tmp_path / "home", tmp_path / "project"
    for folder in (home / ".claude", home / ".codex", project / "my-skill" / "scripts"):
        folder.mkdir(parents=True)
    (project / "my-skill" / "SKILL.md").write_text(
        "---\nname: my-skill\ndescription: A demo skill.\n---\nRun scripts/hello.sh.\n"
    )
    (project / "my-skill" / "scripts" / "hello.sh").write_text("#!/bin/sh\necho hello\n")
    for var, value in (
        ("HOME", home),
        ("XDG_CONFIG_HOME", home / ".config"),
        ("XDG_STATE_HOME", tmp_path / "state"),
    ):
        monkeypatch.setenv(var, str(value))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "SKILLBOOK_STATE_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(project)
    text = (DOCS / "multiple-agents.md").read_text(encoding="utf-8")
    commands = [
        line
        for block in code_blocks(text, "sh")
        for line in block.splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(commands) >= 12
    for line in commands:
        argv = shlex.split(line)
        assert argv[0] == "skillbook", line
        result = CliRunner().invoke(cli, argv[1:], prog_name="skillbook")
        assert result.exit_code == 0, (line, result.output)
        if argv[1] == "use":
            assert result.output.startswith("You are being given a Skill"), line
            assert f"{home if '-g' in argv else project}/" in result.output, line
    # The last block installed for Claude Code alone: a real copy, recorded in the lock.
    assert (project / ".claude/skills/my-skill/scripts/hello.sh").is_file()
    assert "my-skill" in (project / "skills-lock.json").read_text(encoding="utf-8")
    # Codex (installed, reading ~/.agents/skills) keeps the global shared copy.
    assert not (home / ".claude/skills/my-skill").exists()
    assert (home / ".agents/skills/my-skill/SKILL.md").is_file()
