"""YAML 1.2 core-schema loading with the semantics of the JS ``yaml`` package.

Input: the text of a frontmatter block. Output: plain Python values (``dict`` in
JavaScript key order, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``).

OpenClaw parses frontmatter with ``YAML.parse(block, {schema: "core"})``. PyYAML is
YAML 1.1 (``yes`` is a boolean, dates become timestamps, duplicate keys pass), so we
only borrow its scanner and parser (libyaml through ``CParser`` when available) and
build values from the event stream ourselves. That gives us, in one pass: core-schema
scalars, refusal of duplicate keys, the JS package's alias budget
(``maxAliasCount: 100``) so a "billion laughs" block is refused in microseconds,
a nesting bound, and no merge keys, timestamps, sets or binaries.

Where libyaml (YAML 1.1) and the JS package disagree on what is valid, we follow the
JS package, because its verdict decides whether OpenClaw falls back to its line
parser: control characters, NEL and U+2028/9 are content; quoted and flow values
must be indented past their key; a block scalar may not sit at its key's column; a
comment needs white space before it; ``-<tab>`` is a sequence entry. Found by
differential testing against OpenClaw (tests/conformance/test_parse_oracle.py).

This module is imported lazily (by :mod:`skillbook.pipeline.parse.skill_file` at first use) so that
``import skillbook`` does not load PyYAML.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml import events as ev

from skillbook.base.js import js_key_order, js_string
from skillbook.pipeline.parse.yaml_simple import resolve_plain as _resolve_plain
from skillbook.pipeline.parse.yaml_simple import simple_mapping

#: The JS package's default ``maxAliasCount``.
DEFAULT_MAX_ALIAS_COUNT = 100
#: Collections nested deeper than this are refused (``YamlError("too-deep")``).
DEFAULT_MAX_DEPTH = 100

_CORE_TAG = "tag:yaml.org,2002:"
#: libyaml's problem text when its scanner's nesting bound is hit.
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"


# Characters libyaml refuses or treats as line breaks while YAML 1.2 (and the JS
# package) reads them as plain content: C0/C1 controls, DEL, NEL, LS, PS, surrogates
# and the two non-characters; also U+FEFF, which libyaml skips at the start of every
# line (the JS package only at the start of the text). They are swapped for unused
# private-use characters before parsing and swapped back in every string afterwards.
_LIBYAML_HOSTILE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
)
_DASH_PREFIX = re.compile(r" *(?:-[ \t]+)*-[ \t]*")
#: Repairs (a tab after `-`, an empty key) tried before the block is given up.
_MAX_REPAIRS = 20


class YamlError(ValueError):
    """The block is not YAML we accept. ``kind`` is a stable slug, ``line`` 1-based in the block."""

    def __init__(self, message: str, *, kind: str = "invalid", line: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.line = line


@dataclass(slots=True)
class _Anchor:
    """The JS package's per-anchor bookkeeping (``{count, aliasCount, res}``)."""

    value: Any
    shape: Any
    count: int = 1
    alias_count: int = 0
    open: bool = True


@dataclass(slots=True)
class _Frame:
    container: Any  # list or dict
    shape: list[Any]
    anchor: _Anchor | None
    line: int
    flow: bool
    column: int
    is_map: bool
    #: The pending key of a mapping, already as the JS property name.
    key: str = ""
    has_key: bool = False
    seen: set[Any] = field(default_factory=set)
    key_lines: dict[str, int] | None = None


def load_core_with_lines(
    text: str,
    *,
    max_alias_count: int = DEFAULT_MAX_ALIAS_COUNT,
    max_depth: int = DEFAULT_MAX_DEPTH,
    fast: bool = True,
) -> tuple[Any, dict[str, int]]:
    """Parse one YAML document with core-schema semantics (raise :class:`YamlError`), and
    the 1-based line of each top-level mapping key.

    ``fast``: answer the plainest blocks without the parser (:mod:`._yaml_simple`);
    False when the caller already tried that."""
    simple = simple_mapping(text) if fast else None
    if simple is not None:
        return simple
    return _load_full(text, max_alias_count=max_alias_count, max_depth=max_depth)


