"""Context demotion: the same pattern means different things in different places.

Input: a :class:`Document` and a :class:`Hit`. Output: the reason to lower the
hit's severity, or ``None``. Demoted findings are kept (two levels lower, never
under the hit's floor) and say why, so a security skill that *teaches* about
``curl | sh`` is not blocked while its lesson stays visible.

Contexts that demote:

- a detection rule list: a regex or quoted pattern in a list of patterns, a YAML
  ``pattern:``/``regex:`` key, a table or list under a heading about detection;
- a negated sentence: "never run ``curl … | sh``", a ``# don't`` comment;
- a fenced example introduced as bad or malicious, or any fenced example in a
  document about security unless it sits under a setup/install heading or is
  introduced as something to run (where the ClawHavoc payloads sat);
- a comment in a script (it does not run);
- a quoted mention of injection phrasing ("watch for 'ignore previous instructions'").

Never demoted: hits flagged not demotable (hidden text) and anything inside an
HTML comment, which readers do not see but models do.
"""

from __future__ import annotations

import re
from functools import cached_property

from skillbook.security import patterns
from skillbook.security.document import CODE, MARKDOWN, Document
from skillbook.security.hit import Hit

#: How many severity levels a demotion removes.
DEMOTION_STEPS = 2

_NEGATION = patterns.compile(
    r"\b(?:never|don'?t|do\s+not|must\s+not|mustn'?t|should\s+not|shouldn'?t|cannot|can'?t|"
    r"avoid\w*|refuse\w*|instead\s+of|rather\s+than|not\s+(?:safe|recommended|allowed)|unsafe|"
    r"insecure|forbidden|prohibited|disallow\w*|deny|denied|block\w*|reject\w*|warns?\s+(?:about|on|"
    r"against))\b|❌|🚫|⛔",
    re.I,
)
_CONDITION = patterns.compile(r"\b(?:if|when|whenever|unless|in\s+case)\b[^,;:]*[,;:]", re.I)
_NOT_NEGATION = patterns.compile(
    r"\b(?:don'?t|do\s+not|never)\s+(?:forget|skip|hesitate|miss|neglect|wait|worry|need\s+to\s+ask)\b",
    re.I,
)
_EXAMPLE_CUE = patterns.compile(
    r"\b(?:bad|wrong|insecure|unsafe|dangerous|vulnerable|malicious|malware|attack\w*|exploit\w*|"
    r"payloads?|red\s+flags?|iocs?|indicators?|detect\w*|flag(?:s|ged)?|block(?:s|ed)?|patterns?|"
    r"signatures?|catch(?:es)?|looks?\s+for|suspicious|threats?|phishing|stealer|backdoor|"
    r"reverse\s+shell|don'?t|never|avoid)\b|❌|🚫|⛔|⚠",
    re.I,
)
_RUN_CUE = patterns.compile(
    r"\b(?:run|execute|install|paste|copy|type|enter|download|first|setup|set\s+up|start|"
    r"prerequisites?)\b",
    re.I,
)
_SETUP_HEADING = patterns.compile(
    r"prereq|set\s*up|install|getting\s+started|quick\s*start|requirements|before\s+you|first\s+run|"
    r"dependenc|bootstrap|download",
    re.I,
)
_DETECTION_HEADING = patterns.compile(
    r"\b(?:detect\w*|patterns?|signatures?|iocs?|indicators?|red\s+flags?|rules?|checks?|"
    r"what\s+(?:it|we|this)\s+(?:finds|flags|catches|looks\s+for|checks)|threats?|attacks?|"
    r"malicious|suspicious|dangerous|examples?\s+of)\b",
    re.I,
)
_REGEX_SYNTAX = patterns.compile(r"\\[sbdwSWB.|()\[\]]|\(\?[:i!=<]|\[\^|\.\*|\.\+|\\\|")
_QUOTED_ITEM = patterns.compile(
    r"^\s*(?:-\s+|\*\s+)?(?:[rRbBuU]{0,2}[\"'`/]).*[\"'`/]\s*[,;]?\s*(?:#.*|//.*)?$"
)
#: Words naming a list of patterns; ``_`` separates words here (SUSPICIOUS_PATTERNS).
_LIST_CONTEXT = patterns.compile(
    r"(?<![a-z])(?:patterns?|rules?|signatures?|iocs?|indicators?|regex(?:es|ps)?|denylist|blocklist|"
    r"blacklist|deny_?list|block_?list|detect\w*|suspicious|dangerous|malicious|red_?flags?|"
    r"checks?|risky|forbidden|banned)(?![a-z])",
    re.I,
)
_RULE_KEY = patterns.compile(
    r"^\s*-?\s*(?:pattern|regex|regexp|match|signature|rule|detect)s?\s*:", re.I
)
_COMMENT_START = patterns.compile(r"(?:^|\s)(?:#|//|--\s|REM\s|::\s)|^\s*(?:\*|/\*)")
_SECURITY_TERMS = (
    "security", "vulnerab", "exploit", "attack", "malware", "malicious", "threat", "pentest",
    "penetration test", "red team", "payload", "injection", "exfiltrat", "backdoor", "audit",
    "scanner", "detection", "ioc", "cve-", "owasp", "hardening", "forensic", "incident response",
    "phishing", "ctf", "secret scan", "sast", "siem", "yara", "sigma rule", "threat model",
)  # fmt: skip
#: A document that uses this many distinct security terms teaches or does security work.
SECURITY_TERMS_NEEDED = 4
_SENTENCE_END = patterns.compile(r"[.!?](?:\s|$)|:\s*$")


