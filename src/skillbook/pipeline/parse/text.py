"""The text of a SKILL.md: bytes decoded, and the frontmatter block split from the body.

Input: a file's text or bytes. Output: the text with a BOM stripped and the
diagnostics of its decoding (:func:`decode_text`), then the frontmatter block, the
body and the lines where each starts, as OpenClaw's 2026.4 finds them (§2.2,
:func:`split_frontmatter`; 2026.9's stricter delimiters are
:mod:`skillbook.pipeline.parse.frontmatter_rules`'). No I/O; never raises on bad input.
"""

from __future__ import annotations

from skillbook import diagnostics as dg
from skillbook.diagnostics import Diagnostic


def decode_text(data: str | bytes) -> tuple[str, list[Diagnostic], bool]:
    """Bytes → text, with a BOM stripped; returns (text, diagnostics, had_bom)."""
    diags: list[Diagnostic] = []
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = raw.decode("utf-8", errors="replace")
            line = raw.count(b"\n", 0, exc.start) + 1
            diags.append(
                dg.warning(
                    "parse.invalid-utf8",
                    f"invalid UTF-8 at byte {exc.start}; undecodable bytes were replaced "
                    "by U+FFFD (save the file as UTF-8)",
                    line=line,
                )
            )
    else:
        text = data
    had_bom = text.startswith("\ufeff")
    if had_bom:
        text = text[1:]
        diags.append(
            dg.warning(
                "parse.bom",
                "the file starts with a UTF-8 byte-order mark; skillbook strips it, "
                "OpenClaw then sees no frontmatter (save without BOM)",
                line=1,
            )
        )
    if "\x00" in text:
        diags.append(
            dg.warning(
                "parse.binary",
                "the file holds NUL bytes; is it really a Markdown text file?",
                line=text.count("\n", 0, text.index("\x00")) + 1,
            )
        )
    return text, diags, had_bom


def split_frontmatter(text: str) -> tuple[str | None, str, int, int]:
    """Find the frontmatter block as OpenClaw does (§2.2).

    Returns ``(block, body, block_line, body_line)``: ``block`` is None when there is
    no terminated block; ``block_line`` is the 1-based line where the block starts.
    Line endings are normalised to ``\\n`` in both block and body.
    """
    normalized = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    if not normalized.startswith("---"):
        return None, normalized, 0, 1
    end = normalized.find("\n---", 3)
    if end == -1:
        return None, normalized, 0, 1
    block = normalized[4:end]
    block_line = normalized.count("\n", 0, 4) + 1
    newline = normalized.find("\n", end + 1)
    body_start = len(normalized) if newline == -1 else newline + 1
    body_line = normalized.count("\n", 0, body_start) + 1
    return block, normalized[body_start:], block_line, body_line