def _load_full(text: str, *, max_alias_count: int, max_depth: int) -> tuple[Any, dict[str, int]]:
    """The event-stream path of :func:`load_core_with_lines` (every block it accepts)."""
    restore: dict[int, int] = {}
    # The JS package ends a block scalar at end of input with a line break, as if the
    # text had one; libyaml keeps none. A final newline is otherwise neutral.
    if not text.endswith("\n"):
        text += "\n"
    # A leading BOM is a BOM for both parsers: leave it alone.
    start = 1 if text.startswith("\ufeff") else 0
    if _LIBYAML_HOSTILE.search(text, start):
        masked, restore = _mask(text[start:])
        text = text[:start] + masked
    for _ in range(_MAX_REPAIRS):
        try:
            return _Builder(text, restore, max_alias_count, max_depth).run()
        except YamlError:
            raise
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            patched = _untab_block_indicator(text, exc.problem, mark)
            if patched is None:
                patched = _key_empty_implicit(text, exc.problem, mark)
            if patched is not None:
                text = patched
                continue
            line = mark.line + 1 if mark is not None else None
            problem = exc.problem or exc.context or "invalid YAML"
            # libyaml's own bound (1000 flow levels) stops it before our event count does.
            kind = "too-deep" if problem == _LIBYAML_TOO_DEEP else "invalid"
            raise YamlError(problem, kind=kind, line=line) from None
        except RecursionError:
            raise YamlError(f"nesting deeper than {max_depth} levels", kind="too-deep") from None
        except (yaml.YAMLError, UnicodeError, ValueError, MemoryError) as exc:
            raise YamlError(str(exc) or "invalid YAML") from None
    raise YamlError("too many tabs after `-` indicators or empty keys")


def _untab_block_indicator(text: str, problem: str | None, mark: Any) -> str | None:
    """``-<tab>item``: the JS package takes the tab as separation, libyaml refuses it.

    On that refusal, turn the one offending tab into a space (same column) and retry.
    Only a tab that follows a ``-`` indicator at the start of its line qualifies, so
    the text of block scalars is never touched (libyaml never fails inside them).
    """
    if mark is None or problem != "found character that cannot start any token":
        return None
    lines = text.split("\n")
    if mark.line >= len(lines):
        return None
    line = lines[mark.line]
    head = line[: mark.column]
    rest = line[mark.column :].lstrip(" \t")
    if line[mark.column : mark.column + 1] != "\t" or not _DASH_PREFIX.fullmatch(head):
        return None
    if rest[:1] == "-" and rest[1:2] in ("", " ", "\t"):
        return None  # a nested sequence after a tab: the JS package refuses it too
    lines[mark.line] = head + " " + line[mark.column + 1 :]
    return "\n".join(lines)


def _key_empty_implicit(text: str, problem: str | None, mark: Any) -> str | None:
    """``: value`` at the start of a line: the JS package reads a pair with an empty key
    (the property ``""``), libyaml wants a key first. Write the empty key out (``"":``,
    the same property) and retry; the line numbers stay."""
    if mark is None or problem != "did not find expected key":
        return None
    lines = text.split("\n")
    if mark.line >= len(lines):
        return None
    line = lines[mark.line]
    column = mark.column
    if (
        line[column : column + 1] != ":"
        or line[:column].strip(" ")
        or line[column + 1 : column + 2] not in ("", " ", "\t")
    ):
        return None
    lines[mark.line] = line[:column] + '""' + line[column:]
    return "\n".join(lines)


def _mask(text: str) -> tuple[str, dict[int, int]]:
    hostile = sorted(set(_LIBYAML_HOSTILE.findall(text)))
    present = set(text)
    spare = (chr(c) for c in range(0xE000, 0xF900) if chr(c) not in present)
    forward: dict[int, int] = {}
    for ch in hostile:
        substitute = next(spare, None)
        if substitute is None:
            break  # pathological text: let libyaml refuse it
        forward[ord(ch)] = ord(substitute)
    return text.translate(forward), {v: k for k, v in forward.items()}


def _new_parser(text: str) -> Any:
    try:
        from yaml._yaml import CParser
    except ImportError:  # PyYAML built without libyaml: same events, slower.
        from yaml.parser import Parser
        from yaml.reader import Reader
        from yaml.scanner import Scanner

        class _PyParser(Reader, Scanner, Parser):
            def __init__(self, stream: str) -> None:
                Reader.__init__(self, stream)
                Scanner.__init__(self)
                Parser.__init__(self)

        return _PyParser(text)
    return CParser(text)


