"""Did a run follow an existing skill, and did it do what the skill says?

Input: a successful session (:class:`~skillbook.experience.record.SessionRecord`), its
:class:`~skillbook.experience.procedure.Procedure`, and the catalog's skills with the
text of their ``SKILL.md``. Output: :class:`Following` for the skill the run followed,
with what it did otherwise (``changes``), or None. Nothing here does I/O.

**Followed.** The session shows it in one of three ways (``Following.followed``):

``read``   the model read the skill's ``SKILL.md`` (the ``read`` tool, attributed to
           the skill);
``exec``   a command ran as the skill (``exec`` with ``skill``: in its folder, with its
           environment);
``slash``  the request is the skill's slash command (``/wordcount …``) handed to the model.

A ``find_skills`` call alone is not following: it looked the skill up, the run may not
have used it.

**Compared.** The commands the skill states are its fenced ``sh``/``bash``/``shell``
blocks (or blocks with no language), one command a line, and its inline code spans
that look like a command (a program and at least one argument). In a stated command
``FILE``, ``N``, ``<file>``, ``{file}``, ``${file}``, ``$FILE`` and ``{baseDir}`` stand for
any one word, and ``[file]`` at the end of a command for an argument that may also be left
out (a learned skill's helper takes its parameters so, each defaulting to the run's value:
passing another value is using the skill, not changing it); quotes are left out on both
sides (``"$FILE"`` is ``FILE``); where the
run has one of its parameters (``${city}``, a value of the request), the skill's word is
an example value (``wttr.in/London`` for ``wttr.in/${city}``). Each command the run ran (the procedure's steps; reads are not compared) is

* the **same** as a stated one: it matches it word by word, placeholders standing for
  anything;
* a **variant** of one: the same program, with at least :data:`VARIANT_SIMILARITY` of
  the words in common (other arguments, another flag);
* an **extra** step otherwise.

A stated command that the run left out, between the first and the last ones it ran,
was **left out** (a skill listing unrelated commands is not a procedure to run whole:
commands before the first or after the last one used are not counted). A stated command
that failed and was retried with something else is a **mistake fixed**. A step of
another tool counts as stated when the skill names the tool in a code span.

**Verdict.** The run is *related* to the skill when one of its steps is the same as or
a variant of a stated command, or a stated command failed in it. A related run with no
change is a **pure follow** (no new draft: the skill already says it); a related run
with changes gives a **refine** draft. A run that followed a skill but ran nothing it
states (a skill that only describes, or a run that did something else as it) is not
related: it is learned as a new skill, as before. Nor is a run that also ran commands
as another skill: it combined skills, which neither states alone. When the run
followed several skills, the most related one is chosen (ties: the first followed).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from skillbook.experience._markdown import code_span
from skillbook.experience.params import substitute
from skillbook.experience.procedure import LOOKUP_TOOLS, Procedure, ProcedureStep
from skillbook.experience.programs import program_of
from skillbook.experience.record import SessionRecord

__all__ = [
    "VARIANT_SIMILARITY",
    "CatalogSkill",
    "Following",
    "find_following",
    "slash_skill",
    "stated_commands",
]

#: The share of words (difflib ratio) a command must have with a stated one of the
#: same program to be a variant of it rather than an extra step.
VARIANT_SIMILARITY: Final = 0.4
#: How much of a stated command or run command a change sentence quotes.
QUOTE_CHARS: Final = 160

_FRONTMATTER: Final = re.compile(r"\A---\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
#: A fence line: its backticks or tildes, and the info string's first word (the language).
#: Any indentation: a block inside a list item is indented with it.
_FENCE_LINE: Final = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^`\s]*)")
_SHELL_LANGS: Final = frozenset({"", "sh", "bash", "shell", "console", "zsh", "terminal"})
#: Only this much of a skill's text is compared (a hand-made giant must not stall learning).
MAX_TEXT_CHARS: Final = 256 * 1024
_SPAN: Final = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_PROGRAM: Final = re.compile(r"^(?:\./|~/|/)?[A-Za-z0-9_][\w./+-]*$")
#: Words of a stated command that stand for a value the user gives.
_PLACEHOLDER: Final = re.compile(
    r"\{baseDir\}/?"
    r"|\$\{[^}]*\}"
    r"|\{[A-Za-z_][\w.-]*\}"
    r"|<[A-Za-z][\w .-]*>"
    r"|\$[A-Za-z_][A-Za-z0-9_]*"
    r"|(?<![\w-])[A-Z][A-Z0-9_]+(?![\w-])"
    r"|(?<!\S)\[[A-Za-z_][\w.-]*\](?!\S)"
)
#: A word of a usage line that stands for an argument one may leave out: ``[file]``, as
#: a learned skill's Replay section writes its helper's parameters (each defaults to the
#: run's value). A run giving another value, or none, still does what the skill states.
_OPTIONAL: Final = re.compile(r"^\[[A-Za-z_][\w.-]*\]$")
_SINGLE_CAPITAL: Final = re.compile(r"^[A-Z]$")
#: A parameter of the run's command, as the procedure writes it.
_RUN_PARAM: Final = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")


@dataclass(frozen=True, slots=True)
class CatalogSkill:
    """A skill of the catalog as the comparison needs it: ``text`` is its ``SKILL.md``."""

    name: str
    path: str
    source: str
    text: str


@dataclass(frozen=True, slots=True)
class Following:
    """The skill a run followed, and what it did otherwise (empty: a pure follow)."""

    skill: CatalogSkill
    followed: tuple[str, ...]
    changes: tuple[str, ...]
    #: How many of the run's steps are the same as or a variant of a stated command.
    matched: int

    @property
    def pure(self) -> bool:
        return not self.changes


def stated_commands(text: str) -> tuple[str, ...]:
    """The commands a skill's text states, in order (the module docstring says which)."""
    body = _FRONTMATTER.sub("", text[:MAX_TEXT_CHARS], count=1)
    found: list[str] = []
    prose, blocks = _split_fences(body)
    for index, part in enumerate(prose):
        for span in _SPAN.finditer(part):
            words = span.group(1).split()
            if len(words) >= 2 and _PROGRAM.match(words[0]) and not words[0].isupper():
                found.append(" ".join(words))
        if index < len(blocks):
            lang, block = blocks[index]
            if lang in _SHELL_LANGS:
                found += _block_commands(block)
    return tuple(dict.fromkeys(found))


