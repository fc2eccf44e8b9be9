"""Text renderers for the CLI: each takes library objects and returns lines.

OpenClaw's wording is kept where users know it (``Skills (3/5 ready)``, the
status words, ``Skills Status Check``); skillbook adds what OpenClaw leaves out:
the skills that were not loaded, shadowed or cut from the prompt, and why.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from skillbook.base.surrogates import without_surrogates
from skillbook.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:  # types only: `skillbook scan` imports this module and needs no catalog
    from skillbook.pipeline.book import SkillBook
    from skillbook.pipeline.gating.gate import Requirements
    from skillbook.pipeline.gating.status import StatusEntry

STATUS_TEXT = {
    "ready": "✓ ready",
    "disabled": "⏸ disabled",
    "blocked": "🚫 blocked",
    "needs-setup": "△ needs setup",
}
STATUS_TITLE = {
    "ready": "✓ Ready",
    "disabled": "⏸ Disabled",
    "blocked": "🚫 Blocked by allowlist",
    "needs-setup": "△ Needs setup",
}
DEFAULT_EMOJI = "📦"

# ANSI escapes, then C0 (but tab/newline) and C1 controls: never let a skill's text
# drive the reader's terminal or break JSON consumers (OpenClaw strips them too).
_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    # Lone surrogates (a folder name that is not UTF-8) stopped every command that
    # printed one with a UnicodeEncodeError: no UTF-8 stream encodes them.
    return without_surrogates(_CONTROL_RE.sub("", _ANSI_RE.sub("", text)))


def sanitize_json(value: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [sanitize_json(v) for v in value]
    if isinstance(value, dict):
        return {clean(k) if isinstance(k, str) else k: sanitize_json(v) for k, v in value.items()}
    return value


def emoji(entry: StatusEntry) -> str:
    # U+FE0E asks for text presentation; a table wants the emoji form.
    return (entry.emoji or DEFAULT_EMOJI).replace("\ufe0e", "\ufe0f")


def missing_summary(missing: Requirements) -> str:
    parts = []
    for label, items in (
        ("bins", missing.bins),
        ("anyBins", missing.any_bins),
        ("env", missing.env),
        ("config", missing.config),
        ("os", missing.os),
    ):
        if items:
            parts.append(f"{label}: {', '.join(items)}")
    return "; ".join(parts)


#: Severity order, worst first; ``check --fail-on`` counts from a level up.
SEVERITY_RANK = {Severity.ERROR: 2, Severity.WARNING: 1, Severity.INFO: 0}


def count_at_least(diags: Iterable[Diagnostic], level: str) -> int:
    """How many diagnostics are of severity ``level`` or worse."""
    floor = SEVERITY_RANK[Severity(level)]
    return sum(SEVERITY_RANK[d.severity] >= floor for d in diags)


def collapse(diags: Iterable[Diagnostic]) -> list[tuple[Diagnostic, tuple[int, ...]]]:
    """One entry per (file, code, severity, message), with every line it occurs on.

    A tab on twelve lines is one finding to fix, not twelve lines of output.
    """
    groups: dict[tuple[object, ...], tuple[Diagnostic, list[int]]] = {}
    for d in diags:
        key = (d.path, d.code, d.severity, d.message, d.skill)
        _first, lines = groups.setdefault(key, (d, []))
        if d.line is not None and d.line not in lines:
            lines.append(d.line)
    return [(d, tuple(sorted(lines))) for d, lines in groups.values()]


def where(path: str | None, lines: Sequence[int]) -> str:
    """``path:3,7,9: `` (or ``path: ``, or nothing)."""
    if path is None:
        return ""
    return path + (":" + ",".join(map(str, lines)) if lines else "") + ": "


def diagnostics_by_severity(diags: Iterable[Diagnostic]) -> dict[Severity, list[Diagnostic]]:
    out: dict[Severity, list[Diagnostic]] = {s: [] for s in Severity}
    for d in diags:
        out[d.severity].append(d)
    return out


def workspace_hint(book: SkillBook) -> list[str]:
    """A line when the workspace has no ``skills/`` but holds skill folders itself: the
    user passed the skills folder (``-w proj/skills``) or kept skills beside it, and
    sees only the bundled skills with no word of theirs. A few stats, no walk."""
    ws = book.workspace
    if ws is None or (ws / "skills").exists() or (ws / ".agents" / "skills").exists():
        return []
    try:
        found = sorted(p.parent.name for p in ws.glob("*/SKILL.md"))
    except OSError:
        return []
    if not found:
        return []
    shown = ", ".join(f"{name}/" for name in found[:3]) + (", …" if len(found) > 3 else "")
    if ws.name == "skills":
        fix = f"pass the folder that holds it: -w {ws.parent}"
    else:
        fix = f"move them into {ws / 'skills'}/"
    return [
        "",
        f"⚠ {ws} holds skill folders ({shown}) but skills load from "
        f"<workspace>/skills/, and it has none: {fix}",
    ]


def footer(book: SkillBook) -> list[str]:
    """One line that points at what went wrong, if anything did."""
    groups = diagnostics_by_severity(book.diagnostics)
    errors, warnings = len(groups[Severity.ERROR]), len(groups[Severity.WARNING])
    omitted = len(book.catalog.omitted)
    bits = []
    if errors:
        bits.append(f"{errors} error{'s' if errors != 1 else ''}")
    if warnings:
        bits.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    if omitted:
        bits.append(f"{omitted} left out of the prompt")
    if not bits:
        return workspace_hint(book)
    return ["", f"⚠ {', '.join(bits)}: run `skillbook check` to see why.", *workspace_hint(book)]


def info_lines(book: SkillBook, entry: StatusEntry) -> list[str]:
    e = entry.eligibility
    lines = [f"{emoji(entry)} {entry.name} {STATUS_TITLE[e.status]}", "", clean(entry.description)]
    lines += [
        "",
        "Details:",
        f"  Source: {entry.source}",
        f"  Path: {_home(book, str(entry.file_path))}",
    ]
    if entry.origin:
        lines.append(f"  Origin: {entry.origin} (a remote MCP server; never run as a skill)")
    if entry.homepage:
        lines.append(f"  Homepage: {entry.homepage}")
    if entry.primary_env:
        lines.append(f"  Primary env: {entry.primary_env}")
    shadow = [s for s in book.discovery.shadowed if s.winner.file_path == entry.file_path]
    for s in shadow:
        lines.append(f"  Shadows: {s.hidden.source} {_home(book, str(s.hidden.file_path))}")
    req, miss = e.requirements, e.missing
    if not req.is_empty:
        lines += ["", "Requirements:"]
        if req.bins:
            lines.append("  Binaries: " + _marks(req.bins, miss.bins))
        if req.any_bins:
            ok = not miss.any_bins
            lines.append(
                "  Any binaries: " + ", ".join(f"{'✓' if ok else '✗'} {b}" for b in req.any_bins)
            )
        if req.env:
            lines.append("  Environment: " + _marks(req.env, miss.env))
        if req.config:
            lines.append("  Config: " + _marks(req.config, miss.config))
        if req.os:
            lines.append("  OS: " + _marks(req.os, miss.os))
    if not e.eligible and entry.install:
        lines += ["", "Install options:"] + [f"  → {o.label}" for o in entry.install]
        # OpenClaw's list ends there; a reader who has not met `setup` is left with
        # labels and no command to run.
        lines.append(
            f"  Run `skillbook setup {shlex.quote(entry.name)}` (a security scan first; "
            "--dry-run shows the commands)"
        )
    if entry.primary_env and entry.primary_env in miss.env:
        lines += ["", "API key setup:"]
        if entry.homepage:
            lines.append(f"  Get your key: {entry.homepage}")
        lines.append(f"  Set it in the environment: export {entry.primary_env}=YOUR_KEY")
        lines.append(
            f"  Or save it in {_config_file(book)}: "
            f"skills.entries{_key_path(entry.skill_key)}.apiKey"
        )
    diags = [d for d in book.diagnostics if d.path is not None and _concerns(d, entry)]
    if diags:
        lines += ["", "Diagnostics:"] + [f"  {line}" for line in diag_lines(book, diags)]
    return lines


def check_lines(book: SkillBook) -> list[str]:
    s = book.status.summary()
    lines = [
        "Skills Status Check",
        "",
        f"Total: {s['total']}",
        f"✓ Eligible: {s['eligible']}",
        f"⏸ Disabled: {s['disabled']}",
        f"🚫 Blocked by allowlist: {s['blocked']}",
        f"✗ Missing requirements: {s['missingRequirements']}",
    ]
    ready = [e for e in book.status.skills if e.eligible]
    if ready:
        lines += ["", "Ready to use:"] + [f"  {emoji(e)} {e.name}" for e in ready]
    needs = [
        e
        for e in book.status.skills
        if not e.eligible and not e.disabled and not e.blocked_by_allowlist
    ]
    if needs:
        lines += ["", "Missing requirements:"]
        lines += [
            f"  {emoji(e)} {e.name} ({missing_summary(e.eligibility.missing)})" for e in needs
        ]
    filtered = filtered_out(book)
    if filtered:
        who = f"agent {book.agent!r}" if book.agent else "the agent"
        lines += ["", f"Ready but not offered to {who} (agents skills allowlist):"]
        lines += [f"  {name}" for name in filtered]
    hidden = model_hidden(book)
    if hidden:
        lines += ["", "Kept out of the prompt catalog (disable-model-invocation: true):"]
        lines += [f"  {name}" for name in hidden]
    if book.excluded:
        lines += ["", f"Excluded by {book.mode} mode:"] + [f"  {s.name}" for s in book.excluded]
    if book.catalog.omitted:
        lines += ["", "Left out of the prompt (budget):"]
        lines += [f"  {s.name} ({s.source})" for s in book.catalog.omitted]
    if book.catalog.compact:
        lines += [
            "",
            "Prompt catalog: compact format (names and locations, no descriptions), "
            "to fit skills.limits.maxSkillsPromptChars.",
        ]
    if book.discovery.shadowed:
        lines += ["", "Shadowed (a higher-precedence skill has the same name):"]
        for sh in book.discovery.shadowed:
            lines.append(
                f"  {sh.name}: {sh.winner.source} hides {sh.hidden.source} "
                f"{_home(book, str(sh.hidden.file_path))}"
            )
    groups = diagnostics_by_severity(book.diagnostics)
    # Shadowing and the compact format have their own sections above.
    shipped: list[Diagnostic] = []
    listed: list[Diagnostic] = []
    for d in groups[Severity.INFO]:
        if d.code not in _SHOWN_ABOVE:
            (shipped if _shipped(d) else listed).append(d)
    groups[Severity.INFO] = listed
    for severity, title in (
        (Severity.ERROR, "Not loaded or rejected"),
        (Severity.WARNING, "Warnings"),
        (Severity.INFO, "Notes"),
    ):
        if groups[severity]:
            lines += ["", f"{title}:"] + [
                f"  {line}" for line in diag_lines(book, groups[severity])
            ]
    if shipped:
        # Notes on the skills skillbook ships (a field read by another OpenClaw
        # release) ask nothing of the user, who cannot edit those files: counted, not
        # listed, so that the user's own notes stand out; --json lists them all.
        lines += [
            "",
            f"{len(shipped)} note(s) on the skills skillbook ships, none needing anything "
            "from you (check --json lists them).",
        ]
    return lines + workspace_hint(book)


def _shipped(d: Diagnostic) -> bool:
    """Whether ``d`` is about a file of the skills in skillbook's own package."""
    from skillbook.config.paths import PACKAGE_BUNDLED_DIR

    return d.path is not None and d.path.is_relative_to(PACKAGE_BUNDLED_DIR)


