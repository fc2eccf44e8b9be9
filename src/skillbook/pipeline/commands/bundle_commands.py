"""Claude-bundle slash commands: ``commands/*.md`` of enabled Claude bundles (spec §6.1 step 5).

Input: the :class:`~skillbook.pipeline.discovery.plugins.PluginRegistry` and the config. Output:
:class:`BundleCommand` values, in OpenClaw's order, that
:func:`skillbook.pipeline.commands.specs.build_command_specs` turns into commands after the skills'
(same name rules; the message for the model is the file's prompt template).

Each ``.md`` file under a command folder (``commands/`` and the manifest's
``commands`` entries, read as strict JSON as OpenClaw reads them there) is one
command, found recursively with hidden names skipped and links not followed, sorted
by full path. ``disable-model-invocation: true`` skips a file; so does an empty body.
The name is the frontmatter ``name``, else the path below the folder without the
extension, with ``/`` read as ``:`` (``workflows/review.md`` → ``workflows:review``);
the description is the frontmatter ``description``, else the body's first line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from skillbook import diagnostics as dg
from skillbook.base import fs as _fs
from skillbook.base import verified_read as _verified_read
from skillbook.base.js import js_trim, locale_compare_key
from skillbook.config.file import Config
from skillbook.config.limits import DEFAULT_MAX_SKILL_FILE_BYTES
from skillbook.diagnostics import Diagnostic
from skillbook.pipeline.discovery.plugin_manifest import (
    CLAUDE_MANIFEST,
    claude_command_roots,
    read_json_file,
)
from skillbook.pipeline.discovery.plugins import PluginPolicy, PluginRegistry, activation

__all__ = ["BundleCommand", "load_bundle_commands"]

#: ``disable-model-invocation`` values that skip a file (OpenClaw's bundle reader).
_TRUE: Final = frozenset({"true", "yes", "1"})


@dataclass(frozen=True, slots=True)
class BundleCommand:
    """One ``commands/*.md`` file of an enabled Claude bundle."""

    plugin_id: str
    raw_name: str
    description: str
    prompt_template: str
    source_file: Path


def load_bundle_commands(
    registry: PluginRegistry, config: Config
) -> tuple[tuple[BundleCommand, ...], tuple[Diagnostic, ...]]:
    """The commands of every enabled Claude bundle that has command folders."""
    policy = PluginPolicy.of(config.plugins, registry.bundled_aliases(), lower=True)
    commands: list[BundleCommand] = []
    diags: list[Diagnostic] = []
    for record in registry.records:
        if record.bundle_format != "claude" or "commands" not in record.capabilities:
            continue
        if not activation(record, policy, config, registry.channel_ids, channel_first=True)[0]:
            continue
        raw, _ = read_json_file(
            os.path.join(record.root_dir, CLAUDE_MANIFEST), record.root_dir, json5=False
        )
        manifest: Any = raw if isinstance(raw, dict) else {}
        root_real = _fs.try_realpath(record.root_dir) or record.root_dir
        for rel in claude_command_roots(manifest, record.root_dir):
            folder = _fs.abspath(os.path.join(record.root_dir, rel))
            real = _fs.try_realpath(folder) if os.path.exists(folder) else None
            if real is None:
                continue
            if not _fs.is_path_inside(root_real, real):
                diags.append(
                    dg.warning(
                        "plugin.path-escape",
                        f"plugin command path escapes plugin root ({record.id}): {folder}",
                        path=Path(folder),
                    )
                )
                continue
            _load_folder(record.id, folder, real, commands, diags)
    return tuple(commands), tuple(diags)


def _markdown_files(root: str) -> list[str]:
    pending, files = [root], []
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif entry.is_file(follow_symlinks=False) and entry.name.lower().endswith(".md"):
                files.append(entry.path)
    return sorted(files, key=locale_compare_key)


def _strip_frontmatter(text: str) -> str:
    normalized = text.replace("\r\n", "\n").replace("\r", "\n")
    if not normalized.startswith("---"):
        return js_trim(normalized)
    end = normalized.find("\n---", 3)
    return js_trim(normalized if end == -1 else normalized[end + 4 :])


def _load_folder(
    plugin_id: str,
    folder: str,
    real: str,
    commands: list[BundleCommand],
    diags: list[Diagnostic],
) -> None:
    # Imported here: a workspace without bundle commands never needs the parser (the
    # parse cache answers for skills), and `skillbook prompt` should not load it.
    from skillbook.pipeline.parse.frontmatter import parse_frontmatter_block
    from skillbook.pipeline.parse.text import decode_text, split_frontmatter

    for file in _markdown_files(folder):
        data = _verified_read.read_contained(
            file, root_real=real, max_bytes=DEFAULT_MAX_SKILL_FILE_BYTES
        )
        if isinstance(data, _verified_read.ReadFailure):
            code, _, message = _verified_read.describe_failure(data, file)
            diags.append(dg.warning(code, f"bundle command {message}", path=Path(file)))
            continue
        text = decode_text(data)[0]
        block = split_frontmatter(text)[0]
        values = parse_frontmatter_block(block)[0].values if block else {}
        hidden = js_trim(values.get("disable-model-invocation") or "").lower()
        if hidden in _TRUE:
            continue
        template = _strip_frontmatter(text)
        if not template:
            diags.append(
                dg.info(
                    "command.bundle-skipped",
                    f"{os.path.basename(file)} has no prompt after its frontmatter; it is not "
                    "a command",
                    path=Path(file),
                )
            )
            continue
        rel = os.path.splitext(os.path.relpath(file, folder))[0]
        raw_name = js_trim(values.get("name") or "") or rel.replace(os.sep, ":")
        first = next((t for t in (js_trim(line) for line in template.split("\n")) if t), "")
        description = js_trim(values.get("description") or "") or first or raw_name
        commands.append(BundleCommand(plugin_id, raw_name, description, template, Path(file)))
