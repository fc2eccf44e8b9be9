"""The Agent Skills (strict) rules, private to :mod:`skillbook.pipeline.validation.validate`.

Split out of the validation module because the rules and their messages are most of
it; :func:`strict_problems` is public through :mod:`skillbook.pipeline.validation.validate`.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from skillbook.base.fs import read_at_most
from skillbook.config.limits import DEFAULT_MAX_SKILL_FILE_BYTES
from skillbook.diagnostics import Diagnostic, Severity, describe_value

if TYPE_CHECKING:
    from skillbook.model import ParsedSkillFile

SKILL_FILE = "SKILL.md"
LOWERCASE_SKILL_FILE = "skill.md"
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500
#: The six fields the Agent Skills specification defines (skills-ref's ALLOWED_FIELDS).
SPEC_FIELDS: frozenset[str] = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# Upper case is reported on its own, so it does not count as an invalid character.
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
_NUM = r"(?:0|[1-9][0-9]*)"
_PRE = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
SEMVER_RE = re.compile(
    rf"{_NUM}\.{_NUM}\.{_NUM}(?:-{_PRE}(?:\.{_PRE})*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?"
)
# strictyaml's reader refuses what is outside its printable set; NEL, LS and PS are
# line breaks to YAML 1.1 readers (libyaml) and not to YAML 1.2 ones.
_NON_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
# Parse codes whose severity the lenient modes fix, whatever the parser chose.

_MSG: Mapping[str, str] = MappingProxyType({
    "not-skill-md": "the skill file is {file!r}; the standard requires a folder with a file named exactly SKILL.md",
    "lower-skill-md": "the folder has `skill.md` but no `SKILL.md`; rename it (OpenClaw and the standard need the exact name)",
    "missing-file": "Missing required file: SKILL.md",
    "standalone": "OpenClaw loads only folders with a SKILL.md, not {file!r}; use mixed or legacy mode for standalone Markdown skills",
    "not-md": "not a Markdown file; give a skill folder, its SKILL.md, or a `.md` file",
    "no-path": "the path does not exist",
    "too-large": (
        "SKILL.md is {size} bytes, over the {limit}-byte cap; OpenClaw and skillbook refuse to"
        " load it (raise skills.limits.maxSkillFileBytes or move material into references/)"
    ),
    "unreadable": "cannot read it: {exc}",
    "not-regular": "the skill file is not a regular file (a folder, FIFO, socket or device); it is not read",
    "symlink": "the skill file is a symbolic link; OpenClaw refuses it (copy the file instead)",
    "utf8": "the file is not valid UTF-8 ({reason} at byte {start}); save it as UTF-8",
    "bom": "the file starts with a byte-order mark; remove it (skills-ref and OpenClaw then see no frontmatter)",
    "no-open": "the file must start with a `---` line opening the YAML frontmatter",
    "open-line": "the opening line must be exactly `---`",
    "dashes": "`---` inside the frontmatter ends it early for skills-ref; remove or rephrase it",
    "unclosed": "the frontmatter is not closed by a `---` line",
    "yaml": "the frontmatter must be a YAML mapping that parses; strict mode does not accept OpenClaw's line-parser fallback{reason}",
    "tab": "a tab character; strict YAML readers (skills-ref) refuse tabs, use spaces",
    "char": "the frontmatter holds U+{cp:04X}, which YAML readers refuse or read as a line break; remove it",
    "token": "strict YAML readers (skills-ref) refuse {what}",
    "yaml-other": "YAML readers other than OpenClaw's refuse this frontmatter ({reason})",
    "indent": "nested mappings under one mapping must share one indentation; strictyaml refuses mixed indents",
    "unknown": "{key} is not an Agent Skills field; only {allowed} are allowed{hint}",
    "missing": "the required field `{key}` is missing",
    "type": "`{key}` must be a string, not {kind}{hint}",
    "empty": "`{key}` is empty",
    "too-long": "`{key}` is {n} characters; the limit is {limit}",
    "desc-dashes": "the description contains `---`, where skills-ref ends the frontmatter and cuts the text; use `--` or a dash",
    "name-case": "`name` {name!r} must be lowercase",
    "name-edge": "`name` must not start or end with a hyphen",
    "name-double": "`name` must not contain consecutive hyphens",
    "name-chars": "`name` {name!r} may hold only ASCII letters a-z, digits 0-9 and single hyphens",
    "name-dir": "`name` {name!r} must equal the folder name {folder!r}",
    "meta-type": "`metadata` must be a mapping of strings to strings, not {kind}",
    "meta-key": "`metadata` key {key!r} is {kind}; the standard wants string keys (quote it)",
    "meta-value": "`metadata.{key}` is {kind}; the standard wants string values ({hint})",
    "version": "`{key}` {value!r} is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.0.0)",
    "no-description": "no description: the skill cannot be offered to a model",
})  # fmt: skip

#: How a message names an empty YAML value (`key:` with nothing after it).
_NULL = "empty (null)"


@dataclass(slots=True)
class _Report:
    """Collects diagnostics for one file; ``code`` without a stage means ``validate.``."""

    path: Path | None
    skill: str | None
    found: list[Diagnostic] = field(default_factory=list)

    def add(
        self,
        code: str,
        msg: str,
        line: int | None = None,
        *,
        level: Severity = Severity.ERROR,
        **fmt: Any,
    ) -> None:
        full = code if "." in code else f"validate.{code}"
        text = _MSG[msg].format(**fmt)
        self.found.append(Diagnostic(full, level, text, self.path, line or None, self.skill))


# Links are followed (validate reports a linked SKILL.md and reads its target anyway).
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_skill_file(file_path: Path, rep: _Report, *, follow_report: bool = True) -> bytes | None:
    """The file's bytes; None (reported) when too large, not a regular file or
    unreadable. A symbolic link is followed, and reported unless ``follow_report`` is
    False (discovery has reported it already)."""
    if follow_report and file_path.is_symlink():
        rep.add("discover.symlinked-skill-md", "symlink")
    limit = DEFAULT_MAX_SKILL_FILE_BYTES
    try:
        # Non-blocking, and checked on the descriptor: a FIFO would block the open or
        # the read forever, and a device such as /dev/zero never ends.
        fd = os.open(file_path, _READ_FLAGS)
    except OSError as exc:
        rep.add("discover.unreadable", "unreadable", exc=exc)
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            rep.add("discover.not-regular-file", "not-regular")
            return None
        if info.st_size > limit:
            rep.add("discover.file-too-large", "too-large", size=info.st_size, limit=limit)
            return None
        data = read_at_most(fd, limit + 1, info.st_size)
    except OSError as exc:
        rep.add("discover.unreadable", "unreadable", exc=exc)
        return None
    finally:
        os.close(fd)
    if len(data) > limit:  # grew between the check and the read
        rep.add("discover.file-too-large", "too-large", size=len(data), limit=limit)
        return None
    return data


# ---------------------------------------------------------------- strict rules


def strict_problems(
    skill_dir: Path, parsed: ParsedSkillFile, *, file_path: Path, raw: str | bytes | None = None
) -> tuple[Diagnostic, ...]:
    """The Agent Skills rules for one skill, as ``validate.*`` diagnostics.

    ``raw`` is the file's content, read from ``file_path`` when not given: strict
    mode needs the bytes, since a BOM, the block layout and the YAML style are not
    visible in ``parsed``.
    """
    rep = _Report(file_path, parsed.name or None)
    if file_path.name != SKILL_FILE:
        rep.add("skill-file", "not-skill-md", file=file_path.name)
    if raw is None:
        raw = read_skill_file(file_path, rep, follow_report=False)
        if raw is None:
            return tuple(rep.found)
    text = _strict_text(raw, rep)
    block = None if text is None else _strict_block(text, parsed, rep)
    fm = parsed.frontmatter
    keys = None if block is None else _yaml_style(block, rep, parses=fm.yaml_ok)
    if block is not None and not fm.yaml_ok:
        why = next((d.message for d in parsed.diagnostics if d.code.startswith("parse.yaml")), "")
        rep.add("frontmatter", "yaml", 1, reason=f": {why}" if why else "")
    if fm.yaml_ok:
        if keys is None:
            keys = [(k, fm.lines.get(k, 0)) for k in fm.data]
        _field_problems(skill_dir, fm.data, keys, rep)
    return tuple(rep.found)


def _strict_text(raw: str | bytes, rep: _Report) -> str | None:
    """Decode as skills-ref does: strict UTF-8, BOM kept, universal newlines."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            rep.add("frontmatter", "utf8", reason=exc.reason, start=exc.start)
            return None
    if raw.startswith("\ufeff"):
        rep.add("frontmatter", "bom", 1)
        return None
    return raw.replace("\r\n", "\n").replace("\r", "\n")


