"""The rules' compiled patterns kept between processes (issue 22: no regex compilation
per process) are the patterns ``re.compile`` makes, and a damaged file changes nothing."""

from __future__ import annotations

import json
import marshal
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillbook.security import patterns
from skillbook.security.literals import leading_literals

SRC = Path(__file__).resolve().parents[2] / "src"
PROBE = """
import json, re, sys
from skillbook.security import scanner, patterns
store = patterns.STORE
loaded = store.loaded or {}
same = all(patterns._sre.compile(p, *entry) == re.compile(p, flags)
           for (p, flags), entry in loaded.items())
print(json.dumps({**store.status(), "same": same, "loaded": len(loaded)}))
"""


def _run(prefix: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "PYTHONPYCACHEPREFIX": str(prefix)},
    )  # fmt: skip
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


@pytest.mark.subprocess
def test_the_second_process_loads_every_rule_pattern_from_the_file(tmp_path: Path) -> None:
    first = _run(tmp_path)
    assert first["from_file"] == 0 and first["used"] > 150
    assert str(first["path"]).startswith(str(tmp_path))  # where Python keeps bytecode
    second = _run(tmp_path)
    assert second["from_file"] == second["used"] == first["used"]
    # Equal patterns: the same pattern text, flags and engine program as re.compile's.
    assert second["same"] is True and second["loaded"] == first["used"]


@pytest.fixture(autouse=True)
def _bytecode_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    # The store writes only where Python may write bytecode; a shell with
    # PYTHONDONTWRITEBYTECODE=1 (CI images often set it) must not fail these tests.
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def _store(tmp_path: Path) -> tuple[patterns.Store, Path]:
    path = tmp_path / "patterns.re"
    writer = patterns.Store(str(path))
    writer.compile(r"\bcurl\b[^\n]*\|\s*(?P<sh>ba)?sh", re.I)
    writer.compile(r"(?<![\w.])eval\s*\(", 0)
    writer.seal()
    assert path.is_file()
    return patterns.Store(str(path)), path


def test_a_store_gives_what_re_compile_gives(tmp_path: Path) -> None:
    reader, _path = _store(tmp_path)
    found = reader.compile(r"\bcurl\b[^\n]*\|\s*(?P<sh>ba)?sh", re.I)
    assert found == re.compile(r"\bcurl\b[^\n]*\|\s*(?P<sh>ba)?sh", re.I)
    assert found.groupindex == {"sh": 1}
    assert reader.status()["from_file"] == 1
    # The leading literals come with it: every match starts with "curl".
    assert reader.leading(found) == ("curl",)
    assert reader.leading(re.compile("curl")) is None  # not compiled through the store
    # After sealing, nothing is read from or kept for the file.
    reader.seal()
    assert reader.compile("x+y") == re.compile("x+y")
    assert reader.status()["used"] == 1


@pytest.mark.parametrize(
    "damage",
    ["garbage", "truncated", "other python", "bad program", "bad shape", "bad literals",
     "no literals"],
)  # fmt: skip
def test_a_damaged_file_changes_nothing(tmp_path: Path, damage: str) -> None:
    _reader, path = _store(tmp_path)
    tag, entries, leads = marshal.loads(path.read_bytes())
    if damage == "garbage":
        path.write_bytes(b"\x00not marshal\xff" * 10)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:50])
    elif damage == "other python":
        path.write_bytes(marshal.dumps(((*tag[:1], "2.7.18", *tag[2:]), entries, leads)))
    elif damage == "bad program":
        path.write_bytes(marshal.dumps((tag, {k: (v[0], [999, 1, 2], *v[2:])
                                              for k, v in entries.items()}, leads)))  # fmt: skip
    elif damage == "bad literals":  # a wrong set would skip offsets where a match starts
        path.write_bytes(marshal.dumps((tag, entries, {k: ("",) for k in leads})))
    elif damage == "no literals":
        path.write_bytes(marshal.dumps((tag, entries, {})))
    else:
        path.write_bytes(marshal.dumps((tag, {k: 7 for k in entries}, leads)))
    reader = patterns.Store(str(path))
    for text, flags in entries:
        found = reader.compile(text, flags)
        assert found == re.compile(text, flags)
        # The literals are worked out anew, never taken from a damaged file.
        assert reader.leading(found) == leading_literals(text, flags)
    assert reader.status()["from_file"] == 0
    with pytest.raises(re.error):
        reader.compile("(unclosed")


def test_nothing_is_written_without_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    store = patterns.Store(str(tmp_path / "patterns.re"))
    store.compile("a+b")
    store.seal()
    assert not (tmp_path / "patterns.re").exists()
