"""How text output looks: colour on a terminal, ASCII where the locale cannot show more.

Input: the ``--color`` choice, the output stream and the environment. Output: a
:class:`Style` whose :meth:`~Style.render` turns a plain, already cleaned line into
what is written. Renderers never emit escape sequences themselves: colour is added
here, after skill text has been stripped of control characters, so a skill can never
smuggle its own.

- Colour: ``--color always|never`` decides; with ``auto`` (the default) a non-empty
  ``NO_COLOR`` turns it off, a ``FORCE_COLOR`` other than ``0``/``false`` turns it on,
  and otherwise colour is used when the stream is a terminal (and ``TERM`` is not
  ``dumb``).
- ASCII: when the stream's encoding cannot encode ``✓…─``, or the locale
  (``LC_ALL`` > ``LC_CTYPE`` > ``LANG``) is ``C``/``POSIX`` or names a codeset other
  than UTF-8: ``✓`` becomes ``ok``, ``✗`` ``x``, ``…`` ``...``, ``→`` ``->``, emoji are
  dropped and anything else outside ASCII becomes ``?``.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, TextIO

COLOR_CHOICES: Final = ("auto", "always", "never")
_PROBE: Final = "✓✗…─→"
_UTF8_NAMES: Final = frozenset({"utf8", "utf-8"})

#: Status words keep their meaning without the glyph in front of them.
_PHRASES: Final = (
    ("✓ ready", "ready"),
    ("⏸ disabled", "disabled"),
    ("🚫 blocked", "blocked"),
    ("△ needs setup", "needs setup"),
    ("✓ Ready", "Ready"),
    ("⏸ Disabled", "Disabled"),
    ("🚫 Blocked", "Blocked"),
    ("△ Needs setup", "Needs setup"),
    ("✓ Eligible", "Eligible"),
    ("✗ Missing", "Missing"),
)
_CHARS: Final = str.maketrans(
    {
        "✓": "ok",
        "✗": "x",
        "△": "!",
        "⚠": "!",
        "→": "->",
        "←": "<-",
        "…": "...",
        "─": "-",
        "—": "--",
        "–": "-",
        "·": "-",
        "•": "*",
        "›": ">",
        "“": '"',
        "”": '"',
        "‘": "'",
        "’": "'",
        "\u00a0": " ",
    }
)
# An emoji (with its variation selector, skin tone or joined parts) and one space after it.
_EMOJI: Final = re.compile(
    "(?:[\U0001f000-\U0001faff\u2600-\u27bf\u2300-\u23ff\u2b00-\u2bff]"
    "[\ufe0e\ufe0f\u200d\U0001f3fb-\U0001f3ff]*)+ ?"
)

_RESET: Final = "\x1b[0m"
_SGR: Final = {"green": "32", "yellow": "33", "red": "31", "bold": "1", "dim": "2"}
_STATUS_COLOR: Final = (
    (re.compile(r"^(✓ ready|ready)(?=\s|$)"), "green"),
    (re.compile(r"^(△ needs setup|needs setup)(?=\s|$)"), "yellow"),
    (re.compile(r"^(🚫 blocked|blocked)(?=\s|$)"), "red"),
    (re.compile(r"^(⏸ disabled|disabled)(?=\s|$)"), "dim"),
    (re.compile(r"(✓ Ready|Ready)$"), "green"),
    (re.compile(r"(△ Needs setup|Needs setup)$"), "yellow"),
    (re.compile(r"(🚫 Blocked by allowlist|Blocked by allowlist)$"), "red"),
    (re.compile(r"(⏸ Disabled|Disabled)$"), "dim"),
)
# A mark starts the line or follows ": " or ", " (``Binaries: ✓ git, ✗ helm``).
_MARKS: Final = (
    (re.compile(r"(?:^|(?<=: )|(?<=, ))(✓|ok)(?= )"), "green"),
    (re.compile(r"(?:^|(?<=: )|(?<=, ))(✗|x)(?= )"), "red"),
)
_SEVERITY: Final = (
    (re.compile(r"(?<=: )(error)(?= \[)"), "red"),
    (re.compile(r"(?<=: )(warning)(?= \[)"), "yellow"),
    (re.compile(r"(?<=: )(info)(?= \[)"), "dim"),
)
_HEADING: Final = re.compile(r"^(?:[A-Z][^:]*:|Skills \(\d+/\d+ ready\)|Skills Status Check)$")
_WARN_LINE: Final = re.compile(r"^(?:⚠|!) ")


def _sgr(name: str, text: str) -> str:
    return f"\x1b[{_SGR[name]}m{text}{_RESET}"


def locale_is_ascii(env: Mapping[str, str]) -> bool:
    """``LC_ALL`` > ``LC_CTYPE`` > ``LANG`` is ``C``/``POSIX`` or a non-UTF-8 codeset."""
    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = (env.get(name) or "").strip()
        if not value:
            continue
        if value in ("C", "POSIX"):
            return True
        codeset = value.split(".", 1)[1].split("@", 1)[0] if "." in value else ""
        return bool(codeset) and codeset.lower().replace("_", "-") not in _UTF8_NAMES
    return False


def can_encode(stream: TextIO, sample: str = _PROBE) -> bool:
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        sample.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def color_wanted(choice: str, stream: TextIO, env: Mapping[str, str]) -> bool:
    if choice == "always":
        return True
    if choice == "never":
        return False
    if env.get("NO_COLOR", ""):
        return False
    if env.get("FORCE_COLOR", "").strip().lower() not in ("", "0", "false"):
        return True
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    return terminal and env.get("TERM", "") != "dumb"


def to_ascii(text: str) -> str:
    """``text`` in plain ASCII: status glyphs dropped, marks spelled out, emoji removed."""
    if text.isascii():
        return text
    for fancy, plain in _PHRASES:
        text = text.replace(fancy, plain)
    text = _EMOJI.sub("", text.translate(_CHARS))
    if text.isascii():
        return text
    # Accents become their base letter where they have one; the rest becomes "?".
    folded = unicodedata.normalize("NFKD", text)
    return "".join(
        ch if ch.isascii() else ("" if unicodedata.combining(ch) else "?") for ch in folded
    )


@dataclass(frozen=True, slots=True)
class Style:
    """Colour and ASCII choices for one output stream."""

    color: bool = False
    ascii: bool = False

    @classmethod
    def detect(
        cls,
        choice: str = "auto",
        *,
        stream: TextIO | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Style:
        out = sys.stdout if stream is None else stream
        environ = os.environ if env is None else env
        plain = not can_encode(out) or locale_is_ascii(environ)
        return cls(color=color_wanted(choice, out, environ), ascii=plain)

    def text(self, line: str) -> str:
        """The line in the characters the stream can show."""
        return to_ascii(line) if self.ascii else line

    def render(self, line: str) -> str:
        """:meth:`text`, then colour when wanted."""
        line = self.text(line)
        return self.paint(line) if self.color else line

    @staticmethod
    def paint(line: str) -> str:
        """Colour the parts of a plain line that carry a status, a mark or a heading."""
        if _HEADING.match(line):
            return _sgr("bold", line)
        if _WARN_LINE.match(line):
            return _sgr("yellow", line)
        for pattern, color in _STATUS_COLOR:
            if pattern.search(line):
                return pattern.sub(_painter(color), line, count=1)
        for pattern, color in (*_MARKS, *_SEVERITY):
            line = pattern.sub(_painter(color), line)
        return line


def _painter(color: str) -> Callable[[re.Match[str]], str]:
    return lambda match: _sgr(color, match.group(1))