def _strict_block(text: str, parsed: ParsedSkillFile, rep: _Report) -> str | None:
    """The frontmatter text, when OpenClaw and skills-ref both see the same block."""
    if not text.startswith("---"):
        rep.add("frontmatter", "no-open", 1)
        return None
    if not text.startswith("---\n"):
        rep.add("frontmatter", "open-line", 1)
        return None
    end = text.find("\n---", 3)  # OpenClaw: a line that starts with ---
    dashes = text.find("---", 3)  # skills-ref: --- anywhere
    if dashes != -1 and (end == -1 or dashes < end + 1):
        # A `---` inside the description is reported by the field checks, with its line.
        if not ("---" in parsed.description and parsed.frontmatter.yaml_ok):
            rep.add("frontmatter", "dashes", text.count("\n", 0, dashes) + 1)
        return None
    if end == -1:
        rep.add("frontmatter", "unclosed", 1)
        return None
    return text[4:end]


_REFUSED_TOKENS: Mapping[str, str] = MappingProxyType({
    "FlowMappingStartToken": "a flow mapping `{...}`; use block style (one `key: value` per line) or quote the text",
    "FlowSequenceStartToken": "a flow sequence `[...]`; use a block list (`- item` lines) or quote the text",
    "TagToken": "an explicit tag (`!...`); remove it",
    "AnchorToken": "an anchor (`&...`); anchors and aliases are not allowed",
    "AliasToken": "an alias (`*...`); anchors and aliases are not allowed",
    "DirectiveToken": "a directive (`%...`)",
})  # fmt: skip


