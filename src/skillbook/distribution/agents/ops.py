"""``install --for``, ``remove --for`` and ``list --for``: skills where coding agents read them.

Input: a local skill folder (or a folder of skill folders), agent ids (``all``: every
detected agent), the scope (project folder or ``--global``), ``--copy``. Output: the
skill placed as the ``skills`` CLI places it (:mod:`skillbook.distribution.agents.layout`) after the
install scan gate passed it, recorded in the project's ``skills-lock.json``
(:mod:`skillbook.distribution.agents.lock`); removal and listing per agent. Every refusal is an
:class:`~skillbook.distribution.agents.layout.AgentsError` with an ``agents.*`` or ``install.*`` code.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbook.base.fs import is_path_inside
from skillbook.distribution.agents import AgentsError
from skillbook.distribution.agents.layout import (
    Plan,
    agent_base,
    apply_plan,
    canonical_base,
    check_copyable,
    plan_layout,
    sanitize_name,
)
from skillbook.distribution.agents.lock import computed_hash, read_lock, update_lock
from skillbook.distribution.agents.table import (
    Agent,
    AgentEnv,
    all_agents,
    detected_agents,
    get_agent,
)

__all__ = ["Installed", "Listed", "install_for", "list_for", "remove_for", "resolve_agents"]

#: Agents the ``skills`` CLI treats specially (subagents, rewritten SKILL.md): not yet here.
_UNSUPPORTED = frozenset({"eve"})


@dataclass(frozen=True, slots=True)
class Installed:
    name: str
    plan: Plan
    computed_hash: str
    warnings: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "folder": self.plan.name,
            "mode": self.plan.mode,
            "canonical": str(self.plan.canonical) if self.plan.canonical else None,
            "agents": [
                {"agent": p.agent, "path": str(p.path), "kind": p.kind}
                for p in self.plan.placements
            ],
            "computedHash": self.computed_hash,
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True, slots=True)
class Listed:
    name: str
    path: Path
    link: str | None
    locked: bool

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "link": self.link, "locked": self.locked}


def resolve_agents(ids: tuple[str, ...], where: AgentEnv) -> tuple[Agent, ...]:
    """The agents named by ``--for`` (``all``: the detected ones), in the order given."""
    chosen: list[Agent] = []
    for agent_id in ids:
        if agent_id == "all":
            found = [a for a in detected_agents(where) if a.id not in _UNSUPPORTED]
            if not found:
                raise AgentsError(
                    "agents.none-detected",
                    "no agent detected here; name one with --for AGENT (see docs/agents.md)",
                )
            chosen.extend(found)
            continue
        agent = get_agent(agent_id)
        if agent is None:
            known = ", ".join(a.id for a in all_agents()[:6])
            raise AgentsError(
                "agents.unknown",
                f"unknown agent {agent_id!r}; use an id such as {known}, … (docs/agents.md)",
            )
        if agent.id in _UNSUPPORTED:
            raise AgentsError(
                "agents.unsupported", f"{agent.display_name} ({agent.id}) is not supported yet"
            )
        chosen.append(agent)
    unique = {a.id: a for a in chosen}
    return tuple(unique.values())


def _skill_name(folder: Path) -> str | None:
    """The skill's ``name:``; None when it has no ``name:`` or no ``description:``, which
    the ``skills`` CLI requires (it skips such a skill)."""
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    try:
        raw = (folder / "SKILL.md").read_bytes()
    except OSError as exc:
        raise AgentsError(
            "agents.io-error", f"could not read {folder / 'SKILL.md'}: {exc}"
        ) from exc
    parsed = parse_skill_text(raw, path=folder / "SKILL.md")
    return parsed.name if parsed.name and parsed.description else None


def _skill_folders(source: Path) -> list[Path]:
    if (source / "SKILL.md").is_file():
        return [source]
    try:
        found = sorted(p for p in source.iterdir() if (p / "SKILL.md").is_file())
    except OSError as exc:
        raise AgentsError("agents.io-error", f"could not read {source}: {exc}") from exc
    if not found:
        raise AgentsError(
            "agents.no-skill", f"{source} holds no SKILL.md (nor do its immediate subfolders)"
        )
    return found


def install_for(
    source: Path,
    agents: tuple[Agent, ...],
    where: AgentEnv,
    *,
    global_: bool,
    copy: bool,
    force_reason: str | None = None,
    state_dir: Path | None = None,
) -> list[Installed]:
    """Scan, then place every skill of ``source`` for ``agents``; record them in the lock."""
    from skillbook.distribution.scan_gate import scan_for_install

    if not source.is_dir():
        raise AgentsError(
            "agents.source-unsupported",
            f"{source} is not a folder; --for installs from local folders for now "
            "(registry, git and archive sources are not built yet)",
        )
    source = source.resolve()
    folders = _skill_folders(source)
    if not global_:
        read_lock(where.project)  # A conflicted lock stops the install before anything is placed.
    staged: list[tuple[str, Path, Plan, tuple[str, ...]]] = []
    named = [(folder, _skill_name(folder)) for folder in folders]
    skipped = tuple(
        f"skipped {folder / 'SKILL.md'}: it needs a name and a description in its frontmatter"
        for folder, name in named
        if name is None
    )
    if len(skipped) == len(named):
        raise AgentsError(
            "agents.no-skill",
            f"no valid skill in {source}: a SKILL.md needs a name and a description "
            "in its frontmatter",
        )
    for folder, name in named:
        if name is None:
            continue
        verdict = scan_for_install(name, folder, force_reason=force_reason, state_dir=state_dir)
        if verdict.blocked is not None:
            raise AgentsError(verdict.code or "install.scan-blocked", verdict.blocked)
        plan = plan_layout(name, agents, where, global_=global_, copy=copy)
        targets = [p.path for p in plan.placements]
        if plan.canonical is not None:
            targets.append(plan.canonical)
        for target in targets:
            real = str(target.resolve())
            if is_path_inside(str(folder), real) or is_path_inside(real, str(folder)):
                raise AgentsError(
                    "agents.source-is-target",
                    f"{folder} is where the skill would go ({target}); install from elsewhere",
                )
        check_copyable(folder)  # Every skill of the source, before any is placed.
        staged.append((name, folder, plan, skipped + verdict.warnings))
        skipped = ()  # Said once, with the first skill installed.
    done: list[Installed] = []
    for name, folder, plan, warnings in staged:
        try:
            digest = computed_hash(folder)
            apply_plan(plan, folder)
        except OSError as exc:
            raise AgentsError("agents.io-error", f"could not place {name}: {exc}") from exc
        done.append(Installed(name, plan, digest, warnings))
    if not global_ and done:
        # The lock records the folder given on the command line, as the other tool does.
        entries = {
            item.name: {
                "source": str(source),
                "sourceType": "local",
                "computedHash": item.computed_hash,
            }
            for item in done
        }
        update_lock(where.project, add=entries)
    return done


def _remove_path(path: Path) -> bool:
    if path.is_symlink() or path.is_file():
        path.unlink()
        return True
    if path.is_dir():
        shutil.rmtree(path)
        return True
    return False


def remove_for(
    name: str, agents: tuple[Agent, ...], where: AgentEnv, *, global_: bool
) -> tuple[list[Path], bool]:
    """Remove skill ``name`` for ``agents``. Returns the paths removed and whether the
    shared ``.agents/skills`` copy (and the lock entry) were kept because another agent
    still uses it: a detected agent not named whose folder holds it, or any agent whose
    folder links to it."""
    folder = sanitize_name(name)
    canonical = canonical_base(where, global_=global_) / folder
    if not global_:
        read_lock(where.project)  # A conflicted lock stops the removal before anything goes.
    removed: list[Path] = []
    for agent in agents:
        path = agent_base(agent, where, global_=global_) / folder
        if path != canonical and os.path.lexists(path) and _remove_path(path):
            removed.append(path)
    chosen = {a.id for a in agents}
    still_used = False
    for agent in all_agents():
        if agent.id in chosen or agent.id in _UNSUPPORTED:
            continue
        try:
            path = agent_base(agent, where, global_=global_) / folder
        except AgentsError:
            continue
        if not os.path.lexists(path):
            continue
        links_here = path.is_symlink() and os.path.realpath(path) == os.path.realpath(canonical)
        if links_here or agent.is_detected(where):
            still_used = True
            break
    if not still_used:
        if os.path.lexists(canonical) and _remove_path(canonical):
            removed.append(canonical)
        if not global_:
            lock = read_lock(where.project)
            keys = tuple(k for k in lock if k == name or sanitize_name(k) == folder)
            if keys:
                update_lock(where.project, drop=keys)
    if not removed and not (still_used and os.path.lexists(canonical)):
        raise AgentsError(
            "agents.not-installed",
            f"{name} is not installed for {', '.join(sorted(chosen))} here",
        )
    return removed, still_used


def list_for(agent: Agent, where: AgentEnv, *, global_: bool) -> list[Listed]:
    """The skills in an agent's folder (folders or links holding a SKILL.md)."""
    base = agent_base(agent, where, global_=global_)
    locked = {sanitize_name(k) for k in read_lock(where.project)} if not global_ else set()
    found: list[Listed] = []
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        path = Path(entry.path)
        if entry.name.startswith(".") or not (path / "SKILL.md").is_file():
            continue
        link = os.readlink(path) if path.is_symlink() else None
        found.append(Listed(entry.name, path, link, entry.name in locked))
    return found
