"""One text file as the rules see it: its text, line index and Markdown layout.

Input: decoded text and the file's name. Output: a :class:`Document` that maps
offsets to lines and knows which lines sit in fenced code blocks, under which
heading, and inside HTML comments. The index and the layout are built on first
use, so a file no rule fires on costs only the reading.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property, partial

from skillbook.security import patterns
from skillbook.security.keywords import KeywordIndex

#: File kinds: Markdown/prose (instructions a model reads), code (scripts), other text.
MARKDOWN = "markdown"
CODE = "code"
TEXT = "text"

_MARKDOWN_EXT = frozenset({".md", ".markdown", ".mdx", ".txt", ".rst", ".html", ".htm"})
_CODE_EXT = frozenset(
    {
        ".sh", ".bash", ".zsh", ".ksh", ".fish", ".command", ".py", ".pyw", ".js", ".mjs",
        ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".ps1", ".psm1", ".bat", ".cmd",
        ".rb", ".pl", ".php", ".lua", ".go", ".rs", ".swift", ".applescript", ".scpt",
        ".vbs", ".java", ".kt", ".r", ".jl", ".lobster",
    }
)  # fmt: skip
_FENCE = patterns.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_HEADING = patterns.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_COMMENT = patterns.compile(r"<!--.*?(?:-->|\Z)", re.S)
_ASCII_RUNS = patterns.compile(r"[\x00-\x7f]+")
_NEWLINE = patterns.compile("\n")
_END = re.Match.end
#: Leading literals -> the pattern finding them (:meth:`Document._finder`).
_FINDERS: dict[tuple[str, ...], re.Pattern[str]] = {}


def file_kind(name: str, head: str = "") -> str:
    """The kind of a file from its name, or from a ``#!`` line for extensionless scripts."""
    lower = name.lower()
    dot = lower.rfind(".")
    ext = lower[dot:] if dot > 0 else ""
    if ext in _MARKDOWN_EXT:
        return MARKDOWN
    if ext in _CODE_EXT or head.startswith("#!"):
        return CODE
    return TEXT


#: (keywords, index) -> (those the index holds, the others): split once per list.
_SPLITS: dict[tuple[tuple[str, ...], int], tuple[frozenset[str], tuple[str, ...]]] = {}


def _split(
    keywords: tuple[str, ...], index: KeywordIndex | None
) -> tuple[frozenset[str], tuple[str, ...]]:
    key = (keywords, id(index))
    found = _SPLITS.get(key)
    if found is None:
        if (
            len(_SPLITS) > 4096
        ):  # the rules have a few hundred lists; callers' own lists are not kept forever
            _SPLITS.clear()
        words = index.words if index is not None else frozenset()
        found = _SPLITS[key] = (frozenset(w for w in keywords if w in words),
                                tuple(w for w in keywords if w not in words))  # fmt: skip
    return found


@dataclass(frozen=True, slots=True)
class Fence:
    """A fenced code block: the lines of its body and its info string (``bash``)."""

    start: int  # first body line (1-based)
    end: int  # last body line
    info: str
    #: The line of the opening fence.
    opener: int


