"""Every example of ``docs/experience.md`` runs: the Python blocks in order in one fresh
interpreter, then the shell blocks against what they made; its YAML example validates."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from skillbook.pipeline.validation.validate import validate_path

DOC = Path(__file__).resolve().parents[2] / "docs" / "experience.md"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
RUNNER = """
import json, sys, traceback
namespace = {"__name__": "__main__"}
for index, source in enumerate(json.load(open(sys.argv[1], encoding="utf-8")), 1):
    try:
        exec(compile(source, f"experience.md python block {index}", "exec"), namespace)
    except BaseException:
        print(f"block {index} failed:\\n{source}", file=sys.stderr)
        traceback.print_exc()
        sys.exit(1)
"""


def blocks(lang: str) -> list[str]:
    return [
        m.group(2) for m in FENCE.finditer(DOC.read_text(encoding="utf-8")) if m.group(1) == lang
    ]


@pytest.mark.subprocess
def test_the_examples_run(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    (tmp_path / "blocks.json").write_text(json.dumps(blocks("python")), encoding="utf-8")
    (tmp_path / "runner.py").write_text(RUNNER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLBOOK_", "OPENCLAW_"))}
    bins = str(Path(sys.executable).parent)
    env.update(HOME=str(home), PATH=f"{bins}{os.pathsep}/usr/bin{os.pathsep}/bin")
    done = subprocess.run(
        [sys.executable, str(tmp_path / "runner.py"), str(tmp_path / "blocks.json")],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "updated draft" in done.stdout and "2 kiwi" in done.stdout
    shell = blocks("sh")
    assert shell
    for script in shell:
        ran = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert ran.returncode == 0, (script, ran.stdout, ran.stderr)
        assert "count-words-top" in ran.stdout


def test_the_frontmatter_example_is_a_strict_skill(tmp_path: Path) -> None:
    # The whole frontmatter; the other yaml block is a part of one (the openclaw gates).
    (yaml,) = [b for b in blocks("yaml") if b.startswith("---")]
    name = re.search(r"^name: (.+)$", yaml, re.M)
    assert name is not None
    folder = tmp_path / name.group(1).strip('"')  # strict: the folder named after it
    folder.mkdir()
    (folder / "SKILL.md").write_text(yaml + "# Body\n", encoding="utf-8")
    result = validate_path(folder, mode="strict")
    assert result.ok, result.diagnostics
