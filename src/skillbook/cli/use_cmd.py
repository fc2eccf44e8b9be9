"""``skillbook use NAME``: the prompt that hands one skill to an agent, as ``skills use`` prints it.

Input: a skill name (its ``name:``, skill key or folder name) resolved over the skills
skillbook sees in the workspace, or with ``--for AGENT`` over that coding agent's folder
(``-g``: its global folder). Output on stdout, the same text as ``skills use`` of the
``skills`` CLI (npm, 1.6.0): a fixed preamble, the SKILL.md text verbatim between
``<SKILL.md>`` tags and, when the skill has other files, the folder to read them from.
``--json`` prints ``{name, path, supportDir, prompt}``.

The one difference: ``skills use`` copies the skill to a fresh temporary folder (left
behind) and names that; skillbook names the skill's own folder and writes nothing.
Launching an agent with the prompt (``skills use --agent``) is left to a pipe
(``skillbook use NAME | claude``): ``--agent`` means an OpenClaw agent id here.

Exit codes: 0 printed, 1 no such skill (``skill-not-found``, with the names there are),
2 bad arguments (unknown agent) or an unreadable SKILL.md (``use.unreadable``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

import click

from skillbook.cli.context import ERR_SKILL, EXIT_FINDINGS, Context, emit_json, fail
from skillbook.cli.names import complete_skill_names

__all__ = ["has_supporting_files", "use_cmd", "use_prompt"]

#: What a copy leaves out (the ``skills`` CLI's copy rules), so is not a supporting file.
_EXCLUDED_FILES: Final = frozenset({"metadata.json"})
_EXCLUDED_DIRS: Final = frozenset({".git", "__pycache__", "__pypackages__"})


def use_prompt(skill_md: str, support_dir: Path | None) -> str:
    """The prompt text: byte for byte what ``skills use`` writes for the same SKILL.md."""
    sections = [
        "You are being given a Skill to execute for the user's next request.",
        "Use the following SKILL.md as your instructions:",
        f"<SKILL.md>\n{skill_md}\n</SKILL.md>",
    ]
    if support_dir is not None:
        sections.append(
            f"Supporting files for this skill were downloaded to:\n{support_dir}\n\n"
            "When the SKILL.md references relative paths, read them from that directory."
        )
    return "\n\n".join(sections) + "\n"


def has_supporting_files(folder: Path, _seen: frozenset[str] = frozenset()) -> bool:
    """Whether the skill holds a file besides its SKILL.md that a copy would keep.

    Links are followed as a copy follows them; broken ones count for nothing, and a
    link back to a folder being walked (a loop) is not walked again."""
    seen = _seen | {os.path.realpath(folder)}
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return False
    for entry in entries:
        try:
            is_dir = entry.is_dir()
            is_file = not is_dir and entry.is_file()
        except OSError:
            continue
        if is_dir:
            if entry.name in _EXCLUDED_DIRS or os.path.realpath(entry.path) in seen:
                continue
            if has_supporting_files(Path(entry.path), seen):
                return True
        elif (
            is_file
            and entry.name not in _EXCLUDED_FILES
            and (_seen or entry.name.lower() != "skill.md")  # a nested SKILL.md counts
        ):
            return True
    return False


def _read_skill_md(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        fail(f"could not read {path}: {exc}", error="use.unreadable")
    # As Node reads it with "utf-8": invalid bytes become U+FFFD, a BOM stays.
    return raw.decode("utf-8", errors="replace")


def _from_agent(obj: Context, name: str, agent_id: str, global_: bool) -> tuple[str, Path, Path]:
    """The skill in the agent's folder whose ``name:`` or folder name is ``name``
    (case-insensitive, as ``skills use`` matches a selector)."""
    from skillbook.cli.agents_support import agent_env
    from skillbook.distribution.agents import AgentsError
    from skillbook.distribution.agents.ops import list_for, resolve_agents
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    where = agent_env(obj, obj.settings())
    try:
        (agent,) = resolve_agents((agent_id,), where)
        found = list_for(agent, where, global_=global_)
    except AgentsError as exc:
        fail(exc.message, 2 if exc.code == "agents.unknown" else 1, error=exc.code)
    wanted = name.lower()
    names: list[str] = []
    for item in found:
        try:
            raw = (item.path / "SKILL.md").read_bytes()
        except OSError:
            continue
        declared = parse_skill_text(raw, path=item.path / "SKILL.md").name or item.name
        names.append(declared)
        if wanted in (declared.lower(), item.name.lower()):
            return declared, item.path, item.path / "SKILL.md"
    listed = ", ".join(names) if names else "none"
    fail(
        f'skill "{name}" not found for {agent.display_name} here (skills there: {listed}); '
        f"run `skillbook list --for {agent.id}`",
        EXIT_FINDINGS,
        error=ERR_SKILL,
    )


@click.command("use")
@click.argument("name", shell_complete=complete_skill_names)
@click.option(
    "--for",
    "for_agent",
    metavar="AGENT",
    help="Look for the skill in the folder where this coding agent reads skills "
    "(docs/agents.md) instead of the workspace's skills.",
)
@click.option("-g", "--global", "global_", is_flag=True, help="With --for: its global folder.")
@click.option("--json", "as_json", is_flag=True, help="Print {name, path, supportDir, prompt}.")
@click.pass_obj
def use_cmd(obj: Context, name: str, for_agent: str | None, global_: bool, as_json: bool) -> None:
    """Print the prompt that hands one skill to an agent (as `skills use` does): its
    SKILL.md and the folder of its other files. Pipe it to an agent: `skillbook use
    NAME | claude`."""
    if global_ and for_agent is None:
        fail("-g/--global only goes with --for AGENT")
    if for_agent is not None:
        declared, folder, skill_md = _from_agent(obj, name, for_agent, global_)
    else:
        from skillbook.cli.names import find_skill

        entry = find_skill(obj.book(), name)
        declared, folder, skill_md = entry.name, Path(entry.base_dir), Path(entry.file_path)
    folder = folder.absolute()
    support = folder if has_supporting_files(folder) else None
    prompt = use_prompt(_read_skill_md(skill_md), support)
    if as_json:
        emit_json(
            {
                "name": declared,
                "path": str(folder),
                "supportDir": None if support is None else str(support),
                "prompt": prompt,
            }
        )
        return
    click.echo(prompt, nl=False)
