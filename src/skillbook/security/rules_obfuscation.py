"""Rules for commands assembled at run time so that no pattern sees them whole.

Input: a :class:`Document`. Output: :class:`Hit` values for ``assembled-exec``: a
string built only from variables (``eval "$a$b"``, ``sh -c "$x$y"``, Python's
``exec(a + b)``, JavaScript's ``eval(a + b)``/``new Function(a + b)``) handed to
something that runs it. The tricks that hide a single command name (quote-split
words, look-alike letters, ``${IFS}``) are undone in
:mod:`skillbook.security.deobfuscate` and reported by the scanner as
``obfuscated-command``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from skillbook.security import patterns
from skillbook.security.document import Document
from skillbook.security.findings import Severity
from skillbook.security.hit import Hit

_VAR = r"\$(?:\{[A-Za-z_]\w*\}|[A-Za-z_]\w*)"
_SHELL_ASSEMBLED = patterns.compile(
    rf"(?:^|[;&|({{`]|\bthen\b|\bdo\b)\s*(?:sudo\s+)?(?P<runner>eval|(?:ba|z|da|k)?sh\s+-c|exec|source|\.)"
    rf"\s+[\"']?(?:{_VAR}[\"']{{0,2}}){{2,}}(?=[\s;&|)]|$)",
    re.M,
)
_CODE_ASSEMBLED = patterns.compile(
    r"(?<![\w.])(?P<runner>eval|exec|(?:new\s+)?Function)\s*\(\s*[A-Za-z_]\w*(?:\s*\+\s*[A-Za-z_]\w*)+\s*[,)]"
)
#: Keywords (lower case): specific enough that ordinary code rarely holds them.
_WORDS = ("eval", "sh -c", "exec", "source $", 'source "$', ". $", '. "$', "new function")


def assembled_exec(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_WORDS, after=0):
        return
    seen: set[int] = set()
    for regex in (_SHELL_ASSEMBLED, _CODE_ASSEMBLED):
        for m in doc.finditer(regex, _WORDS, after=0):
            line = doc.line_of(m.start("runner"))
            if line in seen:
                continue
            seen.add(line)
            yield Hit("assembled-exec", Severity.HIGH, m.start("runner"), m.end(),
                      f"{m.group('runner')} runs a command glued together from variables, "
                      "so no reader or pattern sees it whole")  # fmt: skip


KEYWORDS = _WORDS
#: The keywords one of which a file must hold for the family to find anything.
TRIGGERS = {"assembled_exec": _WORDS}
