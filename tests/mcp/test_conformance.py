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
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cached_tools import CONFORMANCE_DIR, CONFORMANCE_VERSION, conformance_suite, fastmcp_venv
from factories import write_skill

from skillbook.mcp.client import McpServerSpec

pytest.importorskip("mcp")

from test_client_http import HttpServer

pytestmark = pytest.mark.subprocess

REPO = Path(__file__).resolve().parents[2]
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
    found = conformance_suite()
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
    found = fastmcp_venv()
    if isinstance(found, str):
        pytest.skip(found)
    return found


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
