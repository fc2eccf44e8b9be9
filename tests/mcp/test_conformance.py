"""The Skills extension (SEP-2640) against implementations that are not ours.

- ``@modelcontextprotocol/conformance`` (npm): its SEP-2640 *server* scenarios run
  against ``skillbook serve --transport http``; its *client* scenarios run a scripted
  skillbook host against the suite's mock (tampering) server. Version 0.1.16 (the
  latest non-prerelease) has no SEP-2640 scenario, so :data:`CONFORMANCE_VERSION`
  pins the prerelease that has them. The package wants Node 22 (``fs.globSync``);
  on older Node a loader hook supplies that one function.
- FastMCP (PyPI), an independent Python server of the extension, in its own venv:
  our client loads its skills and verifies them.

Both are installed on first use into ``<repo>/.cache`` (like the oracle, see
``tests/conftest.py``); the tests skip with the reason when that is impossible.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cache_lock import cache_lock
from factories import write_skill

from skillbook.mcp.client import McpServerSpec

pytest.importorskip("mcp")

from test_client_http import HttpServer

pytestmark = pytest.mark.subprocess

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache"
CONFORMANCE_VERSION = "0.2.0-alpha.12"
CONFORMANCE_DIR = CACHE / "conformance"
FASTMCP_VERSION = "4.2.3"
FASTMCP_VENV = CACHE / "fastmcp-venv"
INSTALL_TIMEOUT_S = 900
SCENARIO_TIMEOUT_S = 300
SERVER_SCENARIOS = (
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
    "sep-2640-skills-directory",
)
CLIENT_SCENARIOS = (
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
)

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

# The host under test for client scenarios: the mock server's URL is the last argument.
HOST = """
import os, sys, tempfile
from pathlib import Path
from skillbook.mcp.client import parse_server_specs
from skillbook.mcp.remote_source import RemoteSkillSource

scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
spec = parse_server_specs([{"name": "conformance", "url": sys.argv[-1], "timeout": 30}])[0]
# no-prefetch: the host only builds its catalog (lazy mode); the others load the skill
# and then read a supporting file, which must never happen after a failed check.
lazy = scenario == "sep-2640-client-no-prefetch"
source = RemoteSkillSource(spec, cache_dir=Path(tempfile.mkdtemp()), prefetch=not lazy)
load = source.load()
for d in load.diagnostics:
    print(d.format(), file=sys.stderr)
if lazy:
    sys.exit(0 if load.skills else 1)
skill = next((s for s in load.skills if s.name == "pdf-processing"), None)
if skill is None:
    sys.exit(1)
