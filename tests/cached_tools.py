"""The tools tests install into ``<repo>/.cache`` on first use: which, where, and how.

The ``clawhub`` and ``skills`` CLIs and the MCP conformance suite come from npm, FastMCP
from PyPI into a venv of its own (OpenClaw's own code, the oracle, is
:mod:`oracle_support`'s). Each function returns the tool's path, or a string saying why
it is unavailable; each installs under :func:`cache_lock.cache_lock` and checks again
once it holds the lock, so xdist workers and checkouts sharing one ``.cache`` never
install at once. Only the standard library: ``install_tools.py`` runs these with any
Python 3.11, before the project's venv exists.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from cache_lock import CACHE, cache_lock

#: The clawhub CLI (npm): the registry's real client.
CLAWHUB_CACHE = CACHE / "clawhub-cli"
CLAWHUB_VERSION = "0.23.3"
#: The ``skills`` CLI (npm), the peer of ``install --for`` (tests/distribution/agents/test_agents_peer.py).
SKILLS_CACHE = CACHE / "skills-cli"
SKILLS_VERSION = "1.6.0"
#: The MCP conformance suite (npm), with the hooks it needs on Node < 22.
CONFORMANCE_VERSION = "0.2.0-alpha.12"
CONFORMANCE_DIR = CACHE / "conformance"
#: FastMCP (PyPI), the peer skills server of tests/mcp/test_conformance.py.
FASTMCP_VERSION = "4.2.3"
FASTMCP_VENV = CACHE / "fastmcp-venv"
INSTALL_TIMEOUT_S = 900


def clawhub_cli() -> Path | str:
    """The clawhub CLI binary, installed into ``.cache/clawhub-cli`` on first use."""
    return npm_cli(CLAWHUB_CACHE, "clawhub", CLAWHUB_VERSION, Path(".bin") / "clawhub")


def skills_cli() -> Path | str:
    """The ``skills`` CLI's entry script (run with node), installed into
    ``.cache/skills-cli`` on first use."""
    return npm_cli(SKILLS_CACHE, "skills", SKILLS_VERSION, Path("skills") / "bin" / "cli.mjs")


def npm_cli(cache: Path, name: str, version: str, entry: Path) -> Path | str:
    """``name@version`` installed from npm into ``cache`` on first use; returns the path of
    ``entry`` under its node_modules, or why it is unavailable."""
    binary = cache / "node_modules" / entry
    package = cache / "node_modules" / name / "package.json"

    def installed() -> bool:
        return package.is_file() and json.loads(package.read_text())["version"] == version

    if installed():
        return binary
    if shutil.which("npm") is None or shutil.which("node") is None:
        return f"node and npm are needed for the {name} CLI"
    # npm installs in place: under the lock, check again (another worker may have
    # installed it meanwhile) and never let two installs write the one folder.
    with cache_lock(cache.name, cache.parent):
        if installed():
            return binary
        return _npm_install(cache, f"{name}@{version}", binary)


def _npm_install(cache: Path, spec: str, binary: Path) -> Path | str:
    cache.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [
            "npm",
            "install",
            "--prefix",
            str(cache),
            "--no-audit",
            "--no-fund",
            "--no-save",
            spec,
        ],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0 or not binary.exists():
        return f"npm install {spec} failed: {proc.stderr[-800:]}"
    return binary


# Node < 22 has no fs.globSync, which the suite imports; give it one (plain paths only).
NODE_HOOKS = {
    "register.mjs": "import { register } from 'node:module';\n"
    "register('./hooks.mjs', import.meta.url);\n",
    "hooks.mjs": "export async function resolve(specifier, context, next) {\n"
    "  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL &&\n"
    "      context.parentURL.includes('/@modelcontextprotocol/conformance/')) {\n"
    "    return { url: new URL('./fs-shim.mjs', import.meta.url).href, shortCircuit: true };\n"
    "  }\n  return next(specifier, context);\n}\n",
    "fs-shim.mjs": "import fs from 'node:fs';\nexport * from 'node:fs';\nexport default fs;\n"
    "export function globSync(pattern) {\n"
    "  if (!/[*?[\\]{}]/.test(String(pattern))) return fs.existsSync(pattern) ? [String(pattern)] : [];\n"
    "  throw new Error('globSync needs Node.js 22');\n}\n",
}


def conformance_suite() -> Path | str:
    entry = CONFORMANCE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance"
    manifest = entry / "package.json"

    def installed() -> bool:
        return manifest.is_file() and json.loads(manifest.read_text())["version"] == (
            CONFORMANCE_VERSION
        )

    if installed():
        return entry / "dist" / "index.js"
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node/npm are not installed"
    # Under the lock, check again: another xdist worker or checkout may have installed it
    # (its install renames a temporary folder over CONFORMANCE_DIR).
    with cache_lock("conformance"):
        return entry / "dist" / "index.js" if installed() else _npm_conformance(entry)


def _npm_conformance(entry: Path) -> Path | str:
    tmp = CONFORMANCE_DIR.with_name("conformance.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (tmp / "package.json").write_text('{"name": "skillbook-conformance", "private": true}')
    proc = subprocess.run(
        [
            "npm",
            "install",
            "--no-audit",
            "--no-fund",
            f"@modelcontextprotocol/conformance@{CONFORMANCE_VERSION}",
        ],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        return f"npm install of the conformance suite failed: {proc.stderr[-500:]}"
    for name, text in NODE_HOOKS.items():
        (tmp / name).write_text(text)
    shutil.rmtree(CONFORMANCE_DIR, ignore_errors=True)
    tmp.rename(CONFORMANCE_DIR)
    return entry / "dist" / "index.js"


def fastmcp_venv() -> Path | str:
    """The Python of a venv with FastMCP, built into ``.cache`` on first use; or why not."""
    python = FASTMCP_VENV / "bin" / "python"
    probe = [
        str(python),
        "-c",
        f"import fastmcp; assert fastmcp.__version__ == '{FASTMCP_VERSION}'",
    ]

    def ready() -> bool:
        return (
            python.exists()
            and subprocess.run(probe, capture_output=True, check=False).returncode == 0
        )

    if ready():
        return python
    if os.environ.get("SKILLBOOK_NO_INSTALL"):
        return "FastMCP is not installed and SKILLBOOK_NO_INSTALL is set"
    # The venv is removed and rebuilt in place: one builder at a time, and a worker that
    # waited finds it built.
    with cache_lock("fastmcp-venv"):
        return python if ready() else _install_fastmcp(python)


def _install_fastmcp(python: Path) -> Path | str:
    shutil.rmtree(FASTMCP_VENV, ignore_errors=True)
    steps = [
        [sys.executable, "-m", "venv", str(FASTMCP_VENV)],
        [str(python), "-m", "pip", "install", "-q", f"fastmcp=={FASTMCP_VERSION}"],
    ]
    for step in steps:
        proc = subprocess.run(
            step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
        )
        if proc.returncode != 0:
            shutil.rmtree(FASTMCP_VENV, ignore_errors=True)
            return f"cannot install fastmcp=={FASTMCP_VERSION}: {proc.stderr[-500:]}"
    return python
