"""``install --for``, ``remove --for`` and ``list --for``: skills where coding agents read them.

Input: a source (a folder, git, an archive or a registry slug:
:mod:`skillbook.distribution.agents.sources`), the skills picked with ``--skill``, agent
ids (``all``: every detected agent), the scope (project folder or ``--global``),
``--copy``. Output: each skill placed as the ``skills`` CLI places it
(:mod:`skillbook.distribution.agents.layout`) after the install scan gate passed every
one of them, recorded in the project's ``skills-lock.json``
(:mod:`skillbook.distribution.agents.lock`) or, globally, the ``skills`` CLI's global
lock (:mod:`skillbook.distribution.agents.globallock`); removal and listing per agent.
Every refusal is an :class:`~skillbook.distribution.agents.AgentsError` with an
``agents.*``, ``install.*`` or ``registry.*`` code.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbook.base.closest import closest
from skillbook.base.fs import is_path_inside
from skillbook.distribution.agents import AgentsError
from skillbook.distribution.agents.globallock import (
    git_tree_hash,
    read_global_lock,
    update_global_lock,
)
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
from skillbook.distribution.agents.placing import audit_forced, sweep_leftovers
from skillbook.distribution.agents.sources import Fetched, Fetcher, fetch
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
            close = close_agent_ids(agent_id)
            if close:
                hint = f"did you mean {' or '.join(close)}? (every id: docs/agents.md)"
            else:
                known = ", ".join(a.id for a in all_agents()[:6])
                hint = f"use an id such as {known}, … (docs/agents.md)"
            raise AgentsError("agents.unknown", f"unknown agent {agent_id!r}; {hint}")
        if agent.id in _UNSUPPORTED:
            raise AgentsError(
                "agents.unsupported", f"{agent.display_name} ({agent.id}) is not supported yet"
            )
        chosen.append(agent)
    unique = {a.id: a for a in chosen}
    return tuple(unique.values())


def close_agent_ids(typed: str) -> list[str]:
    """Agent ids a person probably meant: the id of a display name (``Claude Code``),
    ids that start with or hold what they typed (``claude``, ``copilot``), near
    spellings (``cursorr``); at most three. Eighty ids in alphabetical order
    are no help to someone who typed ``claude``."""
    words: dict[str, str] = {}
    for agent in all_agents():
        words.setdefault(agent.id, agent.id)
        words.setdefault(agent.display_name.lower(), agent.id)
    return closest(typed, words, most=3, cutoff=0.75, within_from=4)


def install_for(
    source: str | Path,
    agents: tuple[Agent, ...],
    where: AgentEnv,
    *,
    global_: bool,
    copy: bool,
    force_reason: str | None = None,
    state_dir: Path | None = None,
    picks: tuple[str, ...] = (),
    fetcher: Fetcher | None = None,
) -> list[Installed]:
    """Fetch, scan, then place every skill of ``source`` (those ``picks`` names) for
    ``agents``; record them in the project lock, or globally in the global lock."""
    from skillbook.distribution.scan_gate import scan_for_install

    if isinstance(source, Path) or (
        not _looks_remote(source) and os.path.isdir(os.path.expanduser(source))
    ):
        # A folder that exists is that folder, however it is spelt (``my-skill`` would
        # otherwise be a registry slug), as ``--for`` has always read it.
        folder = Path(source).expanduser()
        if not folder.is_dir():
            raise AgentsError("agents.no-skill", f"{folder} is not a folder")
        source = str(folder.absolute())
    if not global_:
        read_lock(where.project)  # an unusable lock stops the install before any fetch
    with fetch(source, fetcher, picks=picks) as found:
        if global_ and any(item.global_entry is not None for item in found):
            read_global_lock(where)  # an unusable global lock stops before anything is placed
        staged: list[tuple[Fetched, Plan, tuple[str, ...]]] = []
        for item in found:
            verdict = scan_for_install(
                item.name, item.folder, force_reason=force_reason, state_dir=state_dir
            )
            if verdict.blocked is not None:
                raise AgentsError(verdict.code or "install.scan-blocked", verdict.blocked)
            if verdict.forced:
                audit_forced(item, verdict, state_dir, force_reason)
            plan = plan_layout(item.name, agents, where, global_=global_, copy=copy)
            if item.local:
                _refuse_onto_itself(item.folder, plan)
            check_copyable(item.folder)  # every skill of the source, before any is placed
            staged.append((item, plan, (*item.warnings, *verdict.warnings)))
        done: list[Installed] = []
        hashes: dict[str, str] = {}
        for item, plan, warnings in staged:
            try:
                digest = computed_hash(item.folder)
                if global_ and item.global_entry is not None:
                    tree = git_tree_hash(item.folder) if item.tree_hash else digest
                    hashes[item.name] = tree
                for target in {p.path for p in plan.placements} | {plan.canonical}:
                    if target is not None:
                        sweep_leftovers(target)  # what a killed run left beside it
                apply_plan(plan, item.folder)
            except OSError as exc:
                raise AgentsError("agents.io-error", f"could not place {item.name}: {exc}") from exc
            done.append(Installed(item.name, plan, digest, warnings))
        if not global_ and done:
            entries = {
                item.name: {**item.project_entry, "computedHash": d.computed_hash}
                for (item, _, _), d in zip(staged, done, strict=True)
            }
            update_lock(where.project, add=entries)
        global_entries = {
            item.name: {**item.global_entry, "skillFolderHash": hashes[item.name]}
            for item, _, _ in staged
            if global_ and item.global_entry is not None
        }
        if global_entries:
            update_global_lock(where, add=global_entries)
    return done


def _looks_remote(source: str) -> bool:
    return "://" in source or source.startswith("git@")


def _refuse_onto_itself(folder: Path, plan: Plan) -> None:
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
    chosen = {a.id for a in agents}
    paths = [agent_base(agent, where, global_=global_) / folder for agent in agents]
    if not any(os.path.lexists(p) for p in (*paths, canonical)):
        # Nothing of it for these agents: refused before the lock is touched. Dropping
        # the entry here took it from an agent that has the skill (`remove NAME --for
        # codex` of a skill installed for claude-code only), so `update` lost it.
        raise AgentsError(
            "agents.not-installed", f"{name} is not installed for {', '.join(sorted(chosen))} here"
        )
    removed: list[Path] = []
    for agent in agents:
        path = agent_base(agent, where, global_=global_) / folder
        if path != canonical and os.path.lexists(path) and _remove_path(path):
            removed.append(path)
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
        else:
            # The other tool drops the global lock's entry in the same case.
            skills = read_global_lock(where).get("skills") or {}
            keys = tuple(k for k in skills if k == name or sanitize_name(k) == folder)
            if keys:
                update_global_lock(where, drop=keys)
    if not removed and not (still_used and os.path.lexists(canonical)):
        raise AgentsError(
            "agents.not-installed",
            f"{name} is not installed for {', '.join(sorted(chosen))} here",
        )
    return removed, still_used


def list_for(agent: Agent, where: AgentEnv, *, global_: bool) -> list[Listed]:
    """The skills in an agent's folder (folders or links holding a SKILL.md)."""
    base = agent_base(agent, where, global_=global_)
    if global_:
        try:
            keys = list(read_global_lock(where).get("skills") or {})
        except AgentsError:
            keys = []  # listing still works; installing and updating say what is wrong
    else:
        keys = list(read_lock(where.project))
    locked = {sanitize_name(k) for k in keys}
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
