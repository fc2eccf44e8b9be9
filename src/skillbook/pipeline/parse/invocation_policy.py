"""The invocation keys of a frontmatter: who may invoke a skill, and its tool dispatch.

Input: the frontmatter's string view (OpenClaw's ``key -> str``). Output: the
:class:`~skillbook.model.InvocationPolicy` (``user-invocable``,
``disable-model-invocation``; §2.4) and the :class:`~skillbook.model.CommandDispatch`
of ``command-dispatch: tool`` with its diagnostics (§2.4/§6.1). No I/O. Resolving a
chat message to a command is :mod:`skillbook.pipeline.commands.invocation`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from skillbook import diagnostics as dg
from skillbook.base.js import js_trim
from skillbook.diagnostics import Diagnostic
from skillbook.model import CommandDispatch, InvocationPolicy

_TRUTHY = frozenset({"true", "1", "yes", "on"})
_FALSY = frozenset({"false", "0", "no", "off"})


def parse_bool(value: str | None, default: bool) -> bool:
    """OpenClaw's ``parseFrontmatterBool``: yes/no words, anything else is the default."""
    if value is None:
        return default
    word = js_trim(value).lower()
    if word in _TRUTHY:
        return True
    if word in _FALSY:
        return False
    return default


# The four possible policies, shared: a build makes one per skill otherwise.
_POLICIES = {
    (user, model): InvocationPolicy(user_invocable=user, disable_model_invocation=model)
    for user in (True, False)
    for model in (True, False)
}
_DEFAULT_POLICY = _POLICIES[True, False]


def resolve_invocation(values: Mapping[str, str]) -> InvocationPolicy:
    """§2.4: ``user-invocable`` (default true), ``disable-model-invocation`` (default false)."""
    if "user-invocable" not in values and "disable-model-invocation" not in values:
        return _DEFAULT_POLICY  # what the defaults give (the common case)
    return _POLICIES[
        parse_bool(values.get("user-invocable"), True),
        parse_bool(values.get("disable-model-invocation"), False),
    ]


def _first(values: Mapping[str, str], *keys: str) -> str:
    # JavaScript `a ?? b ?? ""`: the first key that is present, even if blank.
    for key in keys:
        value = values.get(key)
        if value is not None:
            return value
    return ""


def resolve_dispatch(
    values: Mapping[str, str], *, path: Path | None = None, lines: Mapping[str, int] | None = None
) -> tuple[CommandDispatch | None, tuple[Diagnostic, ...]]:
    """§2.4/§6.1: ``command-dispatch: tool`` with ``command-tool`` → a tool dispatch."""
    if "command-dispatch" not in values and "command_dispatch" not in values:
        return None, ()  # the common case: no dispatch asked for
    lines = lines or {}
    kind = js_trim(_first(values, "command-dispatch", "command_dispatch")).lower()
    if kind != "tool":
        return None, ()
    line = lines.get("command-dispatch", lines.get("command_dispatch"))
    tool = js_trim(_first(values, "command-tool", "command_tool"))
    if not tool:
        return None, (
            dg.warning(
                "parse.dispatch-no-tool",
                "`command-dispatch: tool` needs `command-tool: <tool name>`; dispatch ignored",
                path=path,
                line=line,
            ),
        )
    mode = js_trim(_first(values, "command-arg-mode", "command_arg_mode")).lower()
    diags: tuple[Diagnostic, ...] = ()
    if mode and mode != "raw":
        diags = (
            dg.warning(
                "parse.arg-mode",
                f"`command-arg-mode: {mode}` is not supported; `raw` is used",
                path=path,
                line=lines.get("command-arg-mode", lines.get("command_arg_mode", line)),
            ),
        )
    return CommandDispatch(tool_name=tool), diags
