"""Whether a command the model asks ``exec`` to run may run: the policy, then the user.

Input: the config's ``skills.exec`` (``policy``, ``allow``) and each
``skills.entries.<key>.exec.allow``, the skills the agent runs as, one ``exec`` tool
call, and an approver (a person to ask) or none. Output: a :class:`Decision`, whose
``message`` is the tool error the model gets when the command does not run.

The order (``ask`` is the default policy):

1. ``policy: "allow"`` (or ``--yes``, :meth:`ExecPolicy.allow_all`): it runs.
2. A simple command whose words start with an allowlist entry runs unasked:
   ``skills.exec.allow`` for any call, ``skills.entries.<key>.exec.allow`` for a call
   run as that skill (``skill`` names it). Never with a ``cwd`` argument, which could
   point the entry's relative path somewhere else. See :mod:`skillbook.base.shell_words`.
3. ``policy: "allowlist"``: anything else is refused, nobody is asked.
4. ``policy: "ask"``: the approver is asked; only ``True`` runs the command. With no
   approver (no terminal, an ``Agent`` without ``approve``) it is refused.

``ask_everything`` (``--confirm``) skips 1 and 2: the user sees every command.
Commands the user typed (slash commands) never come here. :func:`decide` is for async
code; :func:`decide_sync` gives the same answer to a framework's synchronous tool call.
"""

from __future__ import annotations

import inspect
import logging
import unicodedata
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from skillbook.base.shell_words import command_words, starts_with

if TYPE_CHECKING:
    from skillbook.config.file import Config
    from skillbook.model import Skill
    from skillbook.runtime.providers.base import ToolCall

__all__ = [
    "ASK",
    "DECLINED_RESULT",
    "POLICIES",
    "REFUSED_ALLOWLIST_RESULT",
    "REFUSED_NO_APPROVER_RESULT",
    "REFUSED_NO_ONE_RESULT",
    "Approver",
    "Decision",
    "ExecPolicy",
    "decide",
    "decide_sync",
    "show_command",
]

_log = logging.getLogger("skillbook.agent")

ASK: Final = "ask"
ALLOWLIST: Final = "allowlist"
ALLOW: Final = "allow"
POLICIES: Final = (ASK, ALLOWLIST, ALLOW)

#: What the model gets for a command the user declined.
DECLINED_RESULT: Final = "exec: the user declined to run this command"
REFUSED_NO_ONE_RESULT: Final = (
    "exec: not run: commands need the user's approval and no one could be asked (no "
    "terminal). The user can allow them with --yes, or allow this one with a command "
    "prefix in skills.exec.allow or skills.entries.<skill>.exec.allow."
)
#: What the model gets when its framework's tools were given no approver (no person to ask).
REFUSED_NO_APPROVER_RESULT: Final = (
    "exec: not run: commands need the user's approval and this agent has no way to ask "
    "(no approve callback). The user can allow this one with a command prefix in "
    "skills.exec.allow or skills.entries.<skill>.exec.allow."
)
REFUSED_ALLOWLIST_RESULT: Final = (
    'exec: not run: skills.exec.policy is "allowlist" and no allowlist entry starts this '
    "command (a simple command: one line, no ; & | < > or substitutions)."
)

#: Asked before an ``exec`` call runs; only ``True`` lets it run.
Approver = Callable[["ToolCall"], "Awaitable[bool] | bool"]


@dataclass(frozen=True, slots=True)
class ExecPolicy:
    """The configured answer to "may the model run this command without asking?"."""

    mode: str = ASK
    #: ``skills.exec.allow``: prefixes for any model command.
    allow: tuple[str, ...] = ()
    #: ``skills.entries.<key>.exec.allow`` by skill key.
    skill_allow: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    #: Ask about every command, even one the mode or an allowlist would run.
    ask_everything: bool = False

    @classmethod
    def from_config(cls, config: Config, *, ask_everything: bool = False) -> ExecPolicy:
        by_key = {k: e.exec_allow for k, e in config.skills.entries.items() if e.exec_allow}
        return cls(
            mode=config.skills.exec.policy or ASK,
            allow=config.skills.exec.allow,
            skill_allow=MappingProxyType(by_key),
            ask_everything=ask_everything,
        )

    @classmethod
    def allow_all(cls) -> ExecPolicy:
        """Every command runs unasked (``--yes``): for a trusted model and skills only."""
        return cls(mode=ALLOW)

    def allowing_entry(self, args: Mapping[str, Any], skills: Iterable[Skill]) -> str | None:
        """The allowlist entry (``key.path: "prefix"``) that lets this call run, or None."""
        command = args.get("command")
        if not isinstance(command, str) or args.get("cwd"):
            return None
        words = command_words(command)
        if isinstance(words, str):
            return None
        for entry in self.allow:
            if starts_with(words, entry):
                return f'skills.exec.allow: "{entry}"'
        skill = _find(args.get("skill"), skills)
        if skill is not None:
            for entry in self.skill_allow.get(skill.skill_key, ()):
                if starts_with(words, entry):
                    return f'skills.entries.{skill.skill_key}.exec.allow: "{entry}"'
        return None


