"""The scanner never raises on hostile input: arbitrary text, bytes and file names."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillbook.security.findings import Severity
from skillbook.security.mask import EXCERPT_MAX, excerpt
from skillbook.security.scanner import analyze, scan_path

NAMES = st.sampled_from(
    ["SKILL.md", "x.md", "x.sh", "x.py", "x.js", "x.ts", "x.ps1", "x.yaml", "x"]
)
#: Text biased towards what the rules look for, so matches (not only misses) are exercised.
FRAGMENTS = st.sampled_from(
    ["curl ", "wget ", "| sh", "| bash -s", "base64 -d", "http://203.0.113.7/", "```", "\n", "<!--",
     "-->", "ignore previous instructions", "do not tell the user", "~/.ssh/id_rsa", "env |",
     "os.environ", "requests.post(", "\u200b", "\u202e", "\U000e0041", "---\nname: ", "crontab -",
     "xattr -d com.apple.quarantine", "/dev/tcp/", "eval(", "child_process", "process.env", "'", '"',
     "`", "\\x41", "never ", "# ", "- pattern: ", "password: ", "🏴", "\r\n"]
)  # fmt: skip
HOSTILE_TEXT = st.lists(st.one_of(FRAGMENTS, st.text(max_size=20)), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(), HOSTILE_TEXT), name=NAMES)
def test_analyze_never_raises(text: str, name: str) -> None:
    lines = text.count("\n") + 1
    for finding in analyze(text, name, openclaw=name.endswith((".js", ".ts"))):
        assert finding.line is not None and 1 <= finding.line <= lines
        assert isinstance(finding.severity, Severity)
        assert len(finding.excerpt) <= EXCERPT_MAX * 12  # invisible chars expand to <U+XXXX>


@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(
        st.text(),
        HOSTILE_TEXT,
        st.lists(
            st.sampled_from(
                [
                    "cu",
                    "''",
                    '"',
                    "rl",
                    "\\",
                    "c",
                    "$a",
                    "${IFS}",
                    "a=",
                    "=cu",
                    "; ",
                    "$'\\x63",
                    "\\x75",
                    "с",
                    "ｃ",
                    " + ",
                    "'x'",
                    "\n",
                    "eval ",
                    "sh -c ",
                ]
            ),
            max_size=30,
        ).map("".join),
    )
)
def test_deobfuscated_view_keeps_every_line(text: str) -> None:
    from skillbook.security.deobfuscate import view

    undone = view(text)
    assert undone.text.count("\n") == text.count("\n")
    assert all(1 <= t.line <= text.count("\n") + 1 for t in undone.tricks)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_excerpt_never_raises(text: str) -> None:
    excerpt(text, column=len(text) // 2)


FILE_NAMES = st.text(
    alphabet=st.characters(blacklist_characters="/\x00", blacklist_categories=["Cs"]),
    min_size=1,
    max_size=40,
).filter(lambda n: n not in (".", "..") and len(n.encode("utf-8")) < 200)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.dictionaries(FILE_NAMES, st.binary(max_size=2048), max_size=6),
    skill_md=st.binary(max_size=512),
)
def test_scan_path_never_raises_on_arbitrary_bytes_and_names(
    files: dict[str, bytes], skill_md: bytes
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "skill"
        root.mkdir()
        (root / "SKILL.md").write_bytes(skill_md)
        for name, data in files.items():
            if name == "SKILL.md":
                continue
            (root / name).write_bytes(data)
        report = scan_path(root)
        assert report.files_scanned + report.files_skipped == len({*files, "SKILL.md"})
        for finding in report.findings:
            assert finding.file.is_relative_to(root)
