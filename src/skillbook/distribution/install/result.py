"""What an install returns, and how a failure is summed up in one line (spec §8.3 step 14).

Input: the exit code and output of a command, or the reason an install stopped.
Output: an :class:`InstallResult` in OpenClaw's shape (``ok``, ``message``, trimmed
``stdout``/``stderr``, ``code``, ``warnings``) plus skillbook's stable ``reason`` code
(``install.*``, listed in ``docs/diagnostics.md``) so callers can branch on a refusal
without parsing its message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Final

from skillbook.base.js import JS_WHITESPACE, js_trim, utf16_len, utf16_slice
from skillbook.distribution import InstallError

__all__ = [
    "MAX_SUMMARY_CHARS",
    "InstallResult",
    "format_install_failure_message",
    "summarize_install_output",
]

#: Longest failure summary, in UTF-16 code units as OpenClaw counts them.
MAX_SUMMARY_CHARS: Final = 200

# OpenClaw's patterns are JavaScript regexes without the `u` flag: `\b` is ASCII-only.
_ERROR_FIRST: Final = re.compile(r"^error\b", re.I | re.A)
_ERROR_ANY: Final = re.compile(r"\b(err!|error:|failed)\b", re.I | re.A)
_JS_SPACES: Final = re.compile(f"[{JS_WHITESPACE}]+")


@dataclass(frozen=True, slots=True)
class InstallResult:
    """The outcome of one install (OpenClaw's ``SkillInstallResult`` plus ``reason``)."""

    ok: bool
    message: str
    stdout: str = ""
    stderr: str = ""
    #: The command's exit code; ``None`` when nothing ran to completion.
    code: int | None = None
    warnings: tuple[str, ...] = ()
    #: Stable ``install.*`` code for refusals, failures and skips; ``None`` on success.
    reason: str | None = None

    @classmethod
    def failure(
        cls,
        reason: str,
        message: str,
        *,
        stdout: str = "",
        stderr: str = "",
        code: int | None = None,
    ) -> InstallResult:
        return cls(
            ok=False,
            message=message,
            stdout=js_trim(stdout),
            stderr=js_trim(stderr),
            code=code,
            reason=reason,
        )

    @classmethod
    def from_error(cls, error: InstallError, *, as_stderr: bool = False) -> InstallResult:
        """A refusal; ``as_stderr`` repeats the message as stderr (the download installer does)."""
        return cls.failure(error.code, error.message, stderr=error.message if as_stderr else "")

    def with_warnings(self, warnings: tuple[str, ...] | list[str]) -> InstallResult:
        if not warnings:
            return self
        return replace(self, warnings=(*warnings, *self.warnings))

    def to_json(self) -> dict[str, Any]:
        """OpenClaw's keys (``warnings`` only when there are some), then ``reason``."""
        out: dict[str, Any] = {
            "ok": self.ok,
            "message": self.message,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "code": self.code,
        }
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.reason is not None:
            out["reason"] = self.reason
        return out


def summarize_install_output(text: str) -> str | None:
    """The line that best explains a failure, whitespace collapsed, at most 200 chars.

    First a line starting with ``error``, else one containing ``err!``, ``error:`` or
    ``failed`` (word-bounded, as OpenClaw's regex), else the last non-empty line.
    """
    raw = js_trim(text)
    if not raw:
        return None
    lines = [line for line in (js_trim(x) for x in raw.split("\n")) if line]
    if not lines:
        return None
    preferred = next((x for x in lines if _ERROR_FIRST.search(x)), None)
    if preferred is None:
        preferred = next((x for x in lines if _ERROR_ANY.search(x)), lines[-1])
    normalized = js_trim(_JS_SPACES.sub(" ", preferred))
    if utf16_len(normalized) > MAX_SUMMARY_CHARS:
        return utf16_slice(normalized, MAX_SUMMARY_CHARS - 1) + "…"
    return normalized


def format_install_failure_message(code: int | None, stdout: str, stderr: str) -> str:
    """``Install failed (exit N|unknown exit)`` plus ``: <summary>`` (stderr first)."""
    label = f"exit {code}" if code is not None else "unknown exit"
    summary = summarize_install_output(stderr) or summarize_install_output(stdout)
    if not summary:
        return f"Install failed ({label})"
    return f"Install failed ({label}): {summary}"
