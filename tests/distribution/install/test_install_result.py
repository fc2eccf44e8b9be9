"""§8.3 step 14: the one-line failure summary (formatInstallFailureMessage)."""

from __future__ import annotations

import json
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillbook.distribution.install.result import (
    InstallResult,
    format_install_failure_message,
    summarize_install_output,
)


def test_no_output() -> None:
    assert format_install_failure_message(3, "", " \n ") == "Install failed (exit 3)"
    assert format_install_failure_message(None, "", "") == "Install failed (unknown exit)"


def test_error_prefix_wins_over_later_matches() -> None:
    text = "step failed\nERROR: disk full\nerror: second\n"
    assert summarize_install_output(text) == "ERROR: disk full"


def test_word_bounded_markers_as_javascript_reads_them() -> None:
    # `\b` after "err!" or "error:" needs a word character next (JavaScript's regex).
    assert summarize_install_output("npm ERR! code E404\nlast") == "last"
    assert summarize_install_output("npm ERR!code\nlast") == "npm ERR!code"
    assert summarize_install_output("a\nthe build failed here\nz") == "the build failed here"
    assert summarize_install_output("x\nnot unfailed\ny") == "y"


def test_whitespace_collapsed_and_long_lines_cut_in_utf16_units() -> None:
    assert summarize_install_output("  boom \t  now  ") == "boom now"
    long = "x" * 250
    assert summarize_install_output(long) == "x" * 199 + "…"
    astral = "😀" * 150  # 300 UTF-16 code units
    cut = summarize_install_output(astral)
    assert cut is not None and cut == "😀" * 99 + "\ud83d…"


def test_stderr_first_then_stdout() -> None:
    assert format_install_failure_message(1, "from stdout", "") == (
        "Install failed (exit 1): from stdout"
    )
    assert format_install_failure_message(1, "from stdout", "from stderr") == (
        "Install failed (exit 1): from stderr"
    )


def test_result_json_shape() -> None:
    ok = InstallResult(ok=True, message="Installed", code=0)
    assert ok.to_json() == {
        "ok": True,
        "message": "Installed",
        "stdout": "",
        "stderr": "",
        "code": 0,
    }
    bad = InstallResult.failure("install.command-failed", "m", stderr=" e \n").with_warnings(["w"])
    assert bad.to_json() == {
        "ok": False,
        "message": "m",
        "stdout": "",
        "stderr": "e",
        "code": None,
        "warnings": ["w"],
        "reason": "install.command-failed",
    }


_NODE = """
const lines = JSON.parse(require('fs').readFileSync(0, 'utf8'));
console.log(JSON.stringify(lines.map(l => [/^error\\b/i.test(l), /\\b(err!|error:|failed)\\b/i.test(l)])));
"""


@pytest.mark.oracle
@settings(max_examples=1, deadline=None)
@given(
    st.lists(
        st.text(alphabet="errorERR!:faild é_9-\u00e9\u0130x", min_size=0, max_size=20),
        min_size=200,
        max_size=200,
    )
)
def test_marker_regexes_agree_with_javascript(lines: list[str]) -> None:
    import re
    import shutil

    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    lines += ["npm ERR! x", "ERR!a", "éerror: x", "error_x", "Error", "failed:", "xfailed"]
    out = subprocess.run(
        ["node", "-e", _NODE], input=json.dumps(lines), capture_output=True, text=True, check=True
    ).stdout
    first = re.compile(r"^error\b", re.I | re.A)
    anyw = re.compile(r"\b(err!|error:|failed)\b", re.I | re.A)
    ours = [[bool(first.search(x)), bool(anyw.search(x))] for x in lines]
    assert ours == json.loads(out)
