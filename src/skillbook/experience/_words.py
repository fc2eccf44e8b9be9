"""Words: the common English words the experience engine leaves out of names and
comparisons, and the offline template's "when to use" sentence.

One list for parameter names, draft slugs and near-duplicate descriptions, so the three
agree on what carries meaning. :func:`when_to_use` turns the request of a run into the
sentence a template draft's description starts with, without a model and the same for
the same request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

__all__ = ["STOPWORDS", "when_to_use"]

_TEXT: Final = """a an the in on at of to for from by with into onto and or but if then than that
this these those is are was were be been it its as what whats which who how when where why
me my mine i you your we our us please can could would should will shall do does did use
used using run runs show tell give get find list all any some each every about over under
there here now today tomorrow yesterday current them they their skill skills"""

#: Lower-case words that never name a parameter or a draft, nor make two texts alike.
STOPWORDS: Final = frozenset(_TEXT.split())

#: Polite openings left out of the "when to use" sentence: "Please count…" is "count…".
_POLITE: Final = re.compile(
    r"^(?:(?:hey|hi|ok|okay)[,!]?\s+)?(?:(?:please|kindly)\s+|(?:can|could|would|will)\s+you"
    r"(?:\s+please)?\s+|i\s+(?:want|need|would like)\s+(?:you\s+)?to\s+)+",
    re.I,
)
#: A request starting with one of these is a question ("what is …"), not an order.
_QUESTION_WORDS: Final = """what whats which who whom whose how when where why is are was were
do does did can could should would will has have"""
_QUESTION: Final = frozenset(_QUESTION_WORDS.split())
#: Characters of the request kept in the sentence and in the example.
MAX_ACTION_CHARS: Final = 200
MAX_EXAMPLE_CHARS: Final = 160


def when_to_use(request: str, params: Sequence[tuple[str, str]] = ()) -> str:
    """``Use when asked to …`` in the words of ``request``.

    ``params`` are ``(name, value)`` pairs: each value of the request becomes its name in
    capitals (``notes.txt`` → ``FILE``), so the sentence fits every run of the task, and
    the request itself, shortened, is given as an example of how it is asked.
    """
    flat = " ".join(request.split())
    general = flat
    for name, value in sorted(params, key=lambda p: len(p[1]), reverse=True):
        if value:
            general = general.replace(value, name.upper())
    action = _POLITE.sub("", _first_sentence(general)).strip(" .!?:;")
    if not action:
        return "Use when asked to repeat this task."
    first = action.split(" ", 1)[0].lower().strip(",")
    lowered = action[:1].lower() + action[1:] if not action[:2].isupper() else action
    lead = "Use when asked " if first in _QUESTION else "Use when asked to "
    sentence = lead + _clip(lowered, MAX_ACTION_CHARS)
    example = _example(flat, params)
    if example and example.lower() != action.lower():
        sentence += f', for example "{example}"'
    return sentence + "."


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]


def _example(request: str, params: Sequence[tuple[str, str]]) -> str:
    """The request as a person would say it: paths shortened to their last part."""
    out = _POLITE.sub("", _first_sentence(request)).strip(" .!?:;")
    for _, value in params:
        if "/" in value and not value.startswith(("http://", "https://")):
            out = out.replace(value, value.rstrip("/").rsplit("/", 1)[-1] or value)
    out = out.replace('"', "'")
    out = out[:1].upper() + out[1:]
    return _clip(out, MAX_EXAMPLE_CHARS)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"