_SHOWN_ABOVE = frozenset({"discover.shadowed", "discover.duplicate-realpath", "prompt.compact"})


def filtered_out(book: SkillBook) -> list[str]:
    """Ready skills that the skill filter (the agent's allowlist) keeps from the agent."""
    offered = {s.file_path for s in book.eligible}
    return [e.name for e in book.status.skills if e.eligible and e.file_path not in offered]


def model_hidden(book: SkillBook) -> list[str]:
    """Offered skills that ask to stay out of the catalog (slash command only)."""
    return [s.name for s in book.eligible if s.disable_model_invocation]


def _config_file(book: SkillBook) -> str:
    """The config file in use, else the one skillbook would read by default."""
    if book.config.file is not None:
        return _home(book, str(book.config.file))
    default = book.paths.config_path or book.paths.state_dir / "skillbook.json"
    return _home(book, str(default))


def _key_path(key: str) -> str:
    return f".{key}" if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", key) else f'["{key}"]'


def check_json(book: SkillBook) -> dict[str, Any]:
    """``check --json``: OpenClaw's five keys, then what skillbook adds."""
    entries = book.status.skills
    return {
        "summary": book.status.summary(),
        "eligible": [e.name for e in entries if e.eligible],
        "disabled": [e.name for e in entries if e.disabled],
        "blocked": [e.name for e in entries if e.blocked_by_allowlist and not e.disabled],
        "missingRequirements": [
            {
                "name": e.name,
                "missing": e.eligibility.missing.to_json(),
                "install": [o.to_json() for o in e.install],
            }
            for e in entries
            if not e.eligible and not e.disabled and not e.blocked_by_allowlist
        ],
        "filteredOut": filtered_out(book),
        "omittedFromPrompt": [s.name for s in book.catalog.omitted],
        "promptCompact": book.catalog.compact,
        "hiddenFromPrompt": model_hidden(book),
        "shadowed": [
            {
                "name": s.name,
                "winner": {"source": s.winner.source, "filePath": str(s.winner.file_path)},
                "hidden": {"source": s.hidden.source, "filePath": str(s.hidden.file_path)},
            }
            for s in book.discovery.shadowed
        ],
        "excluded": [s.name for s in book.excluded],
        "diagnostics": [d.to_dict() for d in book.diagnostics],
    }


def _marks(items: Sequence[str], missing: Sequence[str]) -> str:
    gone = set(missing)
    return ", ".join(f"{'✗' if i in gone else '✓'} {i}" for i in items)


def _concerns(d: Diagnostic, entry: StatusEntry) -> bool:
    return d.path == entry.file_path or d.path == entry.base_dir


def _home(book: SkillBook, path: str) -> str:
    home = str(book.paths.home)
    if path == home or path.startswith(home.rstrip("/") + "/"):
        return "~" + path[len(home.rstrip("/")) :]
    return path


def diag_lines(book: SkillBook, diags: Iterable[Diagnostic]) -> list[str]:
    """``~/path:3,7: [code] message`` per distinct finding (repeats collapsed)."""
    out = []
    for d, lines in collapse(diags):
        path = _home(book, str(d.path)) if d.path is not None else None
        out.append(clean(f"{where(path, lines)}[{d.code}] {d.message}"))
    return out