def _yaml_style(block: str, rep: _Report, *, parses: bool) -> list[tuple[Any, int]] | None:
    """Report YAML that strictyaml refuses although a YAML 1.2 parser accepts it.

    Returns the top-level keys exactly as written, with their lines (None when the
    block cannot be composed): the parser's ``data`` trims keys, skills-ref does not.
    Block line 0 is file line 2.
    """
    import yaml

    if _refused_chars(block, rep):
        return None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        if _token_problems(block, loader, rep):
            return None  # composing could expand an alias bomb
        root = yaml.compose(block, Loader=loader)
    except yaml.YAMLError as exc:
        if parses:  # otherwise the frontmatter error says it already
            rep.add("yaml-style", "yaml-other", reason=(str(exc).splitlines() or ["?"])[0])
        return None
    _indent_problems(root, rep)
    if not isinstance(root, yaml.MappingNode):
        return None
    return [
        (k.value if isinstance(k, yaml.ScalarNode) else None, k.start_mark.line + 2)
        for k, _ in root.value
    ]


def _refused_chars(block: str, rep: _Report) -> bool:
    """A character strictyaml refuses (reported): a non-printable one, or a tab."""
    hostile = _NON_PRINTABLE.search(block)
    if hostile is not None:
        rep.add(
            "yaml-style", "char", block.count("\n", 0, hostile.start()) + 2, cp=ord(hostile.group())
        )
        return True
    tab = block.find("\t")
    if tab != -1:
        # strictyaml's scanner refuses a tab where a token may start (after `key:`,
        # in indentation); inside text it would pass, but telling the two apart needs
        # its scanner. Spaces are always safe.
        rep.add("yaml-style", "tab", block.count("\n", 0, tab) + 2)
        return True
    return False


def _token_problems(block: str, loader: Any, rep: _Report) -> bool:
    """Report the refused tokens (one report a line); True when there are anchors or
    aliases. Raises ``yaml.YAMLError`` when the block does not scan."""
    import yaml

    aliased = False
    previous, reported = "", set[int]()
    for token in yaml.scan(block, Loader=loader):
        kind, line = type(token).__name__, token.start_mark.line + 2
        what = _REFUSED_TOKENS.get(kind)
        plain = kind == "ScalarToken" and getattr(token, "plain", False)
        if previous == "KeyToken" and plain and getattr(token, "value", None) == "<<":
            what = "a merge key `<<`"
        aliased = aliased or kind in ("AnchorToken", "AliasToken")
        if what is not None and line not in reported:  # one-line JSON holds many tokens
            reported.add(line)
            rep.add("yaml-style", "token", line, what=what)
        previous = kind
    return aliased


