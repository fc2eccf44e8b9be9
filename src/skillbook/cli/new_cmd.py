"""``skillbook new NAME``: start a skill folder that passes ``validate``.

Input: a name, an optional description and the mode whose rules it must pass
(``--mode``, else the global mode). Output: ``<workspace>/skills/NAME/SKILL.md``,
written into a hidden temporary folder, validated there in that mode, then moved
into place in one rename, so no reader ever sees half a skill. An existing file or
folder of that name is never overwritten.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Final

import click

from skillbook.cli.context import (
    ERR_EXISTS,
    ERR_USAGE,
    ERR_WORKSPACE,
    EXIT_FINDINGS,
    MODES,
    Context,
    emit_json,
    emit_lines,
    fail,
)
from skillbook.config.mode import Mode
from skillbook.pipeline.validation.strict_rules import MAX_NAME_LENGTH, NAME_RE
from skillbook.pipeline.validation.validate import validate_path

#: A plain YAML scalar needs no quotes when it looks like this.
_PLAIN: Final = re.compile(r"[A-Za-z0-9(][A-Za-z0-9 ,.;()/'+-]*[A-Za-z0-9.)]")
_BAD_NAME_CHARS: Final = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]")

BODY: Final = """
# {name}

Write here the instructions the model follows when it uses this skill: what to do,
in which order, and how to check the result. Keep it short; put long material in
files next to this one and say when to read them.

## When to use

- The requests, situations or files this skill is for.

## Steps

1. The first thing to do.
2. What to check before answering.
"""


def _yaml_scalar(text: str) -> str:
    """``text`` as a one-line YAML scalar every reader (strict or OpenClaw's) takes alike."""
    import yaml

    # Plain only where YAML reads the same string back (not `123`, `yes`, `null`).
    plain = _PLAIN.fullmatch(text) and ": " not in text and " #" not in text
    if plain and yaml.safe_load(text) == text:
        return text
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted one


def skill_text(name: str, description: str) -> str:
    return (
        f"---\nname: {_yaml_scalar(name)}\ndescription: {_yaml_scalar(description)}\n---\n"
        + BODY.format(name=name)
    )


def name_problem(name: str, mode: str) -> str | None:
    """Why ``name`` cannot be a skill folder (in ``mode``), or ``None``."""
    if not name or name != name.strip():
        return "the name must not be empty or start or end with spaces"
    if name in (".", "..") or name.startswith("."):
        return "a name starting with '.' would be a hidden folder, which is never loaded"
    if _BAD_NAME_CHARS.search(name):
        return "the name must not contain '/', '\\', control characters or :*?\"<>|"
    if mode == "strict" and (len(name) > MAX_NAME_LENGTH or not NAME_RE.fullmatch(name)):
        suggestion = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:MAX_NAME_LENGTH]
        hint = f" (e.g. {suggestion})" if suggestion else ""
        return (
            "strict mode needs lowercase letters, digits and single hyphens, at most "
            f"{MAX_NAME_LENGTH} characters{hint}"
        )
    return None


@click.command("new")
@click.argument("name")
@click.option(
    "--description",
    "-d",
    default=None,
    help="What the skill does and when to use it (the model reads this). "
    "Default: a placeholder to edit.",
)
@click.option(
    "--mode",
    "mode_opt",
    type=click.Choice(MODES),
    default=None,
    help="The rules the new skill must pass (default: the global mode).",
)
@click.option("--json", "as_json", is_flag=True, help="Print {path, name, mode} as JSON.")
@click.pass_obj
def new_cmd(
    obj: Context, name: str, description: str | None, mode_opt: str | None, as_json: bool
) -> None:
    """Create a skill folder, skills/NAME/SKILL.md in the workspace, that passes validate.

    Never overwrites: an existing NAME is an error.
    """
    settings = obj.settings()
    mode = Mode.of(mode_opt or settings.mode)
    problem = name_problem(name, mode)
    if problem is not None:
        fail(f"cannot use {name!r} as a skill name: {problem}", error=ERR_USAGE)
    workspace = settings.workspace.path
    if not workspace.is_dir():
        fail(
            f"workspace folder {workspace} ({settings.workspace.reason}) does not exist; "
            "create it or pass --workspace",
            error=ERR_WORKSPACE,
        )
    text = " ".join((description or f"Describe what {name} does and when to use it.").split())
    target = workspace / "skills" / name
    if os.path.lexists(target):
        fail(f"{target} already exists; not overwritten", error=ERR_EXISTS)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Hidden, so discovery and watchers skip it while it is being written.
    staging = Path(tempfile.mkdtemp(prefix=".skillbook-new-", dir=target.parent))
    try:
        folder = staging / name
        folder.mkdir()
        (folder / "SKILL.md").write_text(skill_text(name, text), encoding="utf-8")
        result = validate_path(folder, mode=mode)
        if not result.ok:
            found = "; ".join(d.message for d in result.diagnostics if d.severity == "error")
            fail(f"the skill would not pass validate in {mode} mode: {found}", EXIT_FINDINGS)
        try:
            # rename() refuses a non-empty target; a folder that appeared since the
            # check above can only be lost if it is empty.
            os.rename(folder, target)
        except OSError as exc:
            fail(f"{target} already exists; not overwritten ({exc.strerror})", error=ERR_EXISTS)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if as_json:
        emit_json({"path": str(target / "SKILL.md"), "name": name, "mode": mode})
        return
    lines = [
        f"Created {target / 'SKILL.md'}",
        f"It passes `skillbook validate --mode {mode}`. Write the description and the "
        "steps; the description is what the model reads to pick the skill.",
    ]
    standard = name_problem(name, "strict")
    if standard is not None:
        # Loaded here, but refused by the Agent Skills standard that `install --for`
        # agents (Claude Code, Codex, …) and `validate --mode strict` apply: better
        # known before the name is in use than after.
        lines.append(
            "Note: the Agent Skills standard (--mode strict) needs "
            f"{standard.removeprefix('strict mode needs ')}; {name!r} does not pass it."
        )
    emit_lines(lines)
