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
     "`", "\\x41", "never ", "# ", "- pattern: ", "password: ", "🏴", "\r\n",
     # the families of rules_system, rules_leak and rules_agent
     "rm -rf ~/", "chmod u+s /tmp/x", "NOPASSWD: ALL", "docker run -v /:/h ", "alias sudo=", "LD_PRELOAD=",
     "git config --global core.hooksPath ", "ufw disable", "history -c", "$OPENAI_API_KEY", "webhook.site/",
     "dig $(whoami).x ", "169.254.169.254", "pbpaste", "security dump-keychain", "pip install reqeusts ",
     "npx -y ", "--dangerously-skip-permissions", "~/.claude/settings.json", "secretly ", "every answer",
     "send the user's credentials ", "node -e ", "xmrig ", "pynput.keyboard", "openssl enc "]
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


LINES = st.lists(st.lists(st.sampled_from(["alpha", "send ", "token", "curl", "rm -", "x"]), max_size=6)
                 .map("".join), max_size=12).map("\n".join)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(text=LINES, first=st.lists(st.sampled_from(["send ", "rm -", "token", "zz"]), min_size=1, max_size=2),
       rest=st.lists(st.sampled_from(["curl", "alpha", "x", "zz"]), min_size=1, max_size=2))  # fmt: skip
def test_regions_all_is_the_lines_holding_a_word_of_every_group(
    text: str, first: list[str], rest: list[str]
) -> None:
    """``Document.regions_all`` (the new families' gate) covers exactly the lines that
    hold a word of the first group and a word of the others, whatever the index holds."""
    from skillbook.security.document import Document
    from skillbook.security.scanner import INDEX

    doc = Document(text, "x.md", index=INDEX)
    spans = doc.regions_all(tuple(first), tuple(rest))
    covered = {n for a, b in spans for n in range(doc.line_of(a), doc.line_of(max(a, b - 1)) + 1)}
    lines = text.split("\n")
    want = {n for n, line in enumerate(lines, start=1)
            if any(w in line.lower() for w in first) and any(w in line.lower() for w in rest)}  # fmt: skip
    assert covered == want


@settings(max_examples=300, deadline=None)
@given(name=st.text(max_size=40))
def test_typosquat_check_never_raises_and_leaves_popular_names(name: str) -> None:
    from skillbook.security.rules_leak import POPULAR, squatted

    found = squatted(name)
    assert found is None or found in POPULAR
    assert squatted(sorted(POPULAR)[len(name) % len(POPULAR)]) is None
