"""OpenClaw's own scanner rules (spec §8.3 step 4), reimplemented: same ids, lines, evidence.

The unit tests pin the behaviour of each rule; the oracle test runs OpenClaw's real
scanner (``scanDirectoryWithSummary`` from its npm package) on every corpus skill
and every malicious fixture and compares its findings with ``openclaw_findings()``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fixture_tree import materialize

from skillbook.security.findings import Severity
from skillbook.security.rules_openclaw import scan_source
from skillbook.security.scanner import scan_path


def _rules(source: str) -> list[tuple[str, int, str]]:
    out = []
    for hit in scan_source(source, rerate=False):
        line = source.count("\n", 0, hit.start) + 1
        out.append((hit.rule, line, str(hit.severity)))
        assert hit.excerpt is not None and hit.excerpt.rstrip("…") in source
    return out


def test_dangerous_exec_needs_child_process_and_reports_first_line_once() -> None:
    src = "const cp = require('child_process');\nfoo();\ncp.exec('a');\ncp.spawn('b');\n"
    assert _rules(src) == [("dangerous-exec", 3, "critical")]
    assert _rules("cp.exec('a');\n") == []


def test_websocket_port_rule_skips_standard_ports() -> None:
    src = 'new WebSocket("wss://a.example:443/x");\nnew WebSocket("ws://b.example:6667/x");\n'
    assert _rules(src) == [("suspicious-network", 2, "medium")]


def test_source_rules_need_their_context_anywhere_in_the_file() -> None:
    assert _rules("const k = process.env.KEY;\n") == []
    src = "const k = process.env.KEY;\n// later\nawait fetch(url);\n"
    assert _rules(src) == [("env-harvesting", 1, "critical")]
    src = "fs.readFileSync(p);\nhttp.request(o);\n"
    assert _rules(src) == [("potential-exfiltration", 1, "medium")]


def test_obfuscation_rules() -> None:
    assert _rules('const s = "\\x41\\x42\\x43\\x44\\x45\\x46";\n') == [
        ("obfuscated-code", 1, "medium")
    ]
    payload = "A" * 200
    assert _rules(f'atob("{payload}")\n') == [("obfuscated-code", 1, "medium")]
    # The literal starts on the next line: only the whole source matches; OpenClaw says line 1.
    assert _rules(f'x = 1;\natob(\n"{payload}")\n') == [("obfuscated-code", 1, "medium")]


def test_evidence_is_trimmed_to_120_characters() -> None:
    line = "  eval(" + "x" * 200 + ")  "
    (hit,) = scan_source(line, rerate=False)
    assert hit.excerpt == line.strip()[:120] + "…"


def test_javascript_word_boundary_is_ascii() -> None:
    # In JavaScript \b is ASCII-only, so "éeval(" still matches; Python's default would not.
    assert _rules("const x = éeval(y);\n") == [("dynamic-code-execution", 1, "critical")]


def test_skillbook_rerates_but_openclaw_findings_keep_openclaws_severity(tmp_path: Path) -> None:
    (tmp_path / "a.js").write_text(
        "const { exec } = require('child_process');\nexec('ls');\nconst k = process.env.A; fetch(u);\n"
    )
    report = scan_path(tmp_path)
    mine = {f.rule: f for f in report.findings if f.ruleset == "openclaw"}
    assert mine["dangerous-exec"].severity is Severity.MEDIUM
    assert mine["dangerous-exec"].demoted_from is Severity.CRITICAL
    assert mine["env-harvesting"].severity is Severity.MEDIUM
    theirs = {f.rule: f.severity for f in report.openclaw_findings()}
    assert theirs == {"dangerous-exec": Severity.CRITICAL, "env-harvesting": Severity.CRITICAL}
    assert report.blocking() == ()


def test_openclaw_file_selection(tmp_path: Path) -> None:
    """Its extensions only, no dot-folders, no node_modules, files up to 1 MiB."""
    for rel in ("a.ts", "b.py", ".hidden/c.js", "lib/d.mjs", "e.JS"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("eval(x)\n")
    (tmp_path / "big.js").write_text("eval(x)\n" + "//" * (1024 * 1024))
    report = scan_path(tmp_path)
    flagged = sorted(f.file.name for f in report.openclaw_findings())
    assert flagged == ["a.ts", "d.mjs", "e.JS"]
    assert report.openclaw_files == 3


# --------------------------------------------------------------------------- oracle

_NODE_SCAN = """
import fs from "node:fs";
const dist = process.argv[1];
const file = fs.readdirSync(dist).find((f) => /^skill-scanner-.*\\.js$/.test(f));
const { t: scan } = await import(`${dist}/${file}`);
const out = [];
for (const dir of JSON.parse(fs.readFileSync(0, "utf8"))) out.push(await scan(dir));
console.log(JSON.stringify(out));
"""


def _openclaw_scan(oracle_root: Path, dirs: list[Path]) -> list[dict[str, Any]]:
    dist = oracle_root / "node_modules" / "openclaw" / "dist"
    proc = subprocess.run(
        ["node", "--input-type=module", "-e", _NODE_SCAN, str(dist)],
        input=json.dumps([str(d) for d in dirs]),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result: list[dict[str, Any]] = json.loads(proc.stdout)
    return result


def _ours(dirs: list[Path]) -> list[list[tuple[str, str, str, int, str]]]:
    out = []
    for d in dirs:
        report = scan_path(d)
        rows = [
            (f.rule, "warn" if f.severity is Severity.MEDIUM else str(f.severity),
             str(f.file), f.line or 0, f.excerpt)
            for f in report.openclaw_findings()
        ]  # fmt: skip
        out.append(sorted(rows))
    return out


@pytest.mark.oracle
def test_same_findings_as_openclaw_on_corpus_and_fixtures(
    oracle: Any, corpus_dir: Path, tmp_path: Path
) -> None:
    fixtures = materialize(tmp_path / "malicious")
    dirs = sorted({p.parent for p in corpus_dir.rglob("SKILL.md")})
    dirs += sorted(p for p in fixtures.iterdir() if p.is_dir())
    theirs = _openclaw_scan(oracle.root, dirs)
    ours = _ours(dirs)
    compared = 0
    for directory, their, mine in zip(dirs, theirs, ours, strict=True):
        expected = sorted(
            (f["ruleId"], f["severity"], f["file"], f["line"], f["evidence"])
            for f in their["findings"]
        )
        assert mine == expected, directory
        compared += len(expected)
    assert compared >= 10, "the comparison covered too few findings to mean anything"
