"""The ``skillbook`` executable's entry point (skillbook.cli.entry).

``skillbook --version`` is answered before the command line is imported: the same
text as click's ``--version``, with no click, rich, YAML or msgspec loaded. Every
other invocation goes to the full command line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillbook.cli.app import cli
from skillbook.version import __version__

SRC = Path(__file__).resolve().parents[2] / "src"
PROBE = """
import sys
sys.argv = ["skillbook", *sys.argv[1:]]
from skillbook.cli.entry import main
try:
    main()
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"click", "rich", "yaml", "msgspec"})
print("heavy:", ",".join(heavy))
"""


def _probe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )


@pytest.mark.subprocess
def test_version_is_answered_without_loading_the_command_line() -> None:
    proc = _probe("--version")
    assert proc.returncode == 0, proc.stderr
    version_line, heavy = proc.stdout.splitlines()
    assert version_line == f"skillbook, version {__version__}"
    assert heavy == "heavy: "
    # The same text as click's own --version, which `skillbook -w ws --version` still uses.
    assert CliRunner().invoke(cli, ["--version"]).output == version_line + "\n"


@pytest.mark.subprocess
def test_everything_else_goes_to_the_command_line() -> None:
    proc = _probe("--help")
    assert proc.returncode == 0, proc.stderr
    assert "Usage: skillbook" in proc.stdout
    assert "click" in proc.stdout.splitlines()[-1]


@pytest.mark.subprocess
def test_an_unchanged_prompt_is_answered_without_loading_the_command_line(
    tmp_path: Path,
) -> None:
    from result_world import World

    world = World.make(tmp_path)
    env = {**world.env, "PYTHONPATH": str(SRC)}
    # The first run records; its files were written just now, so the racy window is
    # closed for it (a real user's files are older than two seconds).
    record = "import skillbook.pipeline.cache.footprint as f; f.RACY_NS = -(10**18)\n" + PROBE
    runs = [
        subprocess.run(
            [sys.executable, "-c", script, *world.args()],
            capture_output=True,
            text=True,
            check=False,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )
        for script in (record, PROBE)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr + runs[1].stderr
    first, second = (r.stdout.rsplit("heavy:", 1) for r in runs)
    assert first[0] == second[0] == world.fresh()
    assert "click" in first[1] and second[1].strip() == ""
