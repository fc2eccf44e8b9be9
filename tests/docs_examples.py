"""Run a page's examples in order and check what they print (shared by the docs tests).

Each ``sh`` block runs with ``bash -e -o pipefail`` and each ``python`` block in a fresh
interpreter, all in one folder. A ``text`` block right after a code block is that
block's expected output (stdout and stderr together), after ``shown`` rewrote it (the
folder as ``/tmp/docs``, a server's address as the page writes it).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


def blocks(doc: Path) -> list[tuple[str, str, str | None]]:
    """(language, code, expected output or None) for every sh/python block of ``doc``."""
    found = [(m.group(1), m.group(2)) for m in FENCE.finditer(doc.read_text(encoding="utf-8"))]
    out: list[tuple[str, str, str | None]] = []
    for i, (lang, code) in enumerate(found):
        if lang not in ("sh", "python"):
            continue
        after = found[i + 1] if i + 1 < len(found) else None
        out.append((lang, code, after[1] if after and after[0] == "text" else None))
    return out


def run_examples(
    doc: Path,
    work: Path,
    env: Mapping[str, str],
    shown: Callable[[str], str],
    *,
    at_least: int,
    message: Callable[[int, str, str], str] = lambda i, code, _out: (
        f"example {i} printed something else:\n{code}"
    ),
) -> None:
    examples = blocks(doc)
    assert len(examples) >= at_least
    for index, (lang, code, expected) in enumerate(examples, 1):
        argv = ["bash", "-e", "-o", "pipefail", "-c", code]
        if lang == "python":
            argv = [sys.executable, "-c", code]
        proc = subprocess.run(
            argv,
            cwd=work,
            env=dict(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
            check=False,
        )
        out = shown(proc.stdout)
        assert proc.returncode == 0, f"example {index} failed:\n{code}\n---\n{out}"
        if expected is not None:
            assert out == expected, message(index, code, out)
