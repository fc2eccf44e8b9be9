"""The reworked prefilter finds exactly what the scanner found before it (issue 22).

``prefilter_baseline.json`` holds the findings of main's scanner (before the rework)
over every skill of the public corpus, the fixture skills, the three evasion sets and
240 seeded keyword-dense files (see ``prefilter_cases.py``); every case must come out
the same, finding for finding (rule, severity, line, column, message, excerpt,
demotion). The property test compares the scanner with its prefilter off: every rule
family and every deobfuscation stage on every file, the way the scanner ran before
the file-level gates.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prefilter_cases import BASELINE, FRAGMENTS, case_folders, scan_cases, write_baseline

from skillbook.security.scanner import INDEX, analyze

UPDATE = os.environ.get("SKILLBOOK_UPDATE_PREFILTER_BASELINE") == "1"


def _baseline() -> dict[str, dict[str, Any]]:
    cases: dict[str, dict[str, Any]] = json.loads(BASELINE.read_text(encoding="utf-8"))["cases"]
    return cases


def _differences(
    current: dict[str, dict[str, Any]], stored: dict[str, dict[str, Any]]
) -> list[str]:
    out = []
    for case in sorted(current):
        if case not in stored:
            out.append(f"{case}: not in the baseline")
        elif current[case] != stored[case]:
            out.append(f"{case}:\n  now    {current[case]}\n  before {stored[case]}")
    return out


def test_fixtures_evasions_and_synthetic_files_match_the_baseline(tmp_path: Path) -> None:
    stored = _baseline()
    current = scan_cases(tmp_path, None)
    assert len(current) >= 400  # 21 fixtures, 169 evasion variants, 240 synthetic files
    differences = _differences(current, stored)
    assert not differences, "\n".join(differences[:10])


def test_the_corpus_matches_the_baseline(tmp_path: Path, corpus_dir: Path) -> None:
    current = scan_cases(tmp_path, corpus_dir)
    if UPDATE:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=False).stdout.strip()  # fmt: skip
        write_baseline(current, head or "unknown")
    stored = _baseline()
    assert sum(case.startswith("corpus/") for case in current) >= 350
    differences = _differences(current, stored)
    assert not differences, "\n".join(differences[:10])
    missing = sorted(set(stored) - set(current))
    assert not missing, f"cases of the baseline not scanned now: {missing[:10]}"


def test_every_case_also_matches_with_the_prefilter_off(tmp_path: Path) -> None:
    """The gates skip only work that finds nothing: the whole path gives the same."""
    for _case, folder, _root in case_folders(tmp_path, None):
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
            data = path.read_bytes()
            if b"\x00" in data[:8192]:
                continue
            text = data.decode("utf-8", "replace")
            assert analyze(text, path.name) == analyze(text, path.name, prefilter=False), path


_KEYWORDS = sorted(INDEX.words)
_PIECE = st.one_of(
    st.sampled_from(_KEYWORDS),
    st.sampled_from(_KEYWORDS).map(str.upper),
    st.sampled_from(FRAGMENTS),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
    st.sampled_from(("|", ";", "&&", "$", "=", "'", '"', "`", "\\", "+", "/", "*", "?", " ")),
)
_LINE = st.lists(_PIECE, min_size=1, max_size=8).map("".join)
_NAME = st.sampled_from(("SKILL.md", "README.md", "run.sh", "tool.py", "index.js", "notes.txt"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_LINE, min_size=1, max_size=10), name=_NAME)
def test_random_keyword_lines_give_the_same_findings_with_and_without_the_prefilter(
    lines: list[str], name: str
) -> None:
    text = "\n".join(lines)
    assert analyze(text, name) == analyze(text, name, prefilter=False)
    assert analyze(text, name, openclaw=True) == analyze(text, name, openclaw=True, prefilter=False)


@pytest.mark.parametrize("word", ["curl", "://", "eval", ".ssh", "display dialog", "ignore"])
def test_a_keyword_on_the_first_line_is_found(word: str) -> None:
    """The automaton sees the text as if a newline preceded it (``\\nnc ``)."""
    occurrences = INDEX.occurrences(f"{word} x\nnc 1.2.3.4 4444")
    assert occurrences[word][0] == 0
    assert occurrences["\nnc "] == [len(word) + 2]


def test_the_lookalike_test_per_character_agrees_with_the_whole_table() -> None:
    """``_is_lookalike`` replaced a set built from the whole confusables table and the
    NFKC compatibility blocks; every character of the first three planes agrees."""
    import unicodedata

    from confusable_homoglyphs import confusables

    from skillbook.security import deobfuscate

    data: Any = confusables.confusables_data
    whole = {ch for ch in data if len(ch) == 1 and not ch.isascii()
             and deobfuscate._latin(ch) is not None}  # fmt: skip
    for first, last in deobfuscate._COMPATIBILITY_RANGES:
        for code in range(first, last + 1):
            folded = unicodedata.normalize("NFKC", chr(code))
            if folded != chr(code) and folded.isascii() and folded.isalnum():
                whole.add(chr(code))
    assert len(whole) > 1000
    disagree = [hex(c) for c in range(0x80, 0x30000)
                if deobfuscate._is_lookalike(chr(c)) != (chr(c) in whole)]  # fmt: skip
    assert disagree == []


def test_every_family_gate_names_a_family_and_only_indexed_words() -> None:
    """A trigger list under a wrong name, or with a word the automaton does not hold,
    would silently turn its gate off; the gates found must be the ones written."""
    from skillbook.security import scanner

    written = {k: v for module in scanner._MODULES for k, v in module.TRIGGERS.items()}
    names = {family.__name__ for family in scanner.FAMILIES}
    assert set(written) <= names
    gated = {family.__name__ for family, gate, _ in scanner._GATES if gate is not None}
    assert gated == set(written)
    assert all({w.lower() for w in words} <= INDEX.words for words in written.values())
