"""The skills shipped in ``skillbook/bundled_skills``: format, gates and helper scripts.

Every bundled skill must load unchanged in OpenClaw, in skillbook, and pass the
Agent Skills reference validator (skills-ref), so each SKILL.md keeps to the six
standard top-level keys and writes ``metadata.openclaw`` in block-style YAML.
The gates are pinned here so that nobody quietly makes one stricter or looser.
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from factories import write_skill

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "src" / "skillbook" / "bundled_skills"
AUTHORING = REPO / "docs" / "authoring.md"

STANDARD_KEYS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
NAME_RULE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
# Relative links to helper files in a body: `scripts/x.sh`, (references/y.md).
HELPER_LINK = re.compile(r"(?<![\w/.-])((?:scripts|references)/[\w.-]+)")
MAX_BODY_LINES = 150
MAX_SKILL_FILE_BYTES = 256_000


@dataclass(frozen=True)
class Gate:
    """What a skill honestly needs, and how many installers it offers."""

    emoji: str
    bins: tuple[str, ...] = ()
    any_bins: tuple[str, ...] = ()
    os: tuple[str, ...] = ()
    installs: int = 0


EXPECTED: dict[str, Gate] = {
    "weather": Gate("☔", bins=("curl",), installs=1),
    "github": Gate("🐙", bins=("gh",), installs=1),
    "git-housekeeping": Gate("🧹", bins=("git",), installs=1),
    "jq": Gate("🧩", bins=("jq",), installs=4),
    "python-project": Gate("🐍", any_bins=("uv", "python3"), installs=1),
    "tmux": Gate("🧵", bins=("tmux",), os=("darwin", "linux"), installs=1),
    "skill-author": Gate("🛠️"),
    "http-api": Gate("🌐", bins=("curl",), installs=1),
}


def _split(text: str) -> tuple[str, str]:
    assert text.startswith("---\n"), "SKILL.md must open with a `---` line"
    end = text.index("\n---", 3)
    return text[4:end], text[end + 4 :].lstrip("-").lstrip("\n")


def _frontmatter(name: str) -> dict[str, Any]:
    block, _ = _split((BUNDLED / name / "SKILL.md").read_text(encoding="utf-8"))
    data = yaml.safe_load(block)
    assert isinstance(data, dict)
    return data


def _skill_dirs() -> list[Path]:
    return sorted(p for p in BUNDLED.iterdir() if p.is_dir() and p.name != "__pycache__")


@pytest.fixture(params=sorted(EXPECTED), ids=str)
def skill(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


# ------------------------------------------------------------------ layout


def test_bundled_folder_holds_exactly_the_expected_skills() -> None:
    assert [p.name for p in _skill_dirs()] == sorted(EXPECTED)
    stray = [p.name for p in BUNDLED.iterdir() if not p.is_dir() or p.name.startswith(".")]
    assert stray == []


def test_skill_file_is_a_regular_small_utf8_file_without_bom(skill: str) -> None:
    """Checklist: symlinked SKILL.md refused; size cap 256 000 bytes; BOM hides frontmatter."""
    path = BUNDLED / skill / "SKILL.md"
    assert path.is_file() and not path.is_symlink()
    raw = path.read_bytes()
    assert len(raw) <= MAX_SKILL_FILE_BYTES
    assert not raw.startswith(b"\xef\xbb\xbf")
    assert b"\r" not in raw
    raw.decode("utf-8")


def test_name_equals_folder_and_follows_the_agent_skills_rule(skill: str) -> None:
    fm = _frontmatter(skill)
    assert fm["name"] == skill
    assert len(skill) <= 64
    assert NAME_RULE.match(skill)


def test_description_says_what_and_when_within_limits(skill: str) -> None:
    description = _frontmatter(skill)["description"]
    assert isinstance(description, str)
    assert 0 < len(description) <= 1024
    assert "Use when" in description or "Use whenever" in description
    assert "<" not in description and ">" not in description


def test_frontmatter_uses_only_standard_keys_and_block_style(skill: str) -> None:
    text = (BUNDLED / skill / "SKILL.md").read_text(encoding="utf-8")
    block, _ = _split(text)
    fm = _frontmatter(skill)
    assert set(fm) <= STANDARD_KEYS
    assert fm["license"] == "MIT"
    assert len(fm.get("compatibility", "")) <= 500
    assert "---" not in block
    # Flow collections are refused by strictyaml (skills-ref).
    for line in block.splitlines():
        value = line.split(": ", 1)[1] if ": " in line else ""
        assert not value.lstrip().startswith(("{", "[")), line
    assert isinstance(fm["metadata"]["openclaw"], dict)


def test_manifest_declares_the_expected_gates(skill: str) -> None:
    manifest = _frontmatter(skill)["metadata"]["openclaw"]
    want = EXPECTED[skill]
    assert manifest["emoji"] == want.emoji
    assert str(manifest["homepage"]).startswith("https://")
    requires = manifest.get("requires", {})
    assert tuple(requires.get("bins", ())) == want.bins
    assert tuple(requires.get("anyBins", ())) == want.any_bins
    assert "env" not in requires and "config" not in requires
    assert tuple(manifest.get("os", ())) == want.os
    assert "always" not in manifest
    installs = manifest.get("install", [])
    assert len(installs) == want.installs
    for spec in installs:
        assert spec["kind"] in {"brew", "node", "go", "uv", "download"}
        assert spec["id"] and spec["label"] and spec["bins"]
        if spec["kind"] == "download":
            assert spec["url"].startswith("https://")
            assert spec["os"], "a download is platform-specific: give it an os"


def test_every_bundled_download_carries_its_sha256(skill: str) -> None:
    """Issue 18 §6: a bundled download is verified before it is unpacked or put in place.
    The checksums are the publisher's own (jq: sig/v1.7.1/sha256sum.txt in jqlang/jq); a
    download whose checksum cannot be known is dropped, never given a made-up one."""
    parse = pytest.importorskip("skillbook.pipeline.parse.skill_file")
    parsed = parse.parse_skill_text((BUNDLED / skill / "SKILL.md").read_bytes())
    assert parsed.metadata is not None
    for spec in parsed.metadata.install or ():
        if spec.kind == "download":
            assert spec.expected_sha256 is not None, f"{skill}: {spec.id} has no sha256"
            assert re.fullmatch(r"[0-9a-f]{64}", spec.expected_sha256), spec.id
    raw = _frontmatter(skill)["metadata"]["openclaw"].get("install", [])
    sums = [s["sha256"] for s in raw if s["kind"] == "download"]
    assert len(set(sums)) == len(sums), "two downloads cannot share one checksum"


def test_body_is_concise_and_its_helper_files_exist(skill: str) -> None:
    _, body = _split((BUNDLED / skill / "SKILL.md").read_text(encoding="utf-8"))
    assert body.startswith("# ")
    assert len(body.splitlines()) <= MAX_BODY_LINES
    for link in set(HELPER_LINK.findall(body)):
        assert (BUNDLED / skill / link).is_file(), f"{skill}: {link} is referenced but missing"


def test_helper_files_are_referenced_and_scripts_are_executable(skill: str) -> None:
    folder = BUNDLED / skill
    body = (folder / "SKILL.md").read_text(encoding="utf-8")
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "SKILL.md"):
        rel = path.relative_to(folder).as_posix()
        assert rel.split("/")[0] in {"scripts", "references"}, rel
        assert rel in body, f"{skill}: {rel} is never mentioned in SKILL.md"
        assert not path.is_symlink()
        if rel.startswith("scripts/"):
            assert os.access(path, os.X_OK), f"{rel} is not executable"
            assert path.read_text(encoding="utf-8").startswith("#!")


@pytest.mark.parametrize(
    "script",
    sorted(p.relative_to(BUNDLED).as_posix() for p in BUNDLED.glob("*/scripts/*.sh")),
)
def test_shell_helpers_parse(script: str) -> None:
    path = BUNDLED / script
    shell = "bash" if "bash" in path.read_text(encoding="utf-8").splitlines()[0] else "sh"
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    proc = subprocess.run([shell, "-n", str(path)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


# ------------------------------------------------------------------ validators


def test_skills_ref_accepts_every_bundled_skill(skill: str) -> None:
    skills_ref = pytest.importorskip("skills_ref")
    assert skills_ref.validate(BUNDLED / skill) == []


def test_skillbook_parser_reads_requires_and_install_without_drops(skill: str) -> None:
    parse = pytest.importorskip("skillbook.pipeline.parse.skill_file")
    parsed = parse.parse_skill_text((BUNDLED / skill / "SKILL.md").read_bytes())
    codes = [d.code for d in parsed.diagnostics]
    assert "parse.install-dropped" not in codes
    assert not any(c.startswith(("parse.yaml", "parse.metadata")) for c in codes), codes
    assert parsed.name == skill
    meta = parsed.metadata
    assert meta is not None
    want = EXPECTED[skill]
    assert meta.emoji == want.emoji
    assert tuple(meta.os or ()) == want.os
    if want.bins or want.any_bins:
        assert meta.requires is not None
        assert meta.requires.bins == want.bins
        assert meta.requires.any_bins == want.any_bins
    else:
        assert meta.requires is None
    assert len(meta.install or ()) == want.installs


def test_skillbook_strict_validation_has_no_errors(skill: str) -> None:
    validate = pytest.importorskip("skillbook.pipeline.validation.validate")
    result = validate.validate_path(BUNDLED / skill, mode="strict")
    assert result.ok, [d.format() for d in result.diagnostics]
    # The one expected note: the standard types metadata values as strings, while
    # OpenClaw needs `metadata.openclaw` (and skillbook `metadata.skillbook`) to be a mapping.
    assert {d.code for d in result.diagnostics} <= {"validate.field-type"}


#: Bundled skills whose slash command runs their own command (metadata.skillbook.commandExec).
COMMAND_EXEC = {"weather": './scripts/forecast.sh "$1"'}


def test_command_exec_is_declared_only_where_expected(skill: str) -> None:
    """skillbook's extension: `/weather Shanghai` runs the helper with no model."""
    from skillbook.model import Skill, Source
    from skillbook.pipeline.commands.dispatch import exec_dispatch, exec_dispatch_diagnostics
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    path = BUNDLED / skill / "SKILL.md"
    parsed = parse_skill_text(path.read_bytes())
    loaded = Skill(skill, parsed.description, path, path.parent, Source.BUNDLED, parsed)
    found = exec_dispatch(loaded)
    assert (found.command if found else None) == COMMAND_EXEC.get(skill)
    assert exec_dispatch_diagnostics(loaded) == ()
    extension = _frontmatter(skill)["metadata"].get("skillbook")
    assert set(extension or {}) <= {"commandExec"}