class Context:
    """The demotion decisions for one document (its topic is worked out once)."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc

    @cached_property
    def security_doc(self) -> bool:
        low = self.doc.lower
        return sum(term in low for term in _SECURITY_TERMS) >= SECURITY_TERMS_NEEDED

    def demotion(self, hit: Hit) -> str | None:
        """Why ``hit`` should count less here, or ``None`` when it counts in full."""
        doc = self.doc
        if not hit.demotable or doc.in_html_comment(hit.start):
            return None
        line = doc.line_of(hit.start)
        text = doc.line_text(line)
        column = hit.start - doc.lines_span(line, line)[0]
        before = text[:column]
        if self._rule_list(hit, line, text):
            return "listed as a detection pattern"
        sentence = _SENTENCE_END.split(self._sentence_start(line) + before)[-1]
        # A negation inside a leading condition ("if it cannot connect, disable …") does
        # not negate the instruction after the comma.
        sentence = _CONDITION.sub(" ", sentence)
        if _NEGATION.search(sentence) and not _NOT_NEGATION.search(sentence):
            return "in a negated sentence"
        if doc.kind == CODE and _COMMENT_START.search(before):
            return "in a comment"
        if doc.kind == MARKDOWN:
            return self._markdown(hit, line, text, before)
        return None

    def _sentence_start(self, line: int) -> str:
        """Prose of the previous lines that the sentence at ``line`` continues (Markdown only)."""
        doc = self.doc
        if doc.kind != MARKDOWN or doc.fence_at(line) is not None:
            return ""
        parts: list[str] = []
        number = line - 1
        while number >= 1 and len(parts) < 2:
            previous = doc.line_text(number).strip()
            if (
                not previous
                or previous.startswith(("#", "```", "~~~", "|"))
                or re.search(r"[.!?:]$", previous)
            ):
                break
            pieces = _SENTENCE_END.split(previous)
            parts.insert(0, pieces[-1])
            if len(pieces) > 1:
                break
            if re.match(r"^(?:[-*+]|\d+\.)\s", previous):
                break
            number -= 1
        return " ".join(parts) + (" " if parts else "")

    def _rule_list(self, hit: Hit, line: int, text: str) -> bool:
        doc = self.doc
        if _RULE_KEY.match(text) or _REGEX_SYNTAX.search(doc.text, hit.start, hit.end):
            return True
        if _QUOTED_ITEM.match(text) or text.lstrip().startswith("|"):
            first, start = doc.lines_span(max(line - 15, 1), line)[0], doc.lines_span(line, line)[0]
            if _LIST_CONTEXT.search(doc.text, first, start):
                return True
        if doc.kind == MARKDOWN and re.match(r"^\s*(?:[-*+]|\d+\.|\|)\s", text):
            return bool(_DETECTION_HEADING.search(doc.heading_at(line)))
        return False

    def _markdown(self, hit: Hit, line: int, text: str, before: str) -> str | None:
        doc = self.doc
        fence = doc.fence_at(line)
        if fence is None:
            if line <= doc.frontmatter_end:
                # The quotes around a YAML value quote nothing: a quoted description
                # goes into every prompt's catalog as it is.
                text = _YAML_QUOTED_VALUE.sub(_unquote_value, text)
            # Nor do a link title's quotes: the title is a tooltip nobody reads and the
            # model reads whole.
            text = _LINK_TITLE.sub(_unquote_value, text)
            if hit.rule == "prompt-injection" and _quoted(
                text, hit.start - doc.lines_span(line, line)[0]
            ):
                return "quoted as an example of the phrasing"
            # The cue must be in the prose: a word inside the code ("attacker.example" in
            # a host name) is the attacker's to choose.
            prose = _INLINE_CODE.sub(" ", text)
            if "`" in before and _EXAMPLE_CUE.search(prose) and not _RUN_CUE.search(before):
                return "named in prose as something to watch for"
            return None
        comments = [
            doc.line_text(n).strip()
            for n in range(max(fence.start, line - 2), line)
            if doc.line_text(n).lstrip().startswith(("#", "//"))
        ]
        intro = doc.prose_before(fence.opener, limit=2)
        for cue_line in comments + intro[:1]:
            if _EXAMPLE_CUE.search(cue_line) and not _NOT_NEGATION.search(cue_line):
                return "in an example introduced as bad or malicious"
        if (
            self.security_doc
            and not _SETUP_HEADING.search(doc.heading_at(line))
            and not any(_RUN_CUE.search(t) for t in intro[:1])
        ):
            return "in a fenced example of a document about security"
        return None


#: Inline code spans of a Markdown line.
_INLINE_CODE = patterns.compile(r"`[^`\n]*`")
#: A link's title, inline (``[a](url "…")``) or in a reference definition.
_LINK_TITLE = patterns.compile(
    r"((?:\]\(|^\s*\[[^\]\n]+\]:\s*)<?[^\s)>]*>?\s+)([\"'])([^\"'\n]*)\2(\s*\)?)"
)
#: A frontmatter line whose value is one quoted scalar: ``key: "…"`` or ``- '…'``.
_YAML_QUOTED_VALUE = patterns.compile(r"^(\s*(?:[\w.-]+:|-)\s*)([\"'])(.*)\2(\s*)$")


def _unquote_value(m: re.Match[str]) -> str:
    """The line with the value's own quotes turned to spaces (offsets kept)."""
    return f"{m.group(1)} {m.group(3)} {m.group(4)}"


def _quoted(text: str, column: int) -> bool:
    """Whether the phrase at ``column`` sits inside quotes or backticks on its line."""
    before, after = text[:column], text[column:]
    for left, right in (('"', '"'), ("“", "”"), ("'", "'"), ("‘", "’"), ("`", "`"), ("«", "»")):
        opened = (
            before.count(left) % 2 == 1
            if left == right
            else before.count(left) > before.count(right)
        )
        if opened and right in after:
            return True
    return False
