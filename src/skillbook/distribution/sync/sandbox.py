"""What a sandbox needs besides the files: a catalog with its paths, and the env to pass.

Input: the loaded :class:`~skillbook.pipeline.book.SkillBook`, the skills a sync copied and
where the sandbox sees the target's ``skills`` folder (the *mount*, e.g. ``/skills``).
Output: the prompt catalog rendered by :func:`skillbook.pipeline.prompt.skills_section.build_prompt` with
``<mount>/<folder>/SKILL.md`` locations (OpenClaw's prompt keeps host paths, which a
sandboxed agent cannot read: openclaw#46257 and its duplicates), and the environment
variables the synced skills declare (``requires.env``, ``primaryEnv``), each with
whether the host has a value, for ``docker run --env`` or ``--env-file``. Values are
never read into the result, only names.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from skillbook.config.file import Config
from skillbook.model import Skill
from skillbook.pipeline.prompt.skills_section import PromptCatalog, PromptLimits, build_prompt

#: The catalog file written into the synced folder when a mount is given.
CATALOG_FILE = ".catalog.md"
_DEFAULT_LIMITS = PromptLimits()


@dataclass(frozen=True, slots=True)
class EnvVar:
    """A variable some synced skills declare.

    ``state``: ``set`` (the host environment has it), ``config`` (only
    ``skills.entries`` supplies it), ``missing``, or ``blocked`` (never passed: it
    changes how programs start, see :func:`is_dangerous`).
    """

    name: str
    skills: tuple[str, ...]
    primary: bool
    state: str

    @property
    def passable(self) -> bool:
        return self.state != "blocked"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "skills": list(self.skills),
            "primary": self.primary,
            "state": self.state,
        }


def check_mount(mount: str) -> str:
    """The mount as an absolute POSIX path without a trailing slash; raises ValueError."""
    if not mount.startswith("/") or "\x00" in mount:
        raise ValueError(f"the mount must be an absolute path inside the sandbox, got {mount!r}")
    normalized = posixpath.normpath(mount)
    return "/" if normalized in ("/", "//") else normalized.rstrip("/")


def mounted_catalog(
    skills: Sequence[tuple[Skill, str]], mount: str, config: Config
) -> PromptCatalog:
    """The catalog of ``skills`` (each with its synced folder name) as seen at ``mount``.

    ``skills`` are gated and filtered already, in load order; the budget and priority
    come from ``config`` as for the host catalog. No ``~/`` shortening: the paths are
    the sandbox's.
    """
    root = check_mount(mount)
    moved = [
        dataclasses.replace(
            skill,
            file_path=Path(PurePosixPath(root, folder, "SKILL.md")),
            base_dir=Path(PurePosixPath(root, folder)),
        )
        for skill, folder in skills
    ]
    given = config.skills.limits
    limits = PromptLimits(
        max_skills=_or(given.max_skills_in_prompt, _DEFAULT_LIMITS.max_skills),
        max_chars=_or(given.max_skills_prompt_chars, _DEFAULT_LIMITS.max_chars),
    )
    return build_prompt(moved, limits=limits, priority=config.skills.prompt.priority == "source")


def env_passthrough(
    skills: Sequence[Skill], config: Config, env: Mapping[str, str]
) -> tuple[EnvVar, ...]:
    """The declared variables of ``skills``, in order of first declaration."""
    order: dict[str, list[str]] = {}
    primary: set[str] = set()
    from_config: set[str] = set()
    for skill in skills:
        meta = skill.metadata
        if meta is None:
            continue
        names = [meta.primary_env] if meta.primary_env else []
        names += list(meta.requires.env) if meta.requires else []
        entry = config.entry(skill.skill_key)
        for raw in names:
            name = raw.strip()
            if not name:
                continue
            users = order.setdefault(name, [])
            if skill.name not in users:
                users.append(skill.name)
            if name == meta.primary_env:
                primary.add(name)
            if entry is not None and (
                (entry.env or {}).get(name) or (name == meta.primary_env and entry.has_api_key)
            ):
                from_config.add(name)
    out: list[EnvVar] = []
    for name, users in order.items():
        if is_dangerous(name):
            state = "blocked"
        elif env.get(name):
            state = "set"
        elif name in from_config:
            state = "config"
        else:
            state = "missing"
        out.append(EnvVar(name, tuple(users), name in primary, state))
    return tuple(out)


def is_dangerous(name: str) -> bool:
    """Variables that change how programs start (``LD_PRELOAD``, ``NODE_OPTIONS``…).

    The runtime never injects them for a skill; a sandbox should not receive them
    because a skill asked. Credentials (``GITHUB_TOKEN``…) are not in this set:
    passing those is the user's call.
    """
    # One home for the list: the runtime's policy (OpenClaw 2026.9.6's).
    from skillbook.runtime.env import is_host_dangerous

    return is_host_dangerous(name)


def env_file_text(variables: Sequence[EnvVar]) -> str:
    """A ``docker run --env-file`` file: one name per line, so docker takes each value
    from the calling environment and no secret is written to disk."""
    lines = ["# Environment variables the synced skills declare (names only; docker"]
    lines.append("# passes each one's value from the environment it runs in).")
    lines.extend(v.name for v in variables if v.passable)
    return "\n".join(lines) + "\n"


def _or(value: int | None, default: int) -> int:
    return default if value is None else value