def _indent_problems(root: Any, rep: _Report) -> None:
    """Mappings whose nested mappings sit at different columns (strictyaml refuses it)."""
    import yaml

    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            columns: set[int] = set()
            for key, value in node.value:
                stack.extend((key, value))
                if isinstance(value, yaml.MappingNode):
                    columns.add(value.start_mark.column)
                    if len(columns) > 1:
                        rep.add("yaml-style", "indent", value.start_mark.line + 2)
                        columns = {value.start_mark.column}
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def _field_problems(
    skill_dir: Path, data: Mapping[str, Any], keys: Sequence[tuple[Any, int]], rep: _Report
) -> None:
    lines = {k: line for k, line in keys if isinstance(k, str)}
    allowed = ", ".join(sorted(SPEC_FIELDS))
    for key, at in keys:
        if not isinstance(key, str) or key not in SPEC_FIELDS:
            hint = " (put a version in `metadata.version`)" if key == "version" else ""
            shown = "a non-scalar key" if key is None else f"`{key}`"
            rep.add("unknown-field", "unknown", at, key=shown, allowed=allowed, hint=hint)
    for key in ("name", "description", "license", "compatibility", "allowed-tools"):
        value, line = data.get(key), lines.get(key)
        if key not in data:
            if key in ("name", "description"):
                rep.add(
                    "name-invalid" if key == "name" else "description-length", "missing", key=key
                )
        elif not isinstance(value, str):
            code = "compatibility-length" if key == "compatibility" else "field-type"
            hint = "" if isinstance(value, Mapping | list) else "; quote it"
            rep.add(code, "type", line, key=key, kind=describe_value(value, null=_NULL), hint=hint)
        elif key == "name":
            _name_problems(value.strip(), skill_dir, rep, line)
        elif key in ("description", "compatibility"):
            _length_problems(key, value, rep, line)
    if "metadata" in data:
        _metadata_problems(data["metadata"], rep, lines.get("metadata"))


def _length_problems(key: str, value: str, rep: _Report, line: int | None) -> None:
    code = f"{key}-length"
    limit = MAX_DESCRIPTION_LENGTH if key == "description" else MAX_COMPATIBILITY_LENGTH
    if not value.strip():
        rep.add(code, "empty", line, key=key)
    elif len(value) > limit:  # skills-ref counts code points of the unstripped value
        rep.add(code, "too-long", line, key=key, n=len(value), limit=limit)
    if key == "description" and "---" in value:
        rep.add(code, "desc-dashes", line)


def _name_problems(name: str, skill_dir: Path, rep: _Report, line: int | None) -> None:
    if not name:
        rep.add("name-invalid", "empty", line, key="name")
        return
    before = len(rep.found)
    if len(name) > MAX_NAME_LENGTH:
        rep.add("name-invalid", "too-long", line, key="name", n=len(name), limit=MAX_NAME_LENGTH)
    if name != name.lower():
        rep.add("name-invalid", "name-case", line, name=name)
    if name.startswith("-") or name.endswith("-"):
        rep.add("name-invalid", "name-edge", line)
    if "--" in name:
        rep.add("name-invalid", "name-double", line)
    if any(c not in _NAME_CHARS for c in name) or (
        len(rep.found) == before and not NAME_RE.fullmatch(name)
    ):
        rep.add("name-invalid", "name-chars", line, name=name)
    if len(rep.found) > before:
        return
    folder = Path(os.path.abspath(skill_dir)).name
    if folder != name:
        rep.add("name-mismatch", "name-dir", line, name=name, folder=folder)


def _metadata_problems(meta: Any, rep: _Report, line: int | None) -> None:
    if not isinstance(meta, Mapping):
        rep.add("field-type", "meta-type", line, kind=describe_value(meta, null=_NULL))
        return
    for key, value in meta.items():
        warn = Severity.WARNING
        if not isinstance(key, str):
            rep.add(
                "field-type",
                "meta-key",
                line,
                level=warn,
                key=key,
                kind=describe_value(key, null=_NULL),
            )
        if not isinstance(value, str):
            nested = isinstance(value, Mapping | list)
            hint = "skills-ref turns it into a Python repr string" if nested else "quote it"
            rep.add(
                "field-type",
                "meta-value",
                line,
                level=warn,
                key=key,
                kind=describe_value(value, null=_NULL),
                hint=hint,
            )
    _version_problems(meta.get("version"), "metadata.version", rep, line)


def _version_problems(value: Any, key: str, rep: _Report, line: int | None) -> None:
    if value is None or (isinstance(value, str) and SEMVER_RE.fullmatch(value.strip())):
        return
    rep.add("version", "version", line, level=Severity.WARNING, key=key, value=value)