@dataclass(frozen=True, slots=True)
class Decision:
    """``run``, or why not: ``message`` is the tool error the model gets."""

    run: bool
    #: ``policy``, ``allowlist`` or ``user`` (ran); ``declined`` or ``refused`` (did not).
    reason: str
    message: str = ""
    #: The allowlist entry that let it run, when ``reason`` is ``allowlist``.
    rule: str | None = None

    @property
    def asked(self) -> bool:
        """Whether a person answered (declined or approved) rather than the policy."""
        return self.reason in ("user", "declined")


def _find(name: object, skills: Iterable[Skill]) -> Skill | None:
    if not isinstance(name, str) or not name:
        return None
    listed = list(skills)
    by_name = next((s for s in listed if s.name == name), None)
    return by_name or next((s for s in listed if s.skill_key == name), None)


def _settled(
    policy: ExecPolicy,
    call: ToolCall,
    skills: Iterable[Skill],
    approve: Approver | None,
    unasked: str,
) -> Decision | None:
    """The decision when no one needs asking (steps 1-3, or no approver), else None."""
    if not policy.ask_everything:
        if policy.mode == ALLOW:
            return Decision(True, "policy")
        rule = policy.allowing_entry(call.arguments, skills)
        if rule is not None:
            return Decision(True, "allowlist", rule=rule)
        if policy.mode == ALLOWLIST:
            return Decision(False, "refused", REFUSED_ALLOWLIST_RESULT)
    if approve is None:
        return Decision(False, "refused", unasked)
    return None


def _answered(outcome: object) -> Decision:
    if outcome is True:
        return Decision(True, "user")
    return Decision(False, "declined", DECLINED_RESULT)


def _failed(exc: Exception) -> Decision:
    # A broken prompt must not let the command run.
    _log.warning("the approve callback failed; the command is declined", exc_info=exc)
    return Decision(False, "declined", DECLINED_RESULT)


async def decide(
    policy: ExecPolicy,
    call: ToolCall,
    skills: Iterable[Skill],
    approve: Approver | None,
    *,
    unasked: str = REFUSED_NO_ONE_RESULT,
) -> Decision:
    """Whether ``call`` (a model's ``exec`` call) runs; see the module docstring.

    ``unasked`` is the message the model gets when no approver could be asked.
    """
    settled = _settled(policy, call, skills, approve, unasked)
    if settled is not None:
        return settled
    assert approve is not None
    try:
        outcome = approve(call)
        if inspect.isawaitable(outcome):
            outcome = await outcome
    except Exception as exc:
        return _failed(exc)
    return _answered(outcome)


def decide_sync(
    policy: ExecPolicy,
    call: ToolCall,
    skills: Iterable[Skill],
    approve: Approver | None,
    *,
    unasked: str = REFUSED_NO_ONE_RESULT,
) -> Decision:
    """:func:`decide` for synchronous code (a framework's sync tool call).

    An async approver is run to its end on a private event loop when this thread runs
    none; inside a running loop it cannot be waited for, so the command is declined
    (use the framework's async call there).
    """
    settled = _settled(policy, call, skills, approve, unasked)
    if settled is not None:
        return settled
    assert approve is not None
    try:
        outcome = approve(call)
        if inspect.isawaitable(outcome):
            outcome = _wait(outcome)
    except Exception as exc:
        return _failed(exc)
    return _answered(outcome)


def _wait(awaitable: Awaitable[bool]) -> bool:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:

        async def answer() -> bool:
            return await awaitable

        return asyncio.run(answer())
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()  # never awaited: no "coroutine was never awaited" warning
    raise RuntimeError(
        "an async approve callback cannot be awaited from synchronous code inside a "
        "running event loop; call the tool asynchronously"
    )


# --------------------------------------------------------------------------- showing a command

#: Characters that look like nothing, or like something else, on a terminal.
_INVISIBLE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
#: Letters and marks that render as blank (Hangul fillers, Braille blank, variation
#: selectors, the combining grapheme joiner).
_INVISIBLE_CHARS: Final = frozenset(
    "\u115f\u1160\u3164\uffa0\u2800\u034f" + "".join(chr(c) for c in range(0xFE00, 0xFE10))
)


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def show_command(text: str) -> str:
    """``text`` as a person must see it before approving it: every character that is
    invisible or could hide or reorder the rest (C0/C1 controls, ANSI escapes,
    zero-width and bidi controls, the tag block, variation selectors, blank letters,
    spaces other than U+0020) is shown as an escape such as ``\\x1b`` or ``\\u202e``.
    Newlines are kept (each line is shown); tabs become ``\\t``."""
    out: list[str] = []
    for ch in text:
        if ch in "\n ":
            out.append(ch)
        elif ch == "\t":
            out.append("\\t")
        elif (
            unicodedata.category(ch) in _INVISIBLE_CATEGORIES
            or unicodedata.category(ch) == "Zs"  # spaces that are not U+0020
            or ch in _INVISIBLE_CHARS
            or 0xE0100 <= ord(ch) <= 0xE01EF  # variation selectors supplement
        ):
            out.append(_escape(ch))
        else:
            out.append(ch)
    return "".join(out)
