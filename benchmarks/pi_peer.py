"""pi's skill loader as a peer of the catalog benchmark (``@mariozechner/pi-coding-agent``).

Input: a workspace and a repeat count. Output: pi's in-process time of ``loadSkills`` +
``formatSkillsForPrompt`` (``opMs``, one fresh node process per round, its module
import left out as OpenClaw's is) and the wall time of that process. pi does no gating,
so it loads and lists every skill.

The package is installed on first use with ``npm`` into ``<repo>/.cache/pi`` (the npm
registry must be reachable once; ``--no-install`` prevents it), at the version pinned
below so runs stay comparable.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "pi"
PACKAGE = "@mariozechner/pi-coding-agent"
#: The release measured; bump it deliberately (and say so in the README).
VERSION = "0.73.1"
SCRIPT = Path(__file__).with_name("pi_peer.mjs")
INSTALL_TIMEOUT_S = 600.0
RUN_TIMEOUT_S = 900.0


def module_path(root: Path = CACHE) -> Path:
    return root / "node_modules" / "@mariozechner" / "pi-coding-agent" / "dist" / "index.js"


def find_or_install(*, allow_install: bool, root: Path = CACHE) -> Path | str:
    """The package's entry module, or a string saying why there is none."""
    if shutil.which("node") is None:
        return "node is not installed"
    entry = module_path(root)
    if entry.is_file():
        return entry
    if not allow_install:
        return f"pi is not installed in {root} (drop --no-install to install it with npm)"
    if shutil.which("npm") is None:
        return "npm is not installed"
    root.mkdir(parents=True, exist_ok=True)
    if not (root / "package.json").is_file():
        (root / "package.json").write_text(json.dumps({"name": "pi-peer", "private": True}))
    proc = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", f"{PACKAGE}@{VERSION}"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0 or not entry.is_file():
        return f"npm install {PACKAGE}@{VERSION} failed: {proc.stderr.strip()[-300:]}"
    return entry


@dataclass(slots=True)
class PiRun:
    op_s: list[float] = field(default_factory=list)
    wall_s: list[float] = field(default_factory=list)
    skills: int = 0
    prompt_chars: int = 0
    error: str | None = None


def run(entry: Path, workspace: Path, scratch: Path, repeat: int) -> PiRun:
    """``repeat`` fresh node processes, each loading ``<workspace>/skills`` once."""
    out = PiRun()
    scratch.mkdir(parents=True, exist_ok=True)
    request: dict[str, Any] = {
        "module": str(entry),
        "skillPaths": [str(workspace / "skills")],
        "cwd": str(scratch),
        "agentDir": str(scratch / "agent"),
        "repeat": 1,
    }
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(
            ["node", str(SCRIPT)],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
            cwd=scratch,
        )
        wall = time.perf_counter() - t0
        try:
            got = json.loads(proc.stdout)
        except json.JSONDecodeError:
            out.error = f"pi peer failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}"
            return out
        first = got["runs"][0]
        out.op_s.append(float(first["opMs"]) / 1000)
        out.wall_s.append(wall)
        out.skills, out.prompt_chars = int(first["skills"]), int(first["promptChars"])
    return out