class Document:
    """A decoded text file with lazily built line and Markdown indexes."""

    def __init__(
        self,
        text: str,
        name: str,
        kind: str | None = None,
        *,
        index: KeywordIndex | None = None,
        literals: bool = True,
    ) -> None:
        self.text = text
        #: Try patterns only where their leading literals occur (:meth:`_finder`);
        #: False tries every offset of every region, as before (differential tests).
        self.literals = literals
        self.index = index
        self.name = name
        self.kind = kind if kind is not None else file_kind(name, text[:2])
        self.is_skill_md = name == "SKILL.md"
        self._regions: dict[tuple[tuple[str, ...], int], list[tuple[int, int]]] = {}
        self._lines_by_word: dict[str, set[int]] = {}

    @cached_property
    def lower(self) -> str:
        """The text lower-cased, offset for offset (characters whose lower case is longer,
        such as U+0130, are kept as they are)."""
        low = self.text.lower()
        if len(low) == len(self.text):
            return low
        return "".join(c if len(c.lower()) != 1 else c.lower() for c in self.text)

    def keywords_present(self, keywords: tuple[str, ...]) -> frozenset[str]:
        """Which of ``keywords`` (lower case, all in the index) occur in the text."""
        found = self._occurrences
        return frozenset(w for w in keywords if w in found)

    @cached_property
    def non_ascii(self) -> frozenset[str]:
        """The distinct non-ASCII characters of the text (one C-level pass, shared by the
        invisible-text rule and the look-alike stage of the deobfuscation)."""
        if self.text.isascii():
            return frozenset()
        # Deleting the ASCII runs leaves a short string: half the time of a list of
        # every non-ASCII character.
        return frozenset(_ASCII_RUNS.sub("", self.text))

    @cached_property
    def fold_safe(self) -> bool:
        """Whether the lower-cased text shows every place a pattern's leading literals
        match (see :mod:`~skillbook.security.literals`): no cased non-ASCII character,
        which ``re.IGNORECASE`` may match with an ASCII letter (``ſ`` with ``s``) or
        :attr:`lower` keeps as it is (``İ``)."""
        return all(c.lower() == c and c.upper() == c for c in self.non_ascii)

    def _finder(self, regex: re.Pattern[str]) -> re.Pattern[str] | None:
        """A pattern finding, in :attr:`lower`, where a match of ``regex`` can start
        (one of its leading literals, :func:`patterns.leading`), when there is one and
        this document's lower-cased text shows them all (:attr:`fold_safe`)."""
        literals = patterns.leading(regex) if self.literals else None
        if literals is None or not self.fold_safe:
            return None
        finder = _FINDERS.get(literals)
        if finder is None:
            finder = _FINDERS[literals] = re.compile("|".join(map(re.escape, literals)))
        return finder

    def _matches_at(self, regex: re.Pattern[str], finder: re.Pattern[str], start: int,
                    end: int) -> Iterator[re.Match[str]]:  # fmt: skip
        """``regex.finditer(text, start, end)``, tried only where ``finder`` finds a
        leading literal: no match starts anywhere else, so the matches are the same,
        and ``re`` skips to a literal far faster than it tries a pattern led by ``\\b``
        or written case-insensitively at every offset."""
        text, lower = self.text, self.lower
        find, match = finder.search, regex.match
        pos = start
        while (cue := find(lower, pos, end)) is not None:
            at = cue.start()
            found = match(text, at, end)
            if found is None:
                pos = at + 1
            else:
                yield found
                pos = found.end()

    def holds_any(self, keywords: frozenset[str]) -> bool:
        """Whether the text holds any of ``keywords`` (lower case, all in the index);
        without an index it cannot tell, and says yes."""
        return self.index is None or not keywords.isdisjoint(self._occurrences)

    def regions(self, keywords: tuple[str, ...], *, after: int = 1) -> list[tuple[int, int]]:
        """Offsets of the lines whose lower-cased text holds any of ``keywords`` (plus
        ``after`` following lines, so a phrase wrapped onto the next line still matches),
        merged into disjoint ``(start, end)`` regions in text order.

        Rules search only these regions: the keywords are found in one pass
        (:class:`~skillbook.security.keywords.KeywordIndex`), and most lines of most
        files hold none, so most regexes never run.
        """
        memo_key = (keywords, after)
        cached = self._regions.get(memo_key)
        if cached is not None:
            return cached
        lines: set[int] = set()
        present = self._occurrences
        indexed, unindexed = _split(keywords, self.index)
        # Set operations in C: a long list of specific words costs little when few occur.
        for word in indexed.intersection(present):
            lines |= self._keyword_lines(word)
        for word in unindexed:
            pos = self.lower.find(word)
            while pos != -1:
                line = self.line_of(pos)
                lines.add(line)
                pos = self.lower.find(word, self._line_starts[line] if line < len(self._line_starts)
                                      else len(self.lower))  # fmt: skip
        # :meth:`lines_span` inlined: this loop runs once per keyword line and family.
        starts = self._line_starts
        count = len(starts)
        size = len(self.text)
        out: list[tuple[int, int]] = []
        last_end = -1
        for line in sorted(lines):
            start = starts[line - 1]
            stop = min(max(line + after, line), count)
            end = starts[stop] if stop < count else size
            if out and start <= last_end:
                if end > last_end:
                    last_end = end
                    out[-1] = (out[-1][0], end)
            else:
                out.append((start, end))
                last_end = end
        self._regions[memo_key] = out
        return out

    @cached_property
    def _occurrences(self) -> dict[str, list[int]]:
        return self.index.occurrences(self.lower) if self.index is not None else {}

    def _keyword_lines(self, word: str) -> set[int]:
        """The lines holding ``word`` (an indexed keyword), computed once per word."""
        found = self._lines_by_word.get(word)
        if found is None:
            found = set(map(partial(bisect.bisect_right, self._line_starts),
                            self._occurrences.get(word, ())))  # fmt: skip
            self._lines_by_word[word] = found
        return found

    def search(self, regex: re.Pattern[str], keywords: tuple[str, ...], start: int = 0,
               end: int | None = None) -> re.Match[str] | None:  # fmt: skip
        """The first ``regex`` match between ``start`` and ``end`` inside :meth:`regions`."""
        stop = len(self.text) if end is None else end
        finder = self._finder(regex)
        for r_start, r_end in self.regions(keywords, after=0):
            if r_end <= start:
                continue
            if r_start >= stop:
                break
            if finder is not None:
                found = next(self._matches_at(regex, finder, max(r_start, start),
                                              min(r_end, stop)), None)  # fmt: skip
            else:
                found = regex.search(self.text, max(r_start, start), min(r_end, stop))
            if found:
                return found
        return None

    def finditer(self, regex: re.Pattern[str], keywords: tuple[str, ...], *, after: int = 1
                 ) -> Iterator[re.Match[str]]:  # fmt: skip
        """``regex`` matches inside :meth:`regions` of ``keywords`` (tried only where a
        leading literal of ``regex`` starts, when it has a few: :meth:`_matches_at`)."""
        return self.finditer_in(regex, self.regions(keywords, after=after))

    def finditer_in(self, regex: re.Pattern[str], spans: list[tuple[int, int]]
                    ) -> Iterator[re.Match[str]]:  # fmt: skip
        """``regex`` matches inside ``spans`` (``(start, end)`` offsets, in text order)."""
        if not spans:
            return
        finder = self._finder(regex)
        if finder is not None:
            for start, end in spans:
                yield from self._matches_at(regex, finder, start, end)
            return
        for start, end in spans:
            yield from regex.finditer(self.text, start, end)

    def regions_all(self, first: tuple[str, ...], *rest: tuple[str, ...]) -> list[tuple[int, int]]:
        """The lines of :meth:`regions` of ``first`` (``after=0``) that also hold a word of
        every group of ``rest``, merged into spans: a rule whose match needs a rare phrase
        and a common word on one line is tried only where both occur. Only ``first`` goes
        through the keyword index; ``rest`` is looked for in those few lines, so its
        common words cost the index nothing."""
        out: list[tuple[int, int]] = []
        lower, starts = self.lower, self._line_starts
        for start, end in self.regions(first, after=0):
            line = self.line_of(start)
            while line <= len(starts) and starts[line - 1] < end:
                a, b = self.lines_span(line, line)
                text = lower[a:b]
                if all(any(w in text for w in group) for group in rest):
                    if out and out[-1][1] >= a:
                        out[-1] = (out[-1][0], b)
                    else:
                        out.append((a, b))
                line += 1
        return out

    @cached_property
    def _line_starts(self) -> list[int]:
        # The offset after each newline, found in C (a loop of ``find`` calls cost a
        # Python step per line; splitting the text into lines cost 1.5× this).
        starts = [0]
        starts.extend(map(_END, _NEWLINE.finditer(self.text)))
        return starts

    def line_of(self, offset: int) -> int:
        """The 1-based line holding ``offset``."""
        return bisect.bisect_right(self._line_starts, offset)

    def column_of(self, offset: int) -> int:
        return offset - self._line_starts[self.line_of(offset) - 1] + 1

    def line_text(self, line: int) -> str:
        starts = self._line_starts
        if line < 1 or line > len(starts):
            return ""
        start = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[start:end].rstrip("\r")

    def lines_span(self, first: int, last: int) -> tuple[int, int]:
        """Offsets from the start of line ``first`` to the end of line ``last`` (clamped)."""
        starts = self._line_starts
        first = min(max(first, 1), len(starts))
        last = min(max(last, first), len(starts))
        end = starts[last] if last < len(starts) else len(self.text)
        return starts[first - 1], end

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    @cached_property
    def _layout(self) -> tuple[list[Fence], list[tuple[int, str]]]:
        """Fenced blocks and headings (line, text) of a Markdown file."""
        fences: list[Fence] = []
        headings: list[tuple[int, str]] = []
        if self.kind != MARKDOWN:
            return fences, headings
        open_marker = ""
        opener = 0
        info = ""
        for number, line in enumerate(self.text.split("\n"), start=1):
            match = _FENCE.match(line)
            if open_marker:
                if (
                    match
                    and match.group(1)[0] == open_marker[0]
                    and len(match.group(1)) >= len(open_marker)
                    and not match.group(2).strip()
                ):
                    fences.append(Fence(opener + 1, number - 1, info, opener))
                    open_marker = ""
                continue
            if match:
                open_marker, opener, info = match.group(1), number, match.group(2).strip()
                continue
            heading = _HEADING.match(line)
            if heading:
                headings.append((number, heading.group(1)))
        if open_marker:  # an unclosed fence runs to the end of the file
            fences.append(Fence(opener + 1, self.line_count, info, opener))
        return fences, headings

    def fences(self) -> list[Fence]:
        """The fenced blocks of a Markdown file, in order."""
        return self._layout[0]

    def fence_at(self, line: int) -> Fence | None:
        """The fenced block whose body holds ``line``, if any."""
        for fence in self._layout[0]:
            if fence.start <= line <= fence.end:
                return fence
            if fence.start > line:
                break
        return None

    def heading_at(self, line: int) -> str:
        """The text of the nearest heading above ``line`` ("" before the first one)."""
        current = ""
        for number, text in self._layout[1]:
            if number > line:
                break
            current = text
        return current

    @cached_property
    def frontmatter_end(self) -> int:
        """The line of the ``---`` that closes a Markdown file's frontmatter (0 if none)."""
        if self.kind != MARKDOWN or not self.text.lstrip("\ufeff").startswith("---"):
            return 0
        for number, line in enumerate(self.text.split("\n")[1:], start=2):
            if line.rstrip() in ("---", "..."):
                return number
        return 0

    @cached_property
    def html_comments(self) -> list[tuple[int, int]]:
        """``(start, end)`` offsets of every ``<!-- … -->`` in a Markdown file."""
        if self.kind != MARKDOWN or "<!--" not in self.text:
            return []
        return [(m.start(), m.end()) for m in _COMMENT.finditer(self.text)]

    def in_html_comment(self, offset: int) -> bool:
        return any(start <= offset < end for start, end in self.html_comments)

    def prose_before(self, line: int, *, limit: int = 3) -> list[str]:
        """Up to ``limit`` non-blank lines above ``line``, nearest first."""
        out: list[str] = []
        number = line - 1
        while number >= 1 and len(out) < limit:
            text = self.line_text(number).strip()
            if text:
                out.append(text)
            number -= 1
        return out
