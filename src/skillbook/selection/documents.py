"""What the selector reads of a skill: a :class:`SkillDocument` per skill.

Input: a loaded :class:`~skillbook.model.Skill`. Output: the text each backend ranks
(``lexical`` for BM25: name, description, the body's headings and trigger phrases;
``body`` for a second BM25 channel: the start of the body's prose;
``semantic`` for embeddings: name and description, with the first headings when the
description is short), its trigger hints, and ``key``, a hash of the semantic text
that names the skill's vectors in the on-disk index. Pure: nothing here reads files.

Headings inside fenced code blocks are shell comments, not headings, and are skipped.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Final

from skillbook.base.surrogates import without_surrogates
from skillbook.diagnostics import Diagnostic
from skillbook.model import Skill
from skillbook.selection.triggers import Triggers, skill_triggers

__all__ = ["SkillDocument", "body_headings", "body_prose", "document_for", "name_words"]

#: Headings read from a body; a 5,000-heading file cannot slow the index down.
MAX_HEADINGS: Final = 40
MAX_HEADING_CHARS: Final = 80
#: Below this many description characters, headings are added to the semantic text.
SHORT_DESCRIPTION: Final = 80
#: The semantic text is cut here: static embeddings average over tokens, so a long
#: tail of headings would drown the description.
MAX_SEMANTIC_CHARS: Final = 600
_FENCE_RE: Final = re.compile(r"^\s*(```|~~~)")
_HEADING_RE: Final = re.compile(r"^\s{0,3}#{1,4}\s+(.+?)\s*#*\s*$")
_SPLIT_RE: Final = re.compile(r"[-_./:]+")
#: Characters of the body (code blocks removed) the second BM25 channel reads.
MAX_BODY_CHARS: Final = 3000


@dataclass(frozen=True, slots=True)
class SkillDocument:
    """The text of one skill as the backends see it."""

    name: str
    lexical: str
    #: The start of the body without code blocks: its words reach paraphrased requests.
    body: str
    semantic: str
    triggers: Triggers
    #: sha256 of ``semantic``: the same text gets the same vector, whoever wrote it.
    key: str
    diagnostics: tuple[Diagnostic, ...] = ()


def name_words(name: str) -> str:
    """``gh-fix-ci`` → ``gh fix ci``: names are read as words too."""
    return " ".join(p for p in _SPLIT_RE.split(name) if p)


def body_prose(body: str, limit: int = MAX_BODY_CHARS) -> str:
    """The body's text outside fenced code blocks, cut at ``limit`` characters."""
    out: list[str] = []
    size = 0
    fenced = False
    for line in body.splitlines():
        if _FENCE_RE.match(line):
            fenced = not fenced
            continue
        if fenced or not line.strip():
            continue
        out.append(line)
        size += len(line) + 1
        if size >= limit:
            break
    return "\n".join(out)[:limit]


def body_headings(body: str, limit: int = MAX_HEADINGS) -> tuple[str, ...]:
    """Markdown headings (levels 1–4) outside fenced code, in order, at most ``limit``."""
    out: list[str] = []
    fenced = False
    for line in body.splitlines():
        if _FENCE_RE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        m = _HEADING_RE.match(line)
        if m:
            out.append(m.group(1)[:MAX_HEADING_CHARS])
            if len(out) >= limit:
                break
    return tuple(out)


def document_for(skill: Skill) -> SkillDocument:
    """The :class:`SkillDocument` of ``skill``."""
    triggers, problems = skill_triggers(skill)
    # A name or text with lone surrogates (a folder name that is not UTF-8) stopped
    # the tokenizers with a TypeError, and the whole selection with it.
    words = without_surrogates(name_words(skill.name))
    description = without_surrogates(skill.description)
    headings = [without_surrogates(h) for h in body_headings(skill.parsed.body)]
    trigger_text = without_surrogates(" ".join(" ".join(p) for p in (*triggers.any, *triggers.all)))
    # The name counts twice: it is the most specific text a skill has.
    lexical = "\n".join(x for x in (words, words, description, *headings, trigger_text) if x)
    semantic = f"{words}: {description}"
    if len(description) < SHORT_DESCRIPTION and headings:
        semantic += ". " + "; ".join(headings[:8])
    semantic = semantic[:MAX_SEMANTIC_CHARS]
    key = hashlib.sha256(semantic.encode("utf-8", "surrogatepass")).hexdigest()
    body = without_surrogates(body_prose(skill.parsed.body))
    return SkillDocument(skill.name, lexical, body, semantic, triggers, key, problems)
