"""Parse the text of one SKILL.md into a :class:`~skillbook.model.ParsedSkillFile`.

Input: the file's text or bytes (and optionally its path, for diagnostics).
Output: the frontmatter in OpenClaw's string view and a structured view, the body,
the ``metadata.openclaw`` manifest, the invocation policy, the tool dispatch and
every diagnostic found on the way. Nothing here touches the disk or raises on bad
input; discovery decides what to load.

The stages are modules of their own: decoding and splitting the text
(:mod:`skillbook.pipeline.parse.text`), the frontmatter block (:mod:`skillbook.pipeline.parse.frontmatter`,
OpenClaw's ``parseFrontmatterBlock``, spec §2.2-2.4: YAML and a line parser, merged)
and the invocation keys (:mod:`skillbook.pipeline.parse.invocation_policy`); this module runs them
and adds the diagnostics about the file as a whole. Where JavaScript semantics differ
from Python's (``\\s``, ``\\w``, ``trim``, object key order) we reproduce JavaScript's.
"""

from __future__ import annotations

import difflib
import logging
import re
from pathlib import Path

from skillbook import diagnostics as dg
from skillbook.base.js import js_trim
from skillbook.config.profile import FrontmatterRules
from skillbook.diagnostics import Diagnostic
from skillbook.model import Frontmatter, InvocationPolicy, ParsedSkillFile
from skillbook.pipeline.parse.frontmatter import (
    NONE_RELOADED,
    frontmatter_block,
)
from skillbook.pipeline.parse.frontmatter_rules import recovered, split_frontmatter_exact
from skillbook.pipeline.parse.invocation_policy import (
    resolve_dispatch,
    resolve_invocation,
)
from skillbook.pipeline.parse.manifest import DEFAULT_METADATA_KEY, resolve_metadata
from skillbook.pipeline.parse.text import decode_text, split_frontmatter

#: The stages' public names, importable from here as they always were.
__all__ = ["parse_skill_text"]

_log = logging.getLogger("skillbook.pipeline.parse.skill_file")


def parse_skill_text(
    text: str | bytes, *, path: Path | None = None, rules: FrontmatterRules | None = None
) -> ParsedSkillFile:
    """Parse one SKILL.md (text or bytes). Never raises; problems become diagnostics.

    ``rules`` are a compatibility profile's frontmatter rules (default: 2026.4's)."""
    try:
        return _parse(text, path, rules)
    except Exception as exc:
        # Bad input has its own diagnostics: reaching here is a bug in skillbook. It must
        # not take discovery down, and the traceback must not be lost.
        _log.error("internal error while parsing %s", path or "<text>", exc_info=exc)
        return ParsedSkillFile(
            frontmatter=Frontmatter(),
            body="",
            body_line=1,
            metadata=None,
            invocation=InvocationPolicy(),
            dispatch=None,
            diagnostics=(
                dg.error(
                    "parse.internal-error",
                    f"skillbook could not parse this file because of a bug in skillbook "
                    f"({type(exc).__name__}: {exc}); please report it with the file",
                    path=path,
                ),
            ),
        )


