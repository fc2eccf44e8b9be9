"""Rules for text meant for the model but not for the reader.

Input: a :class:`Document`. Output: :class:`Hit` values for ``invisible-unicode``
(zero-width characters, bidi controls, the Unicode tag block — decoded, since tag
characters spell ASCII that editors do not show), ``prompt-injection`` (override
and concealment phrasing in Markdown) and ``hidden-instructions`` (instructions
in HTML comments or invisible elements).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from skillbook.security import patterns
from skillbook.security.document import MARKDOWN, Document
from skillbook.security.findings import Severity
from skillbook.security.hit import Hit

_C, _H, _M, _L = Severity.CRITICAL, Severity.HIGH, Severity.MEDIUM, Severity.LOW

_TAGS = "\U000e0000-\U000e007f"
_VS_SUPPLEMENT = "\U000e0100-\U000e01ef"
_BIDI = "\u202a-\u202e\u2066-\u2069"
_MARKS = "\u200e\u200f\u061c"
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060-\u2064\u206a-\u206f\ufeff\u180e\u115f\u1160\u3164\uffa0"
#: Every character the rule looks at, in one class, so clean text costs one search.
INVISIBLE = patterns.compile(f"[{_TAGS}{_VS_SUPPLEMENT}{_BIDI}{_MARKS}{_ZERO_WIDTH}\u00ad]+")
#: The characters removed before the other rules run (so ``cu\u200brl | sh`` still matches).
STRIPPABLE = patterns.compile(f"[{_TAGS}{_VS_SUPPLEMENT}{_BIDI}{_MARKS}{_ZERO_WIDTH}\u00ad]")
_RTL = patterns.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")
_FLAG = "\U0001f3f4"


def visible(text: str) -> str:
    """``text`` with invisible and control characters shown as ``<U+XXXX>``."""
    out = []
    for ch in text:
        if STRIPPABLE.match(ch) or (unicodedata.category(ch) in ("Cc", "Cf") and ch not in "\t"):
            out.append(f"<U+{ord(ch):04X}>")
        else:
            out.append(ch)
    return "".join(out)


def _decode_tags(run: str) -> str:
    return "".join(chr(ord(ch) - 0xE0000) if 0xE0020 <= ord(ch) <= 0xE007E else "" for ch in run)


def _is_emoji_context(text: str, start: int, end: int) -> bool:
    """A ZWJ/ZWNJ between emoji or letters of scripts that need joiners is ordinary text."""
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    for ch in (before, after):
        if not ch:
            return False
        if ord(ch) > 0x2000 and unicodedata.category(ch) in ("So", "Sk", "Mn", "Lo", "Mc"):
            continue
        if ord(ch) in range(0x1F3FB, 0x1F400) or ch == "\ufe0f":
            continue
        return False
    return True


def invisible_unicode(doc: Document) -> Iterator[Hit]:
    text = doc.text
    # Most non-ASCII text (typography, emoji, other scripts) has no invisible character:
    # looking at its distinct characters is cheaper than a search of the whole text.
    if text.isascii() or not any(INVISIBLE.match(ch) for ch in doc.non_ascii):
        return
    for m in INVISIBLE.finditer(text):
        run = m.group(0)
        start, end = m.start(), m.end()
        if start == 0 and run == "\ufeff":
            continue  # a byte-order mark
        hit = _classify(doc, run, start, end)
        if hit is not None:
            yield hit


def _classify(doc: Document, run: str, start: int, end: int) -> Hit | None:
    text = doc.text
    tags = [ch for ch in run if 0xE0000 <= ord(ch) <= 0xE007F]
    if tags:
        decoded = _decode_tags(run)
        flag = start > 0 and text[start - 1] == _FLAG and run.endswith("\U000e007f")
        if flag and decoded.isalnum() and decoded.islower() and len(decoded) <= 7:
            return None  # a subdivision flag emoji such as England's
        return Hit("invisible-unicode", _C, start, end,
                   f"{len(tags)} Unicode tag characters hide the text: {decoded[:200]!r}",
                   demotable=False, excerpt=f"hidden text: {decoded[:200]}")  # fmt: skip
    supplement = sum(0xE0100 <= ord(ch) <= 0xE01EF for ch in run)
    if supplement >= 4:
        return Hit("invisible-unicode", _H, start, end,
                   f"{supplement} variation selectors in a row (data hidden in invisible selectors)",
                   demotable=False)  # fmt: skip
    line = doc.line_text(doc.line_of(start))
    rtl_line = bool(_RTL.search(line))
    if any(ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069" for ch in run):
        if rtl_line:
            return Hit("invisible-unicode", _L, start, end,
                       "Bidirectional control characters in right-to-left text", demotable=False)  # fmt: skip
        return Hit("invisible-unicode", _H, start, end,
                   "Bidirectional control characters reorder what the reader sees (Trojan Source)",
                   demotable=False)  # fmt: skip
    if all(ch in _MARKS for ch in run):
        return None if rtl_line else Hit(
            "invisible-unicode", _L, start, end, "Direction marks in left-to-right text",
            demotable=False)  # fmt: skip
    if all(ch in "\u200c\u200d" for ch in run) and _is_emoji_context(text, start, end):
        return None
    if run == "\u00ad":
        return Hit("invisible-unicode", _L, start, end, "Soft hyphen (invisible unless a word breaks)",
                   demotable=False)  # fmt: skip
    severity = _H if len(run) >= 8 else _M
    what = "A run of" if len(run) >= 8 else "Invisible"
    names = sorted({f"U+{ord(ch):04X}" for ch in run})
    return Hit("invisible-unicode", severity, start, end,
               f"{what} zero-width characters ({len(run)}: {', '.join(names[:4])})", demotable=False)  # fmt: skip


# --------------------------------------------------------------------------- prompt-injection

_WHO = r"(?:the\s+|your\s+)?(?:user|human|operator|owner|person|people|anyone)"
_OVERRIDE = patterns.compile(
    r"\b(?:ignore|disregard|forget|override|overrule|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|"
    r"every\s+|of\s+)*(?:previous|prior|preceding|above|earlier|existing|former|original|system|"
    r"safety|other|developer)\s+(?:instructions?|rules|prompts?|directions|guidelines|guardrails|"
    r"constraints|messages?|policies|context)"
    r"|\bignore\s+(?:everything|all)\s+(?:you\s+(?:were|have\s+been)\s+told|above|before)"
    r"|\byou\s+are\s+now\s+(?:in\s+)?(?:DAN|developer\s+mode|jailbroken|unrestricted|unfiltered|"
    r"free\s+of)"
    r"|\bdo\s+anything\s+now\b"
    r"|\b(?:new|updated|real)\s+system\s+(?:prompt|instructions?)\s*:"
    r"|<\|?im_start\|?>\s*system|(?-i:\[/?(?:SYSTEM|INST)\])|\bBEGIN\s+(?:SYSTEM|DEVELOPER)\s+PROMPT\b",
    re.I,
)
#: The same override in the other languages skills are written in (an injection needs
#: no English: the model reads them all).
_OVERRIDE_INTL = patterns.compile(
    # Spanish, Portuguese
    r"\b(?:ignora|ignore|olvida|olvide|omite|omita|esqueça|esqueca|desconsidere)\s+"
    r"(?:todas\s+|todo\s+)?(?:las\s+|as\s+|lo\s+)?(?:instrucciones|indicaciones|reglas|órdenes"
    r"|instruções|instrucoes|regras|orientações)\s+(?:anteriores|previas|prévias|del\s+sistema"
    r"|do\s+sistema)"
    # Italian
    r"|\b(?:ignora|ignorate|dimentica|dimenticate)\s+(?:tutte\s+)?(?:le\s+)?(?:istruzioni|regole"
    r"|indicazioni)\s+(?:precedenti|di\s+sistema)"
    # French
    r"|\b(?:ignore[zr]?|oublie[zr]?)\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes|règles"
    r"|regles)\s+(?:précédentes|precedentes|antérieures|anterieures|du\s+syst[eè]me)"
    # German
    r"|\b(?:ignoriere|ignorier|ignorieren\s+sie|vergiss|vergessen\s+sie)\s+(?:alle\s+)?"
    r"(?:vorherigen|bisherigen|vorigen|früheren|obigen)\s+(?:anweisungen|instruktionen|befehle"
    r"|regeln|vorgaben)"
    # Russian
    r"|(?:проигнорируй|игнорируй|игнорируйте|забудь|забудьте)\s+(?:все\s+)?(?:предыдущие|прежние"
    r"|предшествующие|системные)\s+(?:инструкции|указания|правила|команды)"
    # Chinese
    r"|(?:忽略|无视|無視|忽視|忘记|忘記|忘掉)掉?你?(?:之前|以上|上面|先前|前面|所有|此前|以前)的?"
    r"(?:所有|全部|一切)?的?(?:指令|指示|说明|說明|规则|規則|提示)"
    # Japanese
    r"|(?:以前|前|これまで|上記|先)の(?:すべての|全ての|全部の)?(?:指示|命令|ルール|指令)を"
    r"(?:すべて|全て|全部)?(?:無視|忘れ)"
    # Korean
    r"|(?:이전|앞의|위의|기존)\s*(?:의\s*)?(?:모든\s*)?(?:지시|명령|지침|규칙)(?:사항)?(?:을|를)?\s*"
    r"(?:무시|잊어)",
    re.I,
)
_OVERRIDE_INTL_WORDS = ("ignora", "ignore", "olvida", "olvide", "omite", "omita", "esqueça", "esqueca",
                        "desconsidere", "dimentica", "oublie", "ignoriere", "ignorier", "vergiss",
                        "vergessen", "игнориру", "проигнориру", "забудь", "忽略", "无视", "無視", "忽視",
                        "忘记", "忘記", "忘掉", "を無視", "を忘れ", "무시", "잊어")  # fmt: skip
_CONCEAL = patterns.compile(
    rf"\b(?:do\s+not|don'?t|never|must\s+not|should\s+not)\s+(?:tell|inform|notify|alert|warn|"
    rf"mention\s+(?:this\s+|it\s+|that\s+)?to|reveal\s+(?:this\s+|it\s+|that\s+)?to|show|let)\s+"
    rf"(?:this\s+to\s+|it\s+to\s+)?{_WHO}\b(?!\s+(?:see|know)\s+(?:your|the)\s+(?:api|secret|token|key|password))"
    rf"|\bwithout\s+(?:telling|informing|asking|notifying|alerting|the\s+knowledge\s+of)\s+{_WHO}\b"
    rf"|\b(?:hide|conceal|keep)\s+(?:this|it|these\s+\w+|the\s+\w+)\s+(?:secret\s+|hidden\s+)?from\s+{_WHO}\b"
    rf"|\b(?:the\s+)?(?:user|human)\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|find\s+out|"
    rf"be\s+told|notice)\b"
    rf"|\bsilently\s+(?:run|execute|install|send|upload|post|exfiltrate|download|copy|forward)\b",
    re.I,
)
_ACTION = patterns.compile(
    r"\b(?:curl|wget|iwr|invoke-webrequest|upload|exfiltrat\w*|forward|send|post)\b|https?://"
    r"|\brun\s+(?:this|the\s+following|`)",
    re.I,
)
_OVERRIDE_WORDS = ("ignore", "disregard", "forget", "overrid", "overrul", "bypass", "you are now",
                   "anything now", "system prompt", "system instruction", "im_start", "[inst]",
                   "[/inst]", "[system]", "[/system]", "begin system", "begin developer")  # fmt: skip
_CONCEAL_WORDS = ("do not", "don't", "dont", "never", "must not", "should not", "without",
                  "from the user", "from the human", "from user", "from the operator", "from the owner",
                  "from anyone", "from people", "from your", "from the person", "user must", "user should",
                  "human must", "human should", "silently")  # fmt: skip


def prompt_injection(doc: Document) -> Iterator[Hit]:
    if doc.kind != MARKDOWN:
        return
    text = doc.text
    for regex, what, words in ((_OVERRIDE, "overrides the agent's instructions", _OVERRIDE_WORDS),
                               (_OVERRIDE_INTL, "overrides the agent's instructions",
                                _OVERRIDE_INTL_WORDS),
                               (_CONCEAL, "keeps something from the user", _CONCEAL_WORDS)):  # fmt: skip
        for m in doc.finditer(regex, words):
            line = doc.line_of(m.start())
            start, end = doc.lines_span(line - 1, line + 1)
            severity = _H
            if regex is _CONCEAL and _ACTION.search(text, start, end):
                severity = _C
                what_now = what + " while it runs or sends something"
            else:
                what_now = what
            yield Hit("prompt-injection", severity, m.start(), m.end(), f"Text that {what_now}")


# --------------------------------------------------------------------------- hidden-instructions

_REF_WORDS = ("]:",)
_HIDDEN_ELEMENT = patterns.compile(
    r"<(?P<tag>div|span|p|section|details|font|small|em|aside)\b(?P<attrs>[^>]*?(?:display\s*:\s*none|"
    r"visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0(?:\.0+)?\s*[;\"']|\bhidden\b|"
    r"color\s*:\s*(?:white|#fff(?:fff)?\b|transparent))[^>]*)>(?P<body>.*?)</(?P=tag)\s*>",
    re.I | re.S,
)
_REF_COMMENT = patterns.compile(
    r"^\[(?://|comment)\]:\s*#\s*[(\"'](?P<body>.*)[)\"']\s*$", re.M | re.I
)
#: Wording aimed at a model: one strong signal plus any other makes a comment suspicious.
_STRONG = patterns.compile(
    r"\b(?:ignore|disregard|you\s+must|you\s+should|you\s+are|do\s+not\s+tell|don'?t\s+tell|"
    r"system\s+prompt|execute|run\s+(?:this|the\s+following)|curl|wget|upload|exfiltrat\w*|"
    r"send\s+(?:it|them|this|the\s+\w+)\s+to|as\s+an\s+ai|assistant\s*[:,])",
    re.I,
)
_WEAK = patterns.compile(
    r"\b(?:always|never|do\s+not|don'?t|assistant|AI|agent|model|LLM|claude|chatgpt|instructions?|"
    r"secret|api\s+key|token|password|credentials?|user)\b",
    re.I,
)


def _instruction_signals(body: str) -> list[str]:
    """The model-directed words in ``body`` if they amount to instructions, else ``[]``."""
    strong = {m.group(0).lower() for m in _STRONG.finditer(body)}
    if not strong:
        return []
    weak = {m.group(0).lower() for m in _WEAK.finditer(body)}
    signals = sorted(strong | weak)
    return signals if len(signals) >= 2 else []


_MARKUP_NOTE = patterns.compile(
    r"^\s*(?:prettier-ignore|markdownlint|toc|todo|fixme|note|begin|end|start|stop|vale|cspell|"
    r"textlint|lint|omit|include|end\s|skip|more|readme|eslint|@)|^\s*$",
    re.I,
)


def hidden_instructions(doc: Document) -> Iterator[Hit]:
    if doc.kind != MARKDOWN:
        return
    text = doc.text
    for start, end in doc.html_comments:
        body = text[start + 4 : end - 3 if text.endswith("-->", 0, end) else end]
        if _MARKUP_NOTE.match(body):
            continue
        signals = _instruction_signals(body)
        if signals:
            yield Hit("hidden-instructions", _H, start, end,
                      "HTML comment (invisible when rendered) holds instructions: "
                      + ", ".join(signals[:5]), demotable=False)  # fmt: skip
    low = doc.lower
    if "<" in text and any(
        w in low for w in ("display", "hidden", "font-size", "opacity", "color")
    ):
        for m in _HIDDEN_ELEMENT.finditer(text):
            body = re.sub(r"<[^>]+>", " ", m.group("body")).strip()
            if len(body) >= 12 and _instruction_signals(body):
                yield Hit("hidden-instructions", _H, m.start(), m.end(),
                          "Invisible HTML element holds instructions", demotable=False)  # fmt: skip
    if "]:" in text:
        for m in doc.finditer(_REF_COMMENT, _REF_WORDS, after=0):
            if _instruction_signals(m.group("body")):
                yield Hit("hidden-instructions", _H, m.start(), m.end(),
                          "Markdown comment (invisible when rendered) holds instructions",
                          demotable=False)  # fmt: skip


#: Every keyword the rules of this module look for (for the keyword index).
KEYWORDS = (*_OVERRIDE_WORDS, *_OVERRIDE_INTL_WORDS, *_CONCEAL_WORDS, *_REF_WORDS)
#: The keywords one of which a (Markdown) file must hold for the family to find
#: anything: it searches only the lines around them.
TRIGGERS = {"prompt_injection": (*_OVERRIDE_WORDS, *_OVERRIDE_INTL_WORDS, *_CONCEAL_WORDS)}
