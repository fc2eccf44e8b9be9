"""``skillbook doctor``: every path and file in effect, and why.

Input: the global options and the environment. Output: the home, config file (how
it was chosen, which other config files exist and are not read), state dir, agent,
workspace, mode, compat profile, bundled dir, the registry (which one the registry
commands use and why, whether a token goes with it; nothing is fetched), each skill root (source label, where it comes from,
whether it exists, how many skills it gave) and the skills' counts, as text or with
``--json`` as one object. Problems (a config that does not read, an unknown agent, a
configured workspace that does not exist) are listed and make the exit code 1; the
report is printed anyway, as far as it can be worked out.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from skillbook.cli.context import EXIT_FINDINGS, EXIT_OK, Context, emit_json, emit_lines, error_code
from skillbook.config.agent_scope import (
    PROFILE_ENV,
    check_agent_id,
    default_agent_id,
    known_agent_ids,
    locate_workspace,
)
from skillbook.config.file import Config, read_config
from skillbook.config.paths import COMPAT_ENV_PREFIX, ENV_PREFIX, Paths
from skillbook.config.profile import profile_of
from skillbook.config.run_settings import choose_compat, choose_mode
from skillbook.errors import SkillbookError
from skillbook.model import Source
from skillbook.pipeline.discovery.discover import resolve_roots
from skillbook.pipeline.discovery.learned import is_learned_root
from skillbook.version import __version__

#: The variables that move folders; doctor shows those that are set.
WATCHED_VARIABLES = (
    *(
        prefix + name
        for name in ("HOME", "STATE_DIR", "CONFIG_PATH", "BUNDLED_SKILLS_DIR")
        for prefix in (ENV_PREFIX, COMPAT_ENV_PREFIX)
    ),
    PROFILE_ENV,
)

LEARNED_ORIGIN = "<workspace>/skills/auto (learned skills, skillbook drafts)"
_ROOT_ORIGIN = {
    Source.MANAGED: "<state dir>/skills",
    Source.PERSONAL: "<OS home>/.agents/skills",
    Source.PROJECT: "<workspace>/.agents/skills",
    Source.WORKSPACE: "<workspace>/skills",
}


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def doctor_cmd(obj: Context, as_json: bool) -> None:
    """Show every path and file in effect and why: config, state dir, workspace, roots.

    Exit 1 when something is wrong (a config that does not read, an unknown agent, a
    configured workspace that does not exist); the report is printed anyway.
    """
    report = doctor_report(obj, os.environ, Path.cwd())
    if as_json:
        emit_json(report)
    else:
        emit_lines(doctor_lines(report))
    sys.exit(EXIT_FINDINGS if report["problems"] else EXIT_OK)


def doctor_report(obj: Context, env: Mapping[str, str], cwd: Path) -> dict[str, Any]:
    """The report as one JSON-ready object (the text form is rendered from it)."""
    problems: list[dict[str, str]] = []
    paths = Paths.from_env(env, cwd=cwd, config=obj.config, config_reason="--config")
    location = paths.config_location
    try:
        config = read_config(location)
    except SkillbookError as exc:
        problems.append({"code": error_code(exc), "message": str(exc)})
        config = Config.empty()
    agent: str | None = obj.agent
    try:
        agent_id = check_agent_id(config, agent)
    except SkillbookError as exc:
        problems.append({"code": error_code(exc), "message": str(exc)})
        agent_id, agent = default_agent_id(config), None
    chosen = locate_workspace(config, paths, agent=agent, explicit=obj.workspace, env=env, cwd=cwd)
    if chosen.configured and not chosen.path.is_dir():
        problems.append(
            {
                "code": "workspace-missing",
                "message": f"workspace folder {chosen.path} (from {chosen.reason}) does not exist",
            }
        )
    mode, mode_reason = choose_mode(obj.mode, config)
    compat, compat_reason = choose_compat(obj.compat, config)
    roots = resolve_roots(
        chosen.path,
        paths,
        extra_dirs=config.skills.load.extra_dirs,
        cwd=cwd,
        profile=profile_of(compat),
    )
    extra_keys = [
        f"skills.load.extraDirs[{i}]"
        for i, raw in enumerate(config.skills.load.extra_dirs)
        if isinstance(raw, str) and raw.strip()
    ]
    skills = (
        _skills_summary(obj, config, agent, chosen.path, mode, env, cwd, compat)
        if not problems
        else None
    )
    root_rows = []
    for root in roots:
        if root.source is Source.EXTRA:
            origin = extra_keys.pop(0) if extra_keys else "skills.load.extraDirs"
        elif root.source is Source.BUNDLED:
            origin = paths.origins.get("bundled_dir", "")
        else:
            learned = root.source is Source.WORKSPACE and is_learned_root(root.path)
            origin = LEARNED_ORIGIN if learned else _ROOT_ORIGIN.get(root.source, "")
        row: dict[str, Any] = {
            "source": root.source.value,
            "path": str(root.path),
            "origin": origin,
            "exists": root.path.is_dir(),
        }
        if skills is not None:
            row["skills"] = skills["bySource"].get(str(root.path), 0)
        root_rows.append(row)
    marked = [a for a in config.agents.agents if a.default]
    registry = registry_report(config, env, paths.os_home, problems)
    return {
        "version": __version__,
        "python": sys.version.split()[0],
        "home": {"path": str(paths.home), "reason": paths.origins.get("home", "")},
        "osHome": {"path": str(paths.os_home), "reason": paths.origins.get("os_home", "")},
        "config": location.to_json(),
        "managedDir": str(paths.managed_dir),
        "agent": {
            "id": agent_id,
            "requested": obj.agent,
            "reason": "--agent"
            if agent is not None
            else ("default: true in agents.list" if marked else "the default agent"),
            "known": list(known_agent_ids(config)),
            "allowlist": agent is not None,
        },
        "workspace": chosen.to_json(),
        "mode": {"value": mode, "reason": mode_reason},
        "compat": {
            "value": compat,
            "reason": compat_reason,
            "openclaw": profile_of(compat).openclaw_version,
        },
        "bundledDir": {
            "path": str(paths.bundled_dir) if paths.bundled_dir is not None else None,
            "reason": paths.origins.get("bundled_dir", ""),
        },
        "registry": registry,
        "roots": root_rows,
        "mcpServers": len(config.skills.mcp_servers),
        "environment": {name: env[name] for name in WATCHED_VARIABLES if env.get(name)},
        "skills": None if skills is None else {k: v for k, v in skills.items() if k != "bySource"},
        "problems": problems,
    }


def registry_report(
    config: Config, env: Mapping[str, str], os_home: Path, problems: list[dict[str, str]]
) -> dict[str, Any] | None:
    """The registry ``search``/``install``/``update``/``publish`` use without ``--registry``,
    and why: the commands' own call, minus the network."""
    from skillbook.cli.registry_support import choose_endpoint
    from skillbook.distribution.registry import RegistryError

    try:
        endpoint = choose_endpoint(env, os_home, config, fetch=False)
    except RegistryError as exc:
        problems.append({"code": exc.code, "message": exc.message})
        return None
    out = {**endpoint.to_json(), "label": endpoint.label, "discovery": None}
    if endpoint.site is not None and endpoint.kind in ("cached", "default"):
        # Commands would ask the site first; doctor never touches the network.
        out["discovery"] = f"{endpoint.site}/.well-known/clawhub.json (asked first by commands)"
    return out


