"""The real clients against ``skillbook registry serve``: the clawhub CLI 0.23.3 from npm
and OpenClaw's own ClawHub install code (2026.4.12 and 2026.9.6, from the oracle)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from cached_tools import clawhub_cli
from oracle_support import Oracle

from .helpers import CRITICAL_LINE, make_skill
from .processes import Process, serve_registry, skillbook, unavailable

pytestmark = pytest.mark.subprocess

SCRIPT = Path(__file__).with_name("openclaw_clawhub.mjs")


@dataclass
class Registry:
    url: str
    env: dict[str, str]
    root: Path

    def token(self, handle: str) -> str:
        return skillbook("registry", "token", "create", handle, env=self.env).stdout.strip()

    def publish(self, folder: Path, token: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**self.env, "SKILLBOOK_REGISTRY_TOKEN": token}
        return skillbook(
            "publish", str(folder), "--registry", self.url, *args, env=env, check=False
        )

    def get(self, path: str, **params: str) -> httpx.Response:
        return httpx.get(self.url + path, params=params, timeout=30)


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    root = tmp_path_factory.mktemp("registry")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLBOOK_", "CLAWHUB_"))}
    env.update(SKILLBOOK_STATE_DIR=str(root / "state"), HOME=str(root / "home"))
    proc: Process
    proc, url = serve_registry(root, env, "--search", "bm25")
    yield Registry(url, env, root)
    proc.stop()


def _clawhub(binary: Path, registry: Registry, home: Path, *args: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "CLAWHUB_REGISTRY": registry.url,
        "CLAWHUB_DISABLE_TELEMETRY": "1",
        "LANG": "en_US.UTF-8",
    }
    proc = subprocess.run(
        [str(binary), *args, "--no-input"],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, f"clawhub {args}: {proc.stdout}{proc.stderr}"
    return proc.stdout + proc.stderr


def test_clawhub_cli_publishes_searches_installs_and_updates(
    registry: Registry, tmp_path: Path
) -> None:
    found = clawhub_cli()
    if isinstance(found, str):
        unavailable(found)
    home = tmp_path / "home"
    home.mkdir()
    token = registry.token("carol")
    assert "Logged in as @carol" in _clawhub(found, registry, home, "login", "--token", token)
    folder = make_skill(
        tmp_path / "cli-demo",
        "cli-demo",
        "A demo skill for the CLI test.",
        extra={"references/a.md": "first\n", "_meta.json": "{}"},
    )
    out = _clawhub(found, registry, home, "publish", str(folder))
    assert "Published cli-demo@1.0.0" in out
    assert "already published" in _clawhub(found, registry, home, "publish", str(folder))
    assert "cli-demo v1.0.0" in _clawhub(found, registry, home, "search", "demo skill")
    _clawhub(found, registry, home, "install", "cli-demo")
    installed = home / "skills" / "cli-demo"
    assert sorted(
        p.relative_to(installed).as_posix() for p in installed.rglob("*") if p.is_file()
    ) == [".clawhub/origin.json", "SKILL.md", "_meta.json", "references/a.md"]
    origin = json.loads((installed / ".clawhub" / "origin.json").read_text())
    served = registry.get("/api/v1/skills/cli-demo/versions/1.0.0").json()["version"]
    # The fingerprint the CLI computed on disk is the one the server computed at publish.
    assert origin["fingerprint"] == served["fingerprint"]
    assert origin["ownerHandle"] == "carol" and origin["registry"] == registry.url
    assert "up to date" in _clawhub(found, registry, home, "update", "cli-demo")
    (folder / "references" / "a.md").write_text("second\n")
    published = registry.publish(folder, token, "--changelog", "second")
    assert published.returncode == 0, published.stderr
    assert "Updated cli-demo -> v1.0.1" in _clawhub(found, registry, home, "update", "cli-demo")
    assert (installed / "references" / "a.md").read_text() == "second\n"
    lock = json.loads((home / ".clawhub" / "lock.json").read_text())
    assert lock["skills"]["cli-demo"]["version"] == "1.0.1"
    inspect = _clawhub(found, registry, home, "inspect", "cli-demo", "--versions", "--files")
    assert "references/a.md" in inspect and "1.0.0" in inspect and "second" in inspect
    # A scan hold is "pending security scans" for the CLI, and the install keeps 1.0.1.
    make_skill(folder, "cli-demo", "A demo skill for the CLI test.", body=CRITICAL_LINE)
    pending = _clawhub(found, registry, home, "publish", str(folder), "--version", "2.0.0")
    assert "pending" in pending.lower()
    assert "up to date" in _clawhub(found, registry, home, "update", "cli-demo")


def _openclaw(
    oracle: Oracle,
    version: str,
    registry: Registry,
    workspace: Path,
    op: str,
    slug: str,
    **more: object,
) -> dict[str, object]:
    base = oracle.root / "latest" if version == "latest" else oracle.root
    dist = base / "node_modules" / "openclaw" / "dist"
    home = workspace.parent / "oc-home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "OPENCLAW_STATE_DIR": str(home / "state"),
        "TMPDIR": str(home),
        "LANG": "en_US.UTF-8",
        "TZ": "UTC",
        "NO_COLOR": "1",
    }
    request = {
        "dist": str(dist),
        "op": op,
        "workspaceDir": str(workspace),
        "slug": slug,
        "baseUrl": registry.url,
        **more,
    }
    proc = subprocess.run(
        ["node", str(SCRIPT)],
        input=json.dumps(request),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    answer: dict[str, object] = json.loads(proc.stdout)
    assert answer["ok"], answer
    return answer


@pytest.mark.parametrize("release", ["baseline", "latest"])
def test_openclaw_installs_and_updates_with_its_own_code(
    registry: Registry, tmp_path: Path, release: str, request: pytest.FixtureRequest
) -> None:
    oracle: Oracle = request.getfixturevalue("oracle" if release == "baseline" else "latest_oracle")
    slug = f"oc-{release}"
    token = registry.token(f"team-{release}")
    folder = make_skill(
        tmp_path / slug,
        slug,
        f"Installed by OpenClaw {release}.",
        extra={"scripts/run.sh": "echo hi\n"},
    )
    assert registry.publish(folder, token).returncode == 0
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    first = _openclaw(oracle, release, registry, workspace, "install", slug)
    result = first["result"]
    assert isinstance(result, dict) and result["ok"] is True and result["version"] == "1.0.0"
    target = workspace / "skills" / slug
    assert (target / "scripts" / "run.sh").read_text() == "echo hi\n"
    origin = json.loads((target / ".clawhub" / "origin.json").read_text())
    assert (origin["registry"], origin["installedVersion"]) == (registry.url, "1.0.0")
    logs = json.dumps(first["logs"])
    if release == "latest":
        # 2026.9.6 asked for the security verdict and printed the registry's audit.
        assert "Outcome: Safe" in logs and "skillbook scanner" in logs
    (folder / "scripts" / "run.sh").write_text("echo v2\n")
    assert registry.publish(folder, token).returncode == 0
    if release == "baseline":
        updated = _openclaw(oracle, release, registry, workspace, "update", slug)
        results = updated["result"]
        assert isinstance(results, list) and results[0]["ok"] is True
        assert (results[0]["previousVersion"], results[0]["version"]) == ("1.0.0", "1.0.1")
    else:
        # 2026.9's updateSkillsFromClawHub takes a lifecycle lease in its SQLite state,
        # which needs node:sqlite (Node >= 22; this machine has Node 20). Its update is a
        # forced reinstall through the same /install, verdict and download calls.
        again = _openclaw(oracle, release, registry, workspace, "install", slug, force=True)
        result = again["result"]
        assert isinstance(result, dict) and result["version"] == "1.0.1"
    assert (target / "scripts" / "run.sh").read_text() == "echo v2\n"


def test_openclaw_2026_9_search_keeps_the_registrys_rows(
    registry: Registry, tmp_path: Path, latest_oracle: Oracle
) -> None:
    """2026.9.6 drops a search row without ``source: "clawhub"`` and an owner; ours stay."""
    token = registry.token("finders")
    folder = make_skill(
        tmp_path / "tide-tables", "tide-tables", "Predict tide tables for a harbour."
    )
    assert registry.publish(folder, token).returncode == 0
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for query in ("tide tables harbour", ""):  # a query, and none (the trending route)
        answer = _openclaw(latest_oracle, "latest", registry, workspace, "search", "", query=query)
        rows = {r["slug"]: r for r in answer["result"]}  # type: ignore[attr-defined]
        assert rows["tide-tables"]["installRef"] == "@finders/tide-tables", (query, rows)
        assert rows["tide-tables"]["registry"] == registry.url


def test_openclaw_2026_9_warns_about_a_released_critical_version(
    registry: Registry, tmp_path: Path, latest_oracle: Oracle
) -> None:
    token = registry.token("team-warn")
    folder = make_skill(tmp_path / "risky", "risky", "Runs an installer.", body=CRITICAL_LINE)
    assert registry.publish(folder, token).returncode == 1  # held
    skillbook(
        "registry", "release", "risky", "1.0.0", "--reason", "known installer", env=registry.env
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    answer = _openclaw(latest_oracle, "latest", registry, workspace, "install", "risky")
    logs = "\n".join(text for _, text in answer["logs"])  # type: ignore[attr-defined]
    assert "Outcome: Review" in logs and "Released despite critical" in logs, logs
    assert (workspace / "skills" / "risky" / "SKILL.md").is_file()


def test_skillbook_installs_updates_and_verifies_from_the_registry(
    registry: Registry, tmp_path: Path
) -> None:
    token = registry.token("team-sb")
    folder = make_skill(
        tmp_path / "sb-demo",
        "sb-demo",
        "Installed by skillbook itself.",
        extra={"references/a.md": "one\n"},
    )
    assert registry.publish(folder, token).returncode == 0
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {**registry.env, "CLAWHUB_URL": registry.url, "SKILLBOOK_STATE_DIR": str(tmp_path / "st")}

    def sb(*args: str) -> subprocess.CompletedProcess[str]:
        return skillbook("-w", str(workspace), *args, env=env, check=False)

    assert sb("search", "installed by skillbook").stdout.startswith("sb-demo v1.0.0")
    installed = sb("install", "sb-demo")
    assert installed.returncode == 0, installed.stderr
    origin = json.loads((workspace / "skills" / "sb-demo" / ".clawhub" / "origin.json").read_text())
    served = registry.get("/api/v1/skills/sb-demo/versions/1.0.0").json()["version"]
    assert origin["fingerprint"] == served["fingerprint"]
    assert "unchanged" in sb("verify").stdout
    (folder / "references" / "a.md").write_text("two\n")
    assert registry.publish(folder, token).returncode == 0
    updated = sb("update", "sb-demo")
    assert updated.returncode == 0 and "1.0.0 -> 1.0.1" in updated.stdout
    (workspace / "skills" / "sb-demo" / "references" / "a.md").write_text("mine\n")
    drift = sb("verify")
    assert drift.returncode == 1 and "modified" in drift.stdout
    refused = sb("update", "sb-demo")
    assert refused.returncode == 1 and "local changes" in refused.stderr