def _parse(text: str | bytes, path: Path | None, rules: FrontmatterRules | None) -> ParsedSkillFile:
    decoded, early, had_bom = decode_text(text)
    diags = [_with_path(d, path) for d in early] if early else []
    block, body, block_line, body_line, invalid = _split(decoded, rules, diags, path)
    if block is None:
        diags.append(_no_block(decoded, path))
        frontmatter, reloaded = Frontmatter(), NONE_RELOADED
    else:
        if not block:
            diags.append(
                dg.warning(
                    "parse.empty-frontmatter", "the frontmatter block is empty", path=path, line=1
                )
            )
        frontmatter, fm_diags, reloaded = frontmatter_block(block, path, block_line)
        diags.extend(fm_diags)
    if invalid is not None:
        diags.append(
            dg.error(
                "parse.frontmatter-invalid",
                f"{invalid}; OpenClaw 2026.9 does not load this skill (fix the YAML, or "
                "quote values that contain ': ')",
                path=path,
                line=1,
            )
        )
    values = frontmatter.values
    # Without a `metadata` text resolve_metadata has nothing to read (half of all skills).
    if values.get(DEFAULT_METADATA_KEY):
        metadata, meta_diags = resolve_metadata(
            values,
            frontmatter.data,
            path=path,
            lines=frontmatter.lines,
            rules=rules,
            loaded=reloaded.get(DEFAULT_METADATA_KEY),
        )
        diags.extend(meta_diags)
    else:
        metadata = None
    dispatch = None
    if "command-dispatch" in values or "command_dispatch" in values:  # else: none asked for
        dispatch, dispatch_diags = resolve_dispatch(values, path=path, lines=frontmatter.lines)
        diags.extend(dispatch_diags)
    diags.extend(_not_text(frontmatter, path))
    if block is not None and not js_trim(values.get("name") or ""):
        why, at = _why_missing("name", frontmatter, block, block_line)
        diags.append(
            dg.info(
                "parse.missing-name",
                f"no `name` in the frontmatter; the folder name is used{why}",
                path=path,
                line=at or block_line,
            )
        )
    if not js_trim(values.get("description") or ""):
        why, at = (
            _why_missing("description", frontmatter, block, block_line)
            if block is not None
            else _outside_block("description", decoded)
        )
        diags.append(
            dg.error(
                "parse.missing-description",
                "no `description` in the frontmatter: the skill is not loaded"
                f"{why or ' (add `description: <when to use this skill>`)'}",
                path=path,
                line=at or frontmatter.line_of("description") or (block_line or 1),
            )
        )
    return ParsedSkillFile(
        frontmatter=frontmatter,
        body=body,
        body_line=body_line,
        metadata=metadata,
        invocation=resolve_invocation(values),
        dispatch=dispatch,
        diagnostics=tuple(diags),
        had_bom=had_bom,
        has_frontmatter=block is not None,
        invalid=invalid is not None,
    )


#: What to write after an empty required key.
_WHAT = {"description": ": say what the skill does and when to use it"}


#: The fields OpenClaw reads as text whatever YAML made of them.
_TEXT_FIELDS = ("name", "description")


def _not_text(frontmatter: Frontmatter, path: Path | None) -> list[Diagnostic]:
    """``parse.field-type`` for a ``name`` or ``description`` that YAML read as a list,
    a mapping, a number or a boolean: OpenClaw turns it into text (``[x, y]`` becomes
    ``["x","y"]``) and so does skillbook, but the author meant something else. (When
    YAML failed, the line parser's values are all text.)"""
    found: list[Diagnostic] = []
    if not frontmatter.yaml_ok:
        return found
    for key in _TEXT_FIELDS:
        raw = frontmatter.data.get(key)
        if raw is None or isinstance(raw, str):
            continue
        kind = (
            "a list" if isinstance(raw, list)
            else "a mapping" if isinstance(raw, dict)
            else "a boolean" if isinstance(raw, bool)
            else "a number" if isinstance(raw, int | float)
            else "not text"
        )  # fmt: skip
        shown = frontmatter.values.get(key, "")
        found.append(
            dg.warning(
                "parse.field-type",
                f"`{key}` is {kind} in the YAML, read as the text {shown[:60]!r}; write it "
                "as plain text (quote it if it looks like a number or starts with [ or {)",
                path=path,
                line=frontmatter.line_of(key),
            )
        )
    return found


