"""Where a skill goes for a set of agents: the ``skills`` CLI's tree, planned then placed.

Input: the skill's name, the chosen agents, the environment and scope, and whether
copies were asked for. Output: a :class:`Plan` (pure: :func:`plan_layout`) of real
copies and relative symbolic links, and :func:`apply_plan` which puts the files there.

The rules, as ``skills add`` applies them: when ``--copy`` is given or every chosen agent
has the same project folder, each agent's folder gets a real copy. Otherwise one copy
goes to ``.agents/skills/NAME`` (under the project, or under $HOME with ``--global``) and
every agent reading another folder gets a link to it, relative to the link's (resolved)
parent folder. Agents reading ``.agents/skills`` are served by the copy itself; in the
global scope they are served by ``~/.agents/skills`` whatever their own global folder.

Placing is atomic per folder: a copy is built in a hidden sibling and swapped in, a link
is made under a temporary name and renamed over the old one.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from skillbook.base.atomic import exchange, new_token
from skillbook.base.fs import is_path_inside
from skillbook.distribution.agents import AgentsError
from skillbook.distribution.agents.table import UNIVERSAL_DIR, Agent, AgentEnv

__all__ = ["Placement", "Plan", "apply_plan", "check_copyable", "plan_layout", "sanitize_name"]

#: What a copy leaves out, as the ``skills`` CLI does.
_EXCLUDED_FILES: Final = frozenset({"metadata.json"})
_EXCLUDED_DIRS: Final = frozenset({".git", "__pycache__", "__pypackages__"})


def sanitize_name(name: str) -> str:
    """The folder name of a skill: lowercase, runs of other characters as ``-``, no
    leading or trailing dots or dashes, at most 255 characters."""
    lowered = re.sub(r"[^a-z0-9._]+", "-", name.lower())
    trimmed = re.sub(r"^[.\-]+|[.\-]+$", "", lowered)[:255]
    return trimmed or "unnamed-skill"


@dataclass(frozen=True, slots=True)
class Placement:
    agent: str
    #: The folder the agent reads this skill from.
    path: Path
    #: ``copy``: a real folder; ``link``: a relative link to :attr:`Plan.canonical`;
    #: ``shared``: served by the canonical copy itself.
    kind: Literal["copy", "link", "shared"]


@dataclass(frozen=True, slots=True)
class Plan:
    name: str
    mode: Literal["copy", "symlink"]
    #: ``.agents/skills/NAME`` in symlink mode; None in copy mode.
    canonical: Path | None
    placements: tuple[Placement, ...] = field(default=())


def canonical_base(where: AgentEnv, *, global_: bool) -> Path:
    return (where.home if global_ else where.project) / UNIVERSAL_DIR


def agent_base(agent: Agent, where: AgentEnv, *, global_: bool) -> Path:
    """The folder an agent's skills go to in this scope (``.agents/skills`` for agents
    reading it)."""
    if agent.universal:
        return canonical_base(where, global_=global_)
    folder = agent.folder(where, global_=global_)
    if folder is None:
        raise AgentsError(
            "agents.no-global-scope",
            f"{agent.display_name} has no global skills folder; install it without --global",
        )
    return folder


def plan_layout(
    skill_name: str,
    agents: tuple[Agent, ...],
    where: AgentEnv,
    *,
    global_: bool,
    copy: bool,
) -> Plan:
    """The tree for one skill (see the module docstring)."""
    name = sanitize_name(skill_name)
    folders = {a.project_dir for a in agents}
    mode: Literal["copy", "symlink"] = "copy" if copy or len(folders) <= 1 else "symlink"
    placements: list[Placement] = []
    if mode == "copy":
        for agent in agents:
            placements.append(
                Placement(agent.id, agent_base(agent, where, global_=global_) / name, "copy")
            )
        return Plan(name, mode, None, tuple(placements))
    canonical = canonical_base(where, global_=global_) / name
    for agent in agents:
        path = agent_base(agent, where, global_=global_) / name
        shared = agent.universal or path == canonical
        placements.append(
            Placement(agent.id, canonical if shared else path, "shared" if shared else "link")
        )
    return Plan(name, mode, canonical, tuple(placements))


def _copy_tree(source: Path, dest: Path | None, root: Path, walking: frozenset[str]) -> None:
    """Copy ``source`` to ``dest`` (None: only check that it can be copied).

    ``walking`` holds the real paths of the folders being copied, so a link back to one
    of them (``self -> .``) is refused instead of copied again inside itself: the other
    tool nests copies until the path is too long, reports it and exits 0."""
    walking = walking | {os.path.realpath(source)}
    if dest is not None:
        dest.mkdir(parents=True, exist_ok=True)
    for entry in sorted(os.scandir(source), key=lambda e: e.name):
        src = Path(entry.path)
        out = None if dest is None else dest / entry.name
        if entry.is_dir(follow_symlinks=False):
            if entry.name not in _EXCLUDED_DIRS:
                _copy_tree(src, out, root, walking)
            continue
        if entry.name in _EXCLUDED_FILES:
            continue
        if entry.is_symlink():
            # The other tool follows links; skillbook follows only those that stay inside
            # the skill, so a link cannot smuggle a file from elsewhere into the copy.
            target = Path(os.path.realpath(src))
            if not is_path_inside(str(root), str(target)):
                raise AgentsError(
                    "agents.symlink-escape",
                    f"{src} links outside the skill ({target}); remove the link or copy the file in",
                )
            try:
                target.stat()
            except FileNotFoundError:
                continue  # A broken link is left out, as the other tool leaves it out.
            except OSError as exc:
                raise AgentsError(
                    "agents.symlink-loop",
                    f"{src} is a link that cannot be followed ({exc.strerror}); remove it",
                ) from exc
            if target.is_dir():
                if str(target) in walking:
                    raise AgentsError(
                        "agents.symlink-loop",
                        f"{src} links back to a folder that contains it ({target}); "
                        "a copy would never end: remove the link",
                    )
                _copy_tree(target, out, root, walking)
                continue
        if out is not None:
            shutil.copyfile(src, out)
            os.chmod(out, src.stat().st_mode & 0o777)


def check_copyable(source: Path) -> None:
    """Raise the :class:`AgentsError` copying ``source`` would raise, writing nothing, so a
    refused skill leaves no partial tree (not even other skills of the same source)."""
    try:
        _copy_tree(source, None, source.resolve(), frozenset())
    except OSError as exc:
        raise AgentsError("agents.io-error", f"could not read {source}: {exc}") from exc


def _swap_in(staged: Path, target: Path) -> None:
    """Put ``staged`` at ``target`` in one step, then delete what was there."""
    if not os.path.lexists(target):
        os.rename(staged, target)
        return
    if target.is_dir() and not target.is_symlink() and exchange(staged, target):
        shutil.rmtree(staged)
        return
    old = target.with_name(f".{target.name}.old-{new_token()}")
    os.rename(target, old)
    os.rename(staged, target)
    if old.is_dir() and not old.is_symlink():
        shutil.rmtree(old)
    else:
        old.unlink()


def place_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(f".{target.name}.new-{new_token()}")
    try:
        _copy_tree(source, staged, source.resolve(), frozenset())
        _swap_in(staged, target)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise


def link_text(canonical: Path, link: Path) -> str:
    """The relative target written in ``link``: from its parent folder with links in the
    parent resolved, as the other tool computes it."""
    parent = link.parent.resolve()
    return os.path.relpath(canonical, parent)


def place_link(canonical: Path, link: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    if os.path.realpath(link) == os.path.realpath(canonical):
        return
    staged = link.with_name(f".{link.name}.new-{new_token()}")
    os.symlink(link_text(canonical, link), staged)
    try:
        if os.path.islink(link) or not os.path.lexists(link):
            os.replace(staged, link)
        else:
            _swap_in(staged, link)
    except BaseException:
        with contextlib.suppress(OSError):
            staged.unlink()
        raise


def apply_plan(plan: Plan, source: Path) -> None:
    """Put the skill in ``source`` where ``plan`` says (checked first: nothing is placed
    when it cannot be copied whole)."""
    check_copyable(source)
    if plan.canonical is not None:
        place_copy(source, plan.canonical)
    done: set[Path] = set()
    for placement in plan.placements:
        if placement.path in done:
            continue
        done.add(placement.path)
        if placement.kind == "copy":
            place_copy(source, placement.path)
        elif placement.kind == "link":
            assert plan.canonical is not None
            place_link(plan.canonical, placement.path)