# Event classes, compared by identity: both parsers build exactly these classes.
_SCALAR = ev.ScalarEvent
_ALIAS = ev.AliasEvent
_MAPPING_START = ev.MappingStartEvent
_SEQUENCE_START = ev.SequenceStartEvent
_MAPPING_END = ev.MappingEndEvent
_SEQUENCE_END = ev.SequenceEndEvent
_DOCUMENT_START = ev.DocumentStartEvent
_STREAM_END = ev.StreamEndEvent
# First characters of plain scalars that the core schema may read as non-strings.
_RESOLVABLE = frozenset("0123456789+-.~nNtTfF")


class _Builder:
    """Turns the event stream into values, counting aliases as the JS package does."""

    def __init__(self, text: str, restore: dict[int, int], max_alias: int, max_depth: int):
        self.parser = _new_parser(text)
        self.text = text
        self._lines: list[str] | None = None
        # Without a `#` in the text no value can be followed by one: skip that check.
        self.has_hash = "#" in text
        self.restore = restore
        self.max_alias = max_alias
        self.max_depth = max_depth
        self.anchors: dict[str, _Anchor] = {}
        self.root: Any = None
        self.stack: list[_Frame] = []
        self.top_lines: dict[str, int] = {}
        self.documents = 0

    def run(self) -> tuple[Any, dict[str, int]]:
        """Read every event. Scalars, most of them, are handled here, inline; the others
        go through :data:`_HANDLERS`, each given the open frames and the innermost one
        (None at the top level) and returning the innermost one after it."""
        parser = self.parser
        get_event = parser.get_event
        restore = self.restore
        handlers = _HANDLERS
        stack = self.stack
        frame: _Frame | None = None
        try:
            while True:
                event: Any = get_event()
                cls = type(event)
                if cls is not _SCALAR:
                    if cls is _STREAM_END:
                        break
                    handler = handlers.get(cls)
                    if handler is not None:
                        frame = handler(self, event, stack, frame)
                    continue
                if event.style is not None:
                    self._check_styled(event)
                value: Any = event.value
                if restore:
                    value = value.translate(restore)
                if event.tag is not None:
                    value = _resolve_tagged(value, event.tag)
                elif event.implicit[0] and (not value or value[0] in _RESOLVABLE):
                    # An empty plain scalar is null: resolve_plain("") says so.
                    value = _resolve_plain(value)
                if event.anchor is not None:
                    self._register(event.anchor, value, None)
                if frame is None:
                    self.root = value
                elif not frame.is_map:
                    frame.shape.append(None)
                    frame.container.append(value)
                elif frame.has_key:
                    frame.shape.append(None)
                    frame.container[frame.key] = value
                    frame.has_key = False
                elif type(value) is str:
                    # A string key is its own identity (the others are tuples).
                    frame.shape.append(None)
                    if value in frame.seen:
                        self._take_key(frame, value, event)  # raises duplicate-key
                    frame.seen.add(value)
                    frame.key = value
                    frame.has_key = True
                    if frame.key_lines is not None:
                        frame.key_lines.setdefault(value, event.start_mark.line + 1)
                else:
                    frame.shape.append(None)
                    self._take_key(frame, value, event)
        finally:
            parser.dispose()  # libyaml's memory now; both parsers have it
        return self.root, self.top_lines

    def _check_styled(self, event: Any) -> None:
        """What the JS package refuses in a quoted or block scalar that libyaml takes."""
        style = event.style
        if style == '"' or style == "'":
            if self.has_hash:
                self._check_comment_gap(event)
            if event.end_mark.line > event.start_mark.line:
                self._check_flow_indent(self.stack, event, closing=False)
        elif style == "|" or style == ">":
            self._check_block_scalar(self.stack, event)

    def _start(self, event: Any, stack: list[_Frame], frame: _Frame | None) -> _Frame:
        """A mapping or sequence opens: a new frame (its anchor registered now, open)."""
        start: Any = event.start_mark
        if len(stack) >= self.max_depth:
            raise YamlError(
                f"nesting deeper than {self.max_depth} levels",
                kind="too-deep",
                line=start.line + 1,
            )
        is_map = type(event) is _MAPPING_START
        container: Any = {} if is_map else []
        children: list[Any] = []
        anchor = None
        if event.anchor is not None:
            anchor = self._register(event.anchor, container, children)
        new = _Frame(
            container,
            children,
            anchor,
            start.line + 1,
            bool(event.flow_style),
            start.column,
            is_map,
        )
        if is_map and not stack:
            new.key_lines = self.top_lines
        stack.append(new)
        return new

    def _end(self, event: Any, stack: list[_Frame], frame: _Frame | None) -> _Frame | None:
        """A mapping or sequence closes: checks, JS key order, then its place in the parent."""
        done = stack.pop()
        frame = stack[-1] if stack else None
        if done.flow:
            if self.has_hash:
                self._check_comment_gap(event)
            if frame is None or not frame.flow:
                self._check_flow_indent(stack, event, closing=True, start=done.line - 1)
        value = done.container
        if done.is_map:
            value = js_key_order(value)
            if done.anchor is not None:
                done.anchor.value = value
        if done.anchor is not None:
            done.anchor.open = False
        if frame is not None and (not frame.is_map or frame.has_key):
            # A list item or a mapping value: _emit inlined.
            frame.shape.append(done.shape)
            if frame.is_map:
                frame.container[frame.key] = value
                frame.has_key = False
            else:
                frame.container.append(value)
        else:
            self._emit(frame, value, done.shape, event)
        return frame

    def _on_alias(self, event: Any, stack: list[_Frame], frame: _Frame | None) -> _Frame | None:
        value, shape = self._alias(event)
        self._emit(frame, value, shape, event)
        return frame

    def _document(self, event: Any, stack: list[_Frame], frame: _Frame | None) -> _Frame | None:
        self.documents += 1
        if self.documents > 1:
            raise YamlError(
                "the block holds more than one YAML document",
                line=event.start_mark.line + 1,
            )
        return frame

    @property
    def lines(self) -> list[str]:
        # Only the rare checks look at lines: split the text on first use.
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines

    def _emit(self, frame: _Frame | None, value: Any, shape: Any, event: Any) -> None:
        if frame is None:
            self.root = value
            return
        frame.shape.append(shape)
        if not frame.is_map:
            frame.container.append(value)
        elif frame.has_key:
            frame.container[frame.key] = value
            frame.has_key = False
        else:
            self._take_key(frame, value, event)

    def _take_key(self, frame: _Frame, value: Any, event: Any) -> None:
        frame.has_key = True
        # A scalar string is its own identity: the others are tuples, never equal to it.
        if type(value) is str and type(event) is _SCALAR:
            ident: Any = value
        else:
            ident = _key_identity(value, event)
        if ident is not None:
            if ident in frame.seen:
                raise YamlError(
                    f"duplicate key {js_string(value)!r}",
                    kind="duplicate-key",
                    line=event.start_mark.line + 1,
                )
            frame.seen.add(ident)
        # The key is complete (a collection key is closed), so its name is final now.
        key = value if type(value) is str else _stringify_key(value)
        frame.key = key
        if frame.key_lines is not None:
            frame.key_lines.setdefault(key, event.start_mark.line + 1)

    def _check_block_scalar(self, stack: list[_Frame], event: Any) -> None:
        # libyaml accepts `key:` then `|` on the next line at the key's column; the JS
        # package wants a value on its own line indented deeper than its key.
        block = next((f for f in reversed(stack) if not f.flow), None)
        mark = event.start_mark
        if block is None or mark.column > block.column or mark.line >= len(self.lines):
            return
        if not self.lines[mark.line][: mark.column].strip(" "):
            raise YamlError("a block scalar must be indented more than its key", line=mark.line + 1)

    def _check_comment_gap(self, event: Any) -> None:
        # The JS package wants white space before `#`; libyaml takes `"a"#c` as a comment.
        mark = event.end_mark
        if (
            mark.line < len(self.lines)
            and self.lines[mark.line][mark.column : mark.column + 1] == "#"
        ):
            raise YamlError(
                "a comment must be separated from a value by white space", line=mark.line + 1
            )

    def _check_flow_indent(
        self, stack: list[_Frame], event: Any, *, closing: bool, start: int | None = None
    ) -> None:
        """Refuse what the JS package refuses and libyaml lets pass: continuation lines
        of a multi-line quoted scalar or flow collection indented no deeper than the
        block collection that holds it (the closing bracket may sit one column out)."""
        block = next((f for f in reversed(stack) if not f.flow), None)
        if block is None:
            return
        needed = block.column + 1
        first = event.start_mark.line if start is None else start
        last = event.end_mark.line
        for number in range(first + 1, min(last, len(self.lines) - 1) + 1):
            line = self.lines[number]
            indent = len(line) - len(line.lstrip(" "))
            # Quoted scalars only skip blank lines; flow collections also skip lines of
            # tabs and comment lines, and let the closing bracket sit one column out.
            content = line.lstrip(" \t") if closing else line[indent:]
            if not content or indent >= needed or (closing and content[0] == "#"):
                continue
            bracket = len(line) - len(content) == event.end_mark.column - 1
            if closing and number == last and bracket and indent == needed - 1:
                continue
            raise YamlError(
                "a multi-line flow value must be indented more than its key",
                line=number + 1,
            )

    def _register(self, name: str | None, value: Any, shape: Any) -> _Anchor | None:
        if name is None:
            return None
        anchor = _Anchor(value=value, shape=shape)
        anchor.open = shape is not None
        self.anchors[name] = anchor
        return anchor

    def _alias(self, event: Any) -> tuple[Any, Any]:
        anchor = self.anchors.get(event.anchor)
        line = event.start_mark.line + 1
        if anchor is None:
            raise YamlError(f"unresolved alias *{event.anchor}", line=line)
        if anchor.open:
            raise YamlError(f"recursive alias *{event.anchor}", line=line)
        anchor.count += 1
        if anchor.alias_count == 0:
            anchor.alias_count = _alias_weight(anchor.shape)
        if anchor.count * anchor.alias_count > self.max_alias:
            raise YamlError(
                "aliases expand beyond the safety bound (billion laughs?)",
                kind="alias-bomb",
                line=line,
            )
        return anchor.value, ("alias", anchor)