def _split_fences(body: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The prose between fenced blocks, and each block's language and text, in one pass
    over the lines (a fence left open runs to the end, as in CommonMark)."""
    prose: list[str] = []
    blocks: list[tuple[str, str]] = []
    outside: list[str] = []
    inside: list[str] = []
    fence: str | None = None
    lang = ""
    for line in body.splitlines():
        m = _FENCE_LINE.match(line)
        if fence is None:
            if m is None:
                outside.append(line)
                continue
            fence, lang = m.group(1), m.group(2).lower()
            prose.append("\n".join(outside))
            outside, inside = [], []
        elif m is not None and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
            if not line.strip().strip(fence[0]):
                blocks.append((lang, "\n".join(inside)))
                fence = None
                continue
            inside.append(line)
        else:
            inside.append(line)
    if fence is not None:
        blocks.append((lang, "\n".join(inside)))
    prose.append("\n".join(outside))
    return prose, blocks


def slash_skill(request: str, names: Sequence[str]) -> str | None:
    """The skill whose slash command ``request`` starts with (``/word_count …``), if any."""
    head = request.strip().split(maxsplit=1)
    if not head or not head[0].startswith("/") or len(head[0]) < 2:
        return None
    typed = _command_key(head[0][1:])
    return next((n for n in names if _command_key(n) == typed), None)


def find_following(
    record: SessionRecord, procedure: Procedure, catalog: Sequence[CatalogSkill]
) -> Following | None:
    """The catalog skill ``record`` followed and is related to (module docstring), or None."""
    by_name = {s.name: s for s in catalog}
    evidence: dict[str, list[str]] = {}
    for name in record.skills_read:
        evidence.setdefault(name, []).append("read")
    for tool in record.tools:
        # A standalone skill (mixed, legacy) is a `<name>.md`, not a SKILL.md.
        skill = by_name.get(tool.skill or "")
        if tool.name == "read" and tool.ok and skill is not None and tool.path == skill.path:
            how = evidence.setdefault(skill.name, [])
            if "read" not in how:
                how.insert(0, "read")
    for tool in record.tools:
        if tool.name == "exec" and tool.ok and tool.skill:
            how = evidence.setdefault(tool.skill, [])
            if "exec" not in how:
                how.append("exec")
    slash = slash_skill(record.request, list(by_name))
    if slash is not None:
        evidence.setdefault(slash, []).append("slash")
    best: Following | None = None
    for name, how in evidence.items():
        skill = by_name.get(name)
        if skill is None:
            continue  # not in the catalog any more: nothing to compare with
        found = _compare(skill, tuple(how), record, procedure)
        if found is not None and (best is None or found.matched > best.matched):
            best = found
    return best


# ---------------------------------------------------------------------- comparison


def _compare(
    skill: CatalogSkill, followed: tuple[str, ...], record: SessionRecord, procedure: Procedure
) -> Following | None:
    stated = stated_commands(skill.text)
    patterns = [_words(c) for c in stated]
    # The words of the skill's code spans: a tool it names there is a step it states.
    spans = {w for m in _SPAN.finditer(skill.text[:MAX_TEXT_CHARS]) for w in m.group(1).split()}
    changes: list[str] = []
    used: list[int] = []
    matched = 0
    for step in procedure.steps:
        if step.tool == "read" or step.tool in LOOKUP_TOOLS:
            continue
        if step.skill and step.skill != skill.name:
            return None  # it combined skills: a procedure of its own
        if step.tool != "exec" or step.raw is None:
            if step.tool not in spans:
                changes.append(f"extra step: the `{step.tool}` tool")
            continue
        index, same = _match(step.command or step.raw, stated, patterns, taken=used)
        if index is None:
            changes.append(f"extra step: {_quote(_shown(step))}")
            continue
        used.append(index)
        matched += 1
        if not same:
            changes.append(f"other arguments: {_quote(stated[index])} → {_quote(_shown(step))}")
    fixed = _mistakes_fixed(record, procedure, stated, patterns)
    if not matched and not fixed:
        return None
    changes += fixed
    if used:
        first, last = min(used), max(used)
        changes += [
            f"left out: {_quote(stated[i])}" for i in range(first, last + 1) if i not in used
        ]
    return Following(skill, followed, tuple(dict.fromkeys(changes)), matched)


def _mistakes_fixed(
    record: SessionRecord,
    procedure: Procedure,
    stated: Sequence[str],
    patterns: Sequence[Sequence[re.Pattern[str]]],
) -> list[str]:
    """A stated command that failed, then something else worked: the skill's mistake."""
    out: list[str] = []
    for pit in _failed_commands(record):
        attempt, error, fixed_by = pit
        index, same = _match(substitute(attempt, procedure.params), stated, patterns)
        if index is None or not same or fixed_by is None or fixed_by == attempt:
            continue
        out.append(
            f"fixed a mistake: {_quote(stated[index])} failed ({_flat(error)}); "
            f"{_quote(fixed_by)} worked"
        )
    return out


def _failed_commands(record: SessionRecord) -> list[tuple[str, str, str | None]]:
    """``(command, error, what worked)`` of each failed command that was retried."""
    tools = [t for t in record.tools if t.name == "exec"]
    out: list[tuple[str, str, str | None]] = []
    for index, entry in enumerate(tools):
        if entry.ok or entry.declined or entry.command is None:
            continue
        later = next((t for t in tools[index + 1 :] if t.ok), None)
        if later is not None:
            out.append((entry.command, entry.result, later.command))
    return out


def _match(
    command: str,
    stated: Sequence[str],
    patterns: Sequence[Sequence[re.Pattern[str]]],
    *,
    taken: Sequence[int] = (),
) -> tuple[int | None, bool]:
    """The stated command ``command`` is the same as (index, True), a variant of
    (index, False), or neither (None, False). ``command`` shows the run's parameters as
    ``${name}``. A stated command an earlier step already matched (``taken``) has no
    variant: a second ``wc`` after the stated one is an extra step, not other arguments
    for it."""
    words = _unquoted(command).split()
    for index, stated_words in enumerate(patterns):
        said = _unquoted(stated[index]).split()
        # Trailing optional arguments (``[file]``) may be left out of the run.
        optional = len(said) - len(_without_optional_tail(said))
        if len(said) - optional <= len(words) <= len(said) and all(
            _same_word(p, stated_word, word)
            for p, stated_word, word in zip(stated_words, said, words, strict=False)
        ):
            return index, True
    program = program_of(words)
    best, best_ratio = None, 0.0
    for index, other in enumerate(stated):
        theirs = _unquoted(other).split()
        if index in taken or program is None or program_of(theirs) != program:
            continue
        ratio = difflib.SequenceMatcher(None, words, theirs, autojunk=False).ratio()
        if ratio >= VARIANT_SIMILARITY and ratio > best_ratio:
            best, best_ratio = index, ratio
    return best, False


def _without_optional_tail(words: Sequence[str]) -> Sequence[str]:
    end = len(words)
    while end and _OPTIONAL.match(words[end - 1]):
        end -= 1
    return words[:end]


def _same_word(pattern: re.Pattern[str], stated: str, run: str) -> bool:
    """A word of the run is the stated word: equal, or a value where the skill has a
    placeholder (``FILE``), or the run's parameter where the skill has an example value
    (``wttr.in/${city}`` for ``wttr.in/London``: the user asked about another city)."""
    if pattern.fullmatch(run):
        return True
    if "${" not in run:
        return False
    parts = _RUN_PARAM.split(run)
    wild = r"\S+?".join(re.escape(part) for part in parts)
    return re.fullmatch(wild, stated) is not None


def _words(stated: str) -> list[re.Pattern[str]]:
    """A stated command as one regex per word (placeholders stand for any one word)."""
    parts: list[re.Pattern[str]] = []
    for word in _unquoted(stated).split():
        if _SINGLE_CAPITAL.match(word):
            parts.append(re.compile(r"\S+"))  # `head -n N`
            continue
        out, last = [], 0
        for m in _PLACEHOLDER.finditer(word):
            out.append(re.escape(word[last : m.start()]))
            # {baseDir}/ may be left out: exec as the skill runs in its folder.
            out.append(r"(?:\S*/)?" if m.group(0).startswith("{baseDir}") else r"\S+?")
            last = m.end()
        out.append(re.escape(word[last:]))
        parts.append(re.compile("".join(out)))
    return parts


def _unquoted(command: str) -> str:
    """``command`` without quote characters, white space collapsed: what is compared.

    A skill writes ``"$FILE"`` or ``FILE``, a run ``/data/a.txt`` or ``"/data/a.txt"``,
    and a learned procedure ``"${file}"``: quoting is how a value is passed, not which.
    """
    return " ".join(command.replace('"', " ").replace("'", " ").split())


def _block_commands(block: str) -> list[str]:
    """Commands of a shell block: one a line, ``\\``-continued lines joined, ``$`` prompts
    and comments left out."""
    out: list[str] = []
    pending = ""
    for raw in block.splitlines():
        line = raw.strip()
        if pending:
            line = f"{pending} {line}"
            pending = ""
        if line.endswith("\\"):
            pending = line[:-1].strip()
            continue
        if line.startswith("$ "):
            line = line[2:].strip()
        if line and not line.startswith("#"):
            out.append(" ".join(line.split()))
    if pending:
        out.append(pending)
    return out


def _shown(step: ProcedureStep) -> str:
    return step.command if step.command is not None else step.raw or step.tool


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return code_span(flat if len(flat) <= QUOTE_CHARS else flat[: QUOTE_CHARS - 1] + "…")


def _flat(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "it failed")
    line = line.replace("`", "'")
    return line if len(line) <= QUOTE_CHARS else line[: QUOTE_CHARS - 1] + "…"


def _command_key(name: str) -> str:
    return re.sub(r"_+", "_", re.sub(r"[^a-z0-9]", "_", name.lower())).strip("_")