def _why_missing(
    key: str, frontmatter: Frontmatter, block: str | None, block_line: int
) -> tuple[str, int | None]:
    """Why a required key reads as missing when the file shows a likely slip, as a
    parenthesised clause and its line (``("", None)`` when it shows none).

    An author who wrote ``Description:``, ``descripton:`` or an indented
    ``description:`` is otherwise told to add a key they can see in their file."""
    if key in frontmatter.values or key in frontmatter.lines:
        return f" (`{key}:` has no value{_WHAT.get(key, '')})", frontmatter.line_of(key)
    for other in frontmatter.values:
        if other.lower() == key:
            return (
                f" (found `{other}:`; keys are case-sensitive: rename it `{key}:`)",
                frontmatter.line_of(other),
            )
    for other in frontmatter.values:
        if difflib.get_close_matches(other.lower(), [key], n=1, cutoff=0.7):
            return (
                f" (found `{other}:`; did you mean `{key}:`?)",
                frontmatter.line_of(other),
            )
    return _indented_key(key, block or "", block_line)


def _outside_block(key: str, text: str) -> tuple[str, int | None]:
    """A ``key:`` line in a file without a closed ``---`` block: the author wrote the
    key, but no frontmatter holds it (the fence is missing or never closed)."""
    found = re.search(rf"^{re.escape(key)}[ \t]*:", text, re.MULTILINE)
    if found is None:
        return "", None
    line = 1 + text.count("\n", 0, found.start())
    return (
        f" (line {line} `{key}:` is not inside a frontmatter block: the file needs a line "
        "`---` before the frontmatter and one after it)",
        line,
    )


def _indented_key(key: str, block: str, block_line: int) -> tuple[str, int | None]:
    """An indented ``key:`` line: neither YAML nor OpenClaw's line parser reads it as a
    top-level key, so the key looks missing though the author wrote it."""
    found = re.search(rf"^([ \t]+){re.escape(key)}[ \t]*:", block, re.MULTILINE)
    if found is None:
        return "", None
    line = block_line + block.count("\n", 0, found.start())
    indent = "a tab" if "\t" in found.group(1) else "spaces"
    return (
        f" (line {line} `{key}:` is indented with {indent}, so it is not a top-level key: "
        "start it at the beginning of the line)",
        line,
    )


def _split(
    decoded: str, rules: FrontmatterRules | None, diags: list[Diagnostic], path: Path | None
) -> tuple[str | None, str, int, int, str | None]:
    """``(block, body, block_line, body_line, invalid)``: the frontmatter block as the
    profile's rules find it (2026.9: exact delimiters, invalid YAML recovered where
    OpenClaw recovers it), and why OpenClaw 2026.9 would not load the file (or None)."""
    invalid: str | None = None
    if rules is not None and rules.exact_delimiters:
        block, body, block_line, body_line, opened = split_frontmatter_exact(decoded)
        if block is None and opened and rules.yaml_errors_invalid:
            invalid = "the `---` frontmatter block is never closed"
    else:
        block, body, block_line, body_line = split_frontmatter(decoded)
    if block and rules is not None and rules.yaml_errors_invalid:
        recovery = recovered(block, rules)
        block, invalid = recovery.block, recovery.invalid
        for key, line in recovery.requoted:
            diags.append(
                dg.info(
                    "parse.yaml-recovered",
                    f"`{key}` is not valid YAML as written; OpenClaw 2026.9 reads it as "
                    f'quoted text (write it quoted: {key}: "...")',
                    path=path,
                    line=block_line + line - 1,
                )
            )
    return block, body, block_line, body_line, invalid


def _no_block(decoded: str, path: Path | None) -> Diagnostic:
    unterminated = decoded.startswith("---")
    return dg.warning(
        "parse.unterminated-frontmatter" if unterminated else "parse.no-frontmatter",
        "the `---` frontmatter block is never closed (add a line `---` after it)"
        if unterminated
        else "the file does not start with a `---` frontmatter block",
        path=path,
        line=1,
    )


def _with_path(diag: Diagnostic, path: Path | None) -> Diagnostic:
    if path is None or diag.path is not None:
        return diag
    return Diagnostic(diag.code, diag.severity, diag.message, path, diag.line, diag.skill)