got = source.fetch(skill, "references/FORMS.md")
print(got, file=sys.stderr)
sys.exit(0 if isinstance(got, Path) else 1)
"""


def _node_major() -> int:
    out = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False)
    try:
        return int(out.stdout.strip().lstrip("v").split(".")[0])
    except ValueError:
        return 0


def _install_conformance() -> Path | str:
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
    with cache_lock("conformance", CACHE):
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


class Suite:
    def __init__(self, entry: Path) -> None:
        self.argv = ["node"]
        if _node_major() < 22:
            self.argv += ["--import", str(CONFORMANCE_DIR / "register.mjs")]
        self.argv.append(str(entry))

    def run(self, args: list[str], out: Path) -> list[dict[str, Any]]:
        proc = subprocess.run(
            [*self.argv, *args, "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=SCENARIO_TIMEOUT_S,
            check=False,
        )
        found = sorted(glob.glob(str(out / "*" / "checks.json")))
        assert found, f"no results: {proc.stdout[-2000:]} {proc.stderr[-2000:]}"
        checks: list[dict[str, Any]] = json.loads(Path(found[-1]).read_text())
        return checks

    def scenarios(self) -> str:
        proc = subprocess.run(
            [*self.argv, "list"], capture_output=True, text=True, timeout=120, check=False
        )
        return proc.stdout


@pytest.fixture(scope="module")
def suite() -> Suite:
    found = _install_conformance()
    if isinstance(found, str):
        pytest.skip(f"MCP conformance suite unavailable: {found}")
    suite = Suite(found)
    listed = suite.scenarios()
    if "sep-2640-skills-enumeration" not in listed:
        pytest.skip(f"conformance {CONFORMANCE_VERSION} has no SEP-2640 scenarios")
    return suite


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpServer]:
    server = HttpServer(tmp_path)
    try:
        server.wait_listening()
        yield server
    finally:
        server.stop()


def failures(checks: list[dict[str, Any]], *, allowed: frozenset[str] = frozenset()) -> list[str]:
    return [
        f"{c['id']}: {c.get('errorMessage') or c['status']}"
        for c in checks
        if c["status"] not in {"SUCCESS", "INFO", *allowed}
    ]


@pytest.mark.parametrize("scenario", SERVER_SCENARIOS)
def test_skillbook_serve_passes_server_scenarios(
    suite: Suite, http_server: HttpServer, tmp_path: Path, scenario: str
) -> None:
    checks = suite.run(
        ["server", "--url", http_server.url, "--scenario", scenario], tmp_path / "results"
    )
    ran = [c for c in checks if c["id"].startswith("sep-2640-")]
    assert ran and failures(checks) == []
    assert not [c["id"] for c in ran if c["status"] == "SKIPPED"]


@pytest.mark.parametrize("scenario", CLIENT_SCENARIOS)
def test_skillbook_host_passes_client_scenarios(
    suite: Suite, tmp_path: Path, scenario: str
) -> None:
    host = tmp_path / "host.py"
    host.write_text(HOST)
    checks = suite.run(
        ["client", "--command", f"{sys.executable} {host}", "--scenario", scenario],
        tmp_path / "results",
    )
    host_checks = [c for c in checks if c["id"].startswith("sep-2640-host-")]
    assert host_checks and failures(host_checks) == []


# --------------------------------------------------------------------------- FastMCP

FASTMCP_SERVER = """
import sys
from fastmcp import FastMCP
from fastmcp.skills.provider import SkillsDirectoryProvider

server = FastMCP("fastmcp-skills")
server.add_provider(SkillsDirectoryProvider(sys.argv[1]))
server.run("stdio", show_banner=False)
"""


@pytest.fixture(scope="module")
def fastmcp_python() -> Path:
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
        pytest.skip("FastMCP is not installed and SKILLBOOK_NO_INSTALL is set")
    # The venv is removed and rebuilt in place: one builder at a time, and a worker that
    # waited finds it built.
    with cache_lock("fastmcp-venv", CACHE):
        if not ready():
            _install_fastmcp(python)
    return python


def _install_fastmcp(python: Path) -> None:
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
            pytest.skip(f"cannot install fastmcp=={FASTMCP_VERSION}: {proc.stderr[-500:]}")


def test_client_against_fastmcp_skills_server(fastmcp_python: Path, tmp_path: Path) -> None:
    from skillbook.mcp.remote_source import RemoteSkillSource

    root = tmp_path / "skills"
    refunds = root / "acme" / "billing" / "refunds"
    (refunds / "examples").mkdir(parents=True)
    skill_md = b"---\nname: refunds\ndescription: Process refunds\nlicense: MIT\n---\n# R\r\n"
    (refunds / "SKILL.md").write_bytes(skill_md)
    (refunds / "examples" / "email.md").write_text("Dear customer,\n")
    write_skill(root / "git-workflow", description="Git conventions", body="body\n")
    script = tmp_path / "fastmcp_server.py"
    script.write_text(FASTMCP_SERVER)
    spec = McpServerSpec(name="fm", command=(str(fastmcp_python), str(script), str(root)))
    source = RemoteSkillSource(spec, cache_dir=tmp_path / "cache")
    load = source.load()
    assert [d.code for d in load.diagnostics if d.code.startswith("mcp.")] == []
    by_name = {s.name: s for s in load.skills}
    assert sorted(by_name) == ["git-workflow", "refunds"]
    assert by_name["refunds"].file_path.read_bytes() == skill_md
    assert by_name["refunds"].base_dir.parts[-4:] == ("skill", "acme", "billing", "refunds")
    email = source.fetch(by_name["refunds"], "examples/email.md")
    assert isinstance(email, Path) and email.read_text() == "Dear customer,\n"
    assert source.load().fetched == 0