def _skills_summary(
    obj: Context,
    config: Config,
    agent: str | None,
    workspace: Path,
    mode: str,
    env: Mapping[str, str],
    cwd: Path,
    compat: str | None = None,
) -> dict[str, Any] | None:
    from skillbook.diagnostics import Severity
    from skillbook.pipeline.book import Loader

    try:
        book = Loader(
            workspace, config=config, agent=agent, mode=mode, env=env, cwd=cwd, compat=compat
        ).load()
    except (SkillbookError, OSError):
        return None
    by_root: dict[str, int] = {}
    for root in book.discovery.roots:
        prefix = str(root.path).rstrip(os.sep) + os.sep
        by_root[str(root.path)] = sum(
            str(s.file_path).startswith(prefix) and s.source == root.source.value
            for s in book.discovery.loaded
        )
    return {
        "loaded": len(book.skills),
        "ready": sum(e.eligible for e in book.status.skills),
        "errors": sum(d.severity is Severity.ERROR for d in book.diagnostics),
        "warnings": sum(d.severity is Severity.WARNING for d in book.diagnostics),
        "bySource": by_root,
    }


def _row(label: str, value: str, why: str = "") -> str:
    return f"{label:<12}{value}" + (f"  ({why})" if why else "")


def doctor_lines(report: Mapping[str, Any]) -> list[str]:
    """The text form of :func:`doctor_report`."""
    cfg, ws, agent = report["config"], report["workspace"], report["agent"]
    lines = [
        f"skillbook {report['version']} (Python {report['python']})",
        "",
        _row("Home", report["home"]["path"], report["home"]["reason"]),
        _row("Config", cfg["file"] or "none", cfg["reason"]),
    ]
    lines += [_row("", f"not read: {p}") for p in cfg["notRead"]]
    if cfg["file"] is None and cfg["searched"]:
        lines.append(_row("", "looked for: " + ", ".join(cfg["searched"])))
    lines.append(_row("State dir", cfg["stateDir"], cfg["stateDirReason"]))
    who = agent["reason"] + ("; its allowlist applies" if agent["allowlist"] else "")
    lines.append(_row("Agent", agent["id"], who))
    lines.append(_row("", "known: " + ", ".join(agent["known"])))
    missing = "" if ws["exists"] else ", does not exist"
    lines.append(_row("Workspace", ws["path"], ws["reason"] + missing))
    lines.append(_row("Mode", report["mode"]["value"], report["mode"]["reason"]))
    compat = report["compat"]
    lines.append(
        _row("Compat", f"{compat['value']} (OpenClaw {compat['openclaw']})", compat["reason"])
    )
    bundled = report["bundledDir"]
    lines.append(_row("Bundled", bundled["path"] or "none", bundled["reason"]))
    registry = report["registry"]
    if registry is not None:
        lines.append(_row("Registry", registry["registry"], registry["registryReason"]))
        if registry["discovery"]:
            lines.append(_row("", f"site: {registry['discovery']}"))
        token = registry["tokenReason"] if registry["token"] else "none"
        lines.append(_row("", f"token: {token}"))
    if report["environment"]:
        lines.append(
            _row("Variables", ", ".join(f"{k}={v}" for k, v in report["environment"].items()))
        )
    lines += ["", "Skill roots (lowest precedence first):"]
    for root in report["roots"]:
        state = "ok" if root["exists"] else "missing"
        n = root.get("skills")
        count = f", {n} skill{'' if n == 1 else 's'}" if n is not None and root["exists"] else ""
        lines.append(f"  {root['source']:<24}{root['path']}  ({root['origin']}; {state}{count})")
    if report["mcpServers"]:
        lines.append(f"  {'mcp-remote':<24}{report['mcpServers']} servers (skills.mcp.servers)")
    skills = report["skills"]
    if skills is not None:
        lines += [
            "",
            f"Skills: {skills['loaded']} loaded, {skills['ready']} ready; "
            f"{skills['errors']} errors, {skills['warnings']} warnings"
            + (" (`skillbook check` says why)" if skills["errors"] or skills["warnings"] else ""),
        ]
    if report["problems"]:
        lines += ["", "Problems:"] + [f"  ✗ {p['message']}" for p in report["problems"]]
    return lines
