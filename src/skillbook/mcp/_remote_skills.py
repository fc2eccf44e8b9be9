"""Remote skill entries turned into skills: parsed, defanged, placed in their folder.

Input: a validated :class:`~skillbook.mcp._entries.SkillEntry`, the verified bytes of its
``SKILL.md`` (or none yet: :func:`synthetic_skill_md` builds one from the entry's
frontmatter) and where the skill is materialised. Output: a
:class:`~skillbook.model.Skill` with ``source=REMOTE`` and the server's origin, plus
diagnostics. Remote skills are data, never code: install specs, ``command-dispatch``
and ``skillKey`` overrides are dropped (:func:`defang`). Touches no disk and no server.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from skillbook import diagnostics as dg
from skillbook.diagnostics import Diagnostic
from skillbook.mcp import _skillformat as fmt
from skillbook.mcp._entries import SkillEntry
from skillbook.mcp.client import McpServerSpec
from skillbook.model import Skill, Source


def build_skill(
    entry: SkillEntry,
    data: bytes,
    *,
    spec: McpServerSpec,
    file_path: Path,
    base_dir: Path,
    diags: list[Diagnostic],
) -> Skill | None:
    """The skill of ``entry`` from its SKILL.md bytes (None when it has no description);
    findings go to ``diags``."""
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    parsed = parse_skill_text(data, path=file_path)
    diags.extend(parsed.diagnostics)
    if not parsed.description:
        return None
    parsed, dropped = defang(parsed)
    if dropped:
        diags.append(
            dg.info(
                "mcp.untrusted-fields",
                f"remote skill from {spec.name!r}: {', '.join(dropped)} ignored "
                "(remote skills never install, dispatch or borrow another config key)",
                path=file_path,
                skill=entry.name,
            )
        )
    return Skill(
        name=entry.name,
        description=parsed.description,
        file_path=file_path,
        base_dir=base_dir,
        source=Source.REMOTE,
        parsed=parsed,
        real_dir=base_dir,
        origin=spec.origin,
    )


def manifest_uri(entry: SkillEntry, base: Path, ref: str | os.PathLike[str]) -> str | None:
    """The manifest URI of ``ref`` (relative to the skill root, or a path inside
    ``base``), or None when the manifest does not list it."""
    raw = os.fspath(ref)
    if os.path.isabs(raw):
        try:
            raw = Path(os.path.normpath(raw)).relative_to(base).as_posix()
        except ValueError:
            return None
    rel = fmt.normalize_relative(raw)
    if rel is None:
        return None
    parts = tuple(rel.split("/"))
    return next((i.uri for i in entry.resources or () if entry.rel_parts(i.uri) == parts), None)


def synthetic_skill_md(entry: SkillEntry) -> bytes:
    """A frontmatter-only SKILL.md from the entry, for building a skill before any fetch."""
    import yaml

    text = yaml.safe_dump(
        dict(entry.frontmatter), sort_keys=False, allow_unicode=True, width=1 << 16
    )
    return f"---\n{text}---\n".encode()


def defang(parsed: Any) -> tuple[Any, list[str]]:
    """Drop the fields through which skill text could run code or take another's config."""
    dropped: list[str] = []
    meta = parsed.metadata
    if meta is not None and (meta.install or meta.skill_key is not None):
        if meta.install:
            dropped.append("install specs")
        if meta.skill_key is not None:
            dropped.append("skillKey")
        meta = dataclasses.replace(meta, install=None, skill_key=None)
    dispatch = parsed.dispatch
    if dispatch is not None:
        dropped.append("command-dispatch")
        dispatch = None
    return dataclasses.replace(parsed, metadata=meta, dispatch=dispatch), dropped