def _guide_example(tmp_path: Path) -> Path:
    """The cross-client example of docs/authoring.md section 7, as a skill folder."""
    text = AUTHORING.read_text(encoding="utf-8")
    section = text.split("## 7. One file for every client", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    return write_skill(tmp_path / "weather", text=block + "\n# Weather\n\nBody.\n")


def test_authoring_guide_example_passes_skills_ref(tmp_path: Path) -> None:
    skills_ref = pytest.importorskip("skills_ref")
    assert skills_ref.validate(_guide_example(tmp_path)) == []


def test_authoring_guide_example_parses_with_gates(tmp_path: Path) -> None:
    parse = pytest.importorskip("skillbook.pipeline.parse.skill_file")
    parsed = parse.parse_skill_text((_guide_example(tmp_path) / "SKILL.md").read_bytes())
    assert not [d.code for d in parsed.diagnostics if d.code.startswith("parse.")]
    assert parsed.metadata is not None and parsed.metadata.requires is not None
    assert parsed.metadata.requires.bins == ("curl",)
    assert [spec.kind for spec in parsed.metadata.install or ()] == ["brew"]


# ------------------------------------------------------------------ OpenClaw itself


@pytest.mark.oracle
def test_openclaw_reads_the_same_manifest(oracle: Any) -> None:
    """Checklist (frontmatter): multi-line metadata block -> JSON5 -> metadata.openclaw."""
    names = sorted(EXPECTED)
    out = oracle.run(
        [
            {"op": "frontmatter", "file": str(BUNDLED / n / "SKILL.md"), "omitMeta": True}
            for n in names
        ]
    )
    assert out["ok"], out
    for name, res in zip(names, out["results"], strict=True):
        meta = res["result"]["metadata"]
        want = EXPECTED[name]
        raw = _frontmatter(name)["metadata"]["openclaw"]
        assert meta["emoji"] == want.emoji
        assert meta.get("os", []) == list(want.os)
        if want.bins or want.any_bins:
            assert meta["requires"]["bins"] == list(want.bins)
            assert meta["requires"]["anyBins"] == list(want.any_bins)
        # No spec dropped by OpenClaw's parseInstallSpec.
        assert len(meta.get("install", [])) == len(raw.get("install", [])) == want.installs
        assert res["result"]["invocation"] == {
            "userInvocable": True,
            "disableModelInvocation": False,
        }
        parse = pytest.importorskip("skillbook.pipeline.parse.skill_file")
        ours = parse.parse_skill_text((BUNDLED / name / "SKILL.md").read_bytes())
        assert ours.metadata is not None
        assert ours.metadata.to_json() == meta


@pytest.mark.oracle
def test_openclaw_loads_all_bundled_skills_with_honest_status(oracle: Any, tmp_path: Path) -> None:
    out = oracle.run(
        {
            "op": "status",
            "workspace": str(tmp_path),
            "bundledDir": str(BUNDLED),
            "bins": ["curl", "git", "jq", "tmux", "python3"],
            "platform": "linux",
            "omitMeta": True,
        }
    )
    assert out["ok"], out
    assert out["console"] == []
    skills = {s["name"]: s for s in out["result"]["report"]["skills"]}
    assert sorted(skills) == sorted(EXPECTED)
    assert {s["source"] for s in skills.values()} == {"openclaw-bundled"}
    not_ready = sorted(n for n, s in skills.items() if not s["eligible"])
    assert not_ready == ["github"]
    assert skills["github"]["missing"]["bins"] == ["gh"]
    assert skills["github"]["install"], "a missing gh must come with an install option"


# ------------------------------------------------------------------ helper scripts


def _git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return env


def test_prune_merged_is_a_dry_run_unless_asked(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    script = BUNDLED / "git-housekeeping" / "scripts" / "prune-merged.sh"
    env = _git_env(tmp_path)
    repo = tmp_path / "repo"

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    repo.mkdir()
    git("init", "-q", "-b", "main")
    (repo / "a").write_text("a\n")
    git("add", "a")
    git("commit", "-qm", "a")
    git("switch", "-q", "-c", "done")
    (repo / "b").write_text("b\n")
    git("add", "b")
    git("commit", "-qm", "b")
    git("switch", "-q", "main")
    git("merge", "-q", "done")
    git("branch", "wip")
    git("switch", "-q", "-c", "unmerged")
    (repo / "c").write_text("c\n")
    git("add", "c")
    git("commit", "-qm", "c")
    git("switch", "-q", "main")

    def run(*args: str) -> str:
        proc = subprocess.run(
            ["sh", str(script), "--no-fetch", *args],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return proc.stdout

    dry = run()
    assert "would delete (merged):        done" in dry
    assert "would delete (merged):        wip" in dry
    listed = [line.split()[-1] for line in dry.splitlines() if line.startswith("would delete")]
    assert sorted(listed) == ["done", "wip"]
    branches = subprocess.run(
        ["git", "branch", "--format=%(refname:short)"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert sorted(branches) == ["done", "main", "unmerged", "wip"]
    run("--delete")
    branches = subprocess.run(
        ["git", "branch", "--format=%(refname:short)"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert sorted(branches) == ["main", "unmerged"]


class _FlakyApi(http.server.BaseHTTPRequestHandler):
    """429 with Retry-After on the first call, then echo what arrived."""

    calls = 0

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        type(self).calls += 1
        if type(self).calls == 1:
            body, code, extra = b'{"error":"slow down"}', 429, [("Retry-After", "1")]
        else:
            auth = self.headers.get("Authorization", "")
            body, code, extra = f'{{"auth":"{auth}"}}'.encode(), 200, []
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in extra:
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def flaky_api() -> Iterator[str]:
    _FlakyApi.calls = 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FlakyApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/items"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_api_helper_retries_429_and_sends_token_from_env(flaky_api: str) -> None:
    if shutil.which("bash") is None or shutil.which("curl") is None:
        pytest.skip("bash and curl are needed")
    script = BUNDLED / "http-api" / "scripts" / "api.sh"
    env = dict(os.environ, DEMO_TOKEN="s3cret", API_TOKEN_VAR="DEMO_TOKEN")
    proc = subprocess.run(
        ["bash", str(script), "GET", flaky_api],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == '{"auth":"Bearer s3cret"}'
    assert "HTTP 429 (attempt 1/5)" in proc.stderr
    assert "retrying in 1s" in proc.stderr
    assert "s3cret" not in proc.stderr
    assert _FlakyApi.calls == 2


def test_tmux_wait_for_sees_a_marker_and_times_out(tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    script = BUNDLED / "tmux" / "scripts" / "wait-for.sh"
    sock = f"sbtest{os.getpid()}"
    tmux = ["tmux", "-L", sock]
    env = dict(os.environ, TMUX="")
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", "job", "-x", "120", "-y", "20", "-c", str(tmp_path)],
        env=env,
        check=True,
    )
    try:
        subprocess.run(
            [*tmux, "send-keys", "-t", "job", 'sleep 0.3; echo "__DONE_$?__"', "Enter"],
            env=env,
            check=True,
        )
        ok = subprocess.run(
            ["sh", str(script), "-L", sock, "-t", "job", "-p", "__DONE_[0-9]+__", "-T", "10"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert ok.returncode == 0, ok.stderr
        assert ok.stdout.strip() == "__DONE_0__"
        late = subprocess.run(
            ["sh", str(script), "-L", sock, "-t", "job", "-p", "never-printed", "-T", "1"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert late.returncode == 1
        assert "timed out" in late.stderr
        gone = subprocess.run(
            ["sh", str(script), "-L", sock, "-t", "nosuch", "-p", "x"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert gone.returncode == 2
    finally:
        subprocess.run([*tmux, "kill-server"], env=env, check=False, capture_output=True)