#: The builder's handler of each event class but scalars (read in runs) and the
#: stream's end; the classes not here (stream start, document end) need nothing.
_HANDLERS: dict[type, Any] = {
    _MAPPING_START: _Builder._start,
    _SEQUENCE_START: _Builder._start,
    _MAPPING_END: _Builder._end,
    _SEQUENCE_END: _Builder._end,
    _ALIAS: _Builder._on_alias,
    _DOCUMENT_START: _Builder._document,
}


def _alias_weight(shape: Any) -> int:
    """``getAliasCount`` of the JS package, over the shapes we kept."""
    if shape is None:
        return 1
    if isinstance(shape, tuple):
        anchor: _Anchor = shape[1]
        return anchor.count * anchor.alias_count
    best = 0
    todo = [shape]
    # Iterative max over nested shapes; alias leaves are not descended into.
    while todo:
        for item in todo.pop():
            if item is None:
                best = max(best, 1)
            elif isinstance(item, tuple):
                best = max(best, item[1].count * item[1].alias_count)
            else:
                todo.append(item)
    return best


def _resolve_tagged(value: str, tag: str) -> Any:
    """A scalar with an explicit tag: the core schema's tags resolve, others keep the text."""
    if not tag.startswith(_CORE_TAG):
        return value
    name = tag[len(_CORE_TAG) :]
    if name in ("str", "map", "seq"):
        return value
    resolved = _resolve_plain(value)
    wanted = {
        "null": type(None),
        "bool": bool,
        "int": int,
        "float": float,
    }.get(name)
    if wanted is None or isinstance(resolved, bool) != (name == "bool"):
        return value
    return resolved if isinstance(resolved, wanted) else value


def _key_identity(value: Any, event: Any) -> Any:
    """What the JS package compares to find duplicate keys (scalars by value)."""
    if type(event) is _ALIAS or isinstance(value, dict | list):
        return None
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        if isinstance(value, float) and math.isnan(value):
            return None
        return ("n", float(value) if abs(value) > 2**53 else value)
    if value is None:
        return ("z",)
    return ("s", value)


def _stringify_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None:
        return ""
    if isinstance(key, list):
        return "[ " + ", ".join(_stringify_key(k) for k in key) + " ]" if key else "[]"
    if isinstance(key, dict):
        if not key:
            return "{}"
        return "{ " + ", ".join(f"{k}: {_stringify_key(v)}" for k, v in key.items()) + " }"
    return js_string(key)
