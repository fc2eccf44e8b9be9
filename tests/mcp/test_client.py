"""skillbook's MCP client: skills from remote MCP servers as the lowest-precedence source.

Real ``mcp`` SDK on both sides, over stdio: a small data-driven extension server
written with the SDK (it can lie about digests, sizes, frontmatter, or leave the
extension out) and ``python -m skillbook serve``. Spec references are to
``shared/spec/mcp-skills.md`` (§4.4 verification, §4.6 caches, §9 client checklist).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from factories import skill_text, write_skill

from skillbook.errors import ConfigError
from skillbook.mcp._entries import SkillEntry, frontmatter_problem, parse_entry, uri_segments
from skillbook.mcp.client import McpServerSpec, parse_server_specs
from skillbook.mcp.remote_catalog import (
    add_remote_skills,
    fetch_remote_file,
    load_all,
    load_remote_skills,
    merge_remote,
)
from skillbook.mcp.remote_source import RemoteSkillSource
from skillbook.model import Source

pytestmark = pytest.mark.subprocess

pytest.importorskip("mcp")

FAKE_SERVER = r"""
import base64, json, sys
from mcp_types import INVALID_PARAMS, PaginatedRequestParams, RequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from mcp.server.extension import Extension, MethodBinding, ResourceBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import BinaryResource, TextResource
from mcp.shared.exceptions import MCPError

with open(sys.argv[1], encoding="utf-8") as fh:
    CONF = json.load(fh)


class GetParams(RequestParams):
    uri: str


def cacheable(ctx, out):
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        out.update(ttlMs=0, cacheScope="private")
    return out


class Skills(Extension):
    identifier = "io.modelcontextprotocol/skills"

    def settings(self):
        return {}

    def resources(self):
        out = []
        for uri, f in CONF["files"].items():
            name = uri.rsplit("/", 1)[1]
            if "repeat" in f:  # a liar's answer: far more than the manifest declares
                f = {"text": f["repeat"] * f["times"]}
            if "text" in f:
                res = TextResource(uri=uri, name=name, mime_type="text/markdown", text=f["text"])
            else:
                res = BinaryResource(uri=uri, name=name, mime_type="application/octet-stream",
                                     data=base64.b64decode(f["b64"]))
            out.append(ResourceBinding(res))
        return out

    def methods(self):
        return [MethodBinding("skills/list", PaginatedRequestParams, self.list_skills),
                MethodBinding("skills/get", GetParams, self.get_skill)]

    async def list_skills(self, ctx, params):
        start, size = int(params.cursor or 0), CONF.get("page", 50)
        entries = CONF["entries"]
        out = {"skills": entries[start:start + size]}
        if start + size < len(entries):
            out["nextCursor"] = str(start + size)
        return cacheable(ctx, out)

    async def get_skill(self, ctx, params):
        for entry in CONF["entries"]:
            if isinstance(entry, dict) and entry.get("uri") == params.uri:
                return cacheable(ctx, {"skill": entry})
        raise MCPError(code=INVALID_PARAMS, message=f"No skill is served at {params.uri}")


async def log_reads(ctx, call_next):
    if ctx.method == "resources/read":
        with open(CONF["log"], "a", encoding="utf-8") as fh:
            fh.write((ctx.params or {}).get("uri", "?") + "\n")
    return await call_next(ctx)


SERVER = MCPServer("fake-skills", extensions=[Skills()] if CONF.get("extension", True) else [],
                   middleware=[log_reads])
if CONF.get("port"):
    SERVER.run("streamable-http", host="127.0.0.1", port=CONF["port"])
else:
    SERVER.run("stdio")
"""

REFUNDS_MD = (
    "---\nname: refunds\ndescription: Process customer refunds per policy\nlicense: MIT\n"
    'metadata: {"version": "1.2", "openclaw": {"requires": {"bins": ["sh"]}, '
    '"install": [{"kind": "brew", "formula": "jq"}]}}\n---\n'
    "# Refunds\r\n\r\nSee examples/email.md.\n"
)
REFUNDS_FM: dict[str, Any] = {
    "name": "refunds",
    "description": "Process customer refunds per policy",
    "license": "MIT",
    "metadata": {
        "version": "1.2",
        "openclaw": {"requires": {"bins": ["sh"]}, "install": [{"kind": "brew", "formula": "jq"}]},
    },
}
EMAIL_MD = "Dear customer,\n"
LOGO = b"\x89PNG\r\n\x1a\n\xff\xfe\x00"
GIT_MD = skill_text("git-workflow", "Team git conventions", body="Use feature branches.\n")


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def item(uri: str, data: bytes) -> dict[str, Any]:
    return {"uri": uri, "digest": digest(data), "size": len(data)}


def honest_catalog() -> dict[str, Any]:
    base = "skill://acme/billing/refunds"
    files = {
        f"{base}/SKILL.md": REFUNDS_MD.encode(),
        f"{base}/examples/email.md": EMAIL_MD.encode(),
        f"{base}/assets/logo.png": LOGO,
        "skill://git-workflow/SKILL.md": GIT_MD.encode(),
    }
    entries = [
        {
            "uri": f"{base}/SKILL.md",
            "frontmatter": REFUNDS_FM,
            "resources": [item(u, d) for u, d in files.items() if u.startswith(base)],
        },
        {
            "uri": "skill://git-workflow/SKILL.md",
            "frontmatter": {"name": "git-workflow", "description": "Team git conventions"},
            "resources": [item("skill://git-workflow/SKILL.md", GIT_MD.encode())],
        },
    ]
    wire = {
        u: ({"b64": base64.b64encode(d).decode()} if u.endswith(".png") else {"text": d.decode()})
        for u, d in files.items()
    }
    return {"entries": entries, "files": wire, "page": 1}


class FakeServer:
    """A spec for the SDK test server above, serving ``catalog``; ``reads()`` = read log."""

    def __init__(self, tmp: Path, catalog: dict[str, Any], *, name: str = "fake") -> None:
        tmp.mkdir(parents=True, exist_ok=True)
        self.script = tmp / "fake_server.py"
        self.script.write_text(FAKE_SERVER, encoding="utf-8")
        self.log = tmp / f"{name}-reads.log"
        self.log.write_text("")
        self.conf = tmp / f"{name}-conf.json"
        self.conf.write_text(json.dumps({**catalog, "log": str(self.log)}), encoding="utf-8")
        self.spec = McpServerSpec(
            name=name, command=(sys.executable, str(self.script), str(self.conf))
        )

    def reads(self) -> list[str]:
        return self.log.read_text().splitlines()


def codes(diags: Any) -> list[str]:
    return [d.code for d in diags]


# --------------------------------------------------------------------------- pure parts


def test_parse_server_specs_stdio_and_http() -> None:
    specs = parse_server_specs(
        [
            {"name": "acme", "command": ["python", "-m", "x"], "env": {"A": "1"}},
            {"name": "docs.v2", "url": "http://127.0.0.1:8123/mcp", "timeout": 5},
        ]
    )
    assert specs[0].transport == "stdio" and specs[0].command == ("python", "-m", "x")
    assert specs[0].env == {"A": "1"} and specs[0].origin == "acme (python -m x)"
    assert specs[1].transport == "http" and specs[1].timeout_s == 5.0
    assert specs[1].origin == "docs.v2 (http://127.0.0.1:8123/mcp)"
    assert specs[0].key.startswith("acme-") and specs[0].key != specs[1].key


@pytest.mark.parametrize(
    ("raw", "key_path"),
    [
        ({"name": "a"}, "skills.mcp.servers[0]"),
        ({"name": "a", "command": ["x"], "url": "http://h/mcp"}, "skills.mcp.servers[0]"),
        ({"name": "../x", "command": ["x"]}, "skills.mcp.servers[0].name"),
        ({"name": "a", "command": "python -m x"}, "skills.mcp.servers[0].command"),
        ({"name": "a", "url": "file:///etc/passwd"}, "skills.mcp.servers[0].url"),
        ({"name": "a", "command": ["x"], "env": {"A": 1}}, "skills.mcp.servers[0].env.A"),
        ({"name": "a", "command": ["x"], "bogus": 1}, "skills.mcp.servers[0].bogus"),
        ({"name": "a", "url": "http://h/mcp", "timeout": 0}, "skills.mcp.servers[0].timeout"),
    ],
)
def test_parse_server_spec_rejects(raw: dict[str, Any], key_path: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_server_specs([raw])
    assert err.value.key_path == key_path


def test_duplicate_labels_are_rejected() -> None:
    with pytest.raises(ConfigError, match="used twice"):
        parse_server_specs([{"name": "a", "command": ["x"]}, {"name": "a", "url": "http://h/"}])


def test_parse_entry_accepts_the_spec_example_and_rejects_broken_entries() -> None:
    """§9 client: invalid entries (missing/invalid resources) are never loaded."""
    good = honest_catalog()["entries"][0]
    entry = parse_entry(good)
    assert isinstance(entry, SkillEntry)
    assert entry.name == "refunds" and entry.segments[:2] == ("skill", "acme")
    assert entry.rel_parts("skill://acme/billing/refunds/examples/email.md") == (
        "examples",
        "email.md",
    )
    broken = {
        "no resources": {k: v for k, v in good.items() if k != "resources"},
        "resources null": {**good, "resources": None},
        "name differs": {**good, "frontmatter": {**REFUNDS_FM, "name": "chargebacks"}},
        "bad digest": {**good, "resources": [{**good["resources"][0], "digest": "md5:00"}]},
        "no own entry": {**good, "resources": good["resources"][1:]},
        "outside": {**good, "resources": [*good["resources"], item("skill://other/x.md", b"")]},
        "dotdot": {
            **good,
            "resources": [*good["resources"], item("skill://acme/billing/refunds/../x", b"")],
        },
        "duplicate": {**good, "resources": [*good["resources"], good["resources"][0]]},
        "negative size": {**good, "resources": [{**good["resources"][0], "size": -1}]},
    }
    for why, raw in broken.items():
        assert isinstance(parse_entry(raw), str), why
    dynamic = parse_entry({**good, "resources": "dynamic"})
    assert isinstance(dynamic, SkillEntry) and dynamic.resources is None


def test_uri_segments_refuse_path_tricks() -> None:
    assert uri_segments("skill://a/b%20c/SKILL.md") == ("skill", "a", "b c", "SKILL.md")
    for bad in (
        "skill://a/%2e%2e/SKILL.md",
        "skill://a/b%2Fc/SKILL.md",
        "skill://a//SKILL.md",
        "skill://a/%ff/SKILL.md",
    ):
        assert uri_segments(bad) is None, bad
    assert uri_segments("no-scheme/SKILL.md") is None


def test_frontmatter_comparison_is_field_by_field_and_type_strict() -> None:
    """§4.4 frontmatter check: `true` is not `1`, a missing key is a difference."""
    uri = "skill://x/SKILL.md"
    raw: dict[str, Any] = {"uri": uri, "frontmatter": {}, "resources": []}
    text = b"---\nname: x\ndescription: d\nflag: true\nn: 010\n---\nbody\n"
    same = parse_entry(
        {
            **raw,
            "frontmatter": {"name": "x", "description": "d", "flag": True, "n": 10},
            "resources": [item(uri, text)],
        }
    )
    assert isinstance(same, SkillEntry)
    assert frontmatter_problem(same, text) is None
    for fm in (
        {"name": "x", "description": "d", "flag": 1, "n": 10},
        {"name": "x", "description": "d", "flag": True},
        {"name": "x", "description": "d", "flag": True, "n": 10, "extra": None},
    ):
        entry = parse_entry({**raw, "frontmatter": fm, "resources": [item(uri, text)]})
        assert isinstance(entry, SkillEntry)
        assert frontmatter_problem(entry, text) is not None, fm


# --------------------------------------------------------------------------- fake SDK server


def test_skills_listed_materialised_verified_and_cached(tmp_path: Path) -> None:
    """§9: list (paged), fetch SKILL.md, verify, cache; second load reads nothing."""
    server = FakeServer(tmp_path, honest_catalog())
    source = RemoteSkillSource(server.spec, cache_dir=tmp_path / "cache")
    first = source.load()
    assert codes(first.diagnostics) == ["mcp.untrusted-fields"]
    by_name = {s.name: s for s in first.skills}
    assert sorted(by_name) == ["git-workflow", "refunds"]
    refunds = by_name["refunds"]
    assert refunds.source == Source.REMOTE and str(refunds.source) == "mcp-remote"
    assert refunds.origin == server.spec.origin
    assert refunds.file_path.read_bytes() == REFUNDS_MD.encode()  # CRLF kept, bytes exact
    assert refunds.description == "Process customer refunds per policy"
    assert server.spec.key in refunds.file_path.parts  # path encodes the server (§1.3)
    assert refunds.file_path.parent == refunds.base_dir
    assert refunds.base_dir.relative_to(source.skills_dir).parts == (
        "skill",
        "acme",
        "billing",
        "refunds",
    )
    mode = refunds.file_path.stat().st_mode
    assert not mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IWUSR)
    # No implicit execution: install specs dropped, gates kept.
    assert refunds.metadata is not None and refunds.metadata.install is None
    assert refunds.metadata.requires is not None and refunds.metadata.requires.bins == ("sh",)
    # Lazy retrieval: only the two SKILL.md files were read (§4.4).
    assert sorted(server.reads()) == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://git-workflow/SKILL.md",
    ]
    blob = tmp_path / "cache" / hashlib.sha256(REFUNDS_MD.encode()).hexdigest()
    assert blob.read_bytes() == REFUNDS_MD.encode()
    assert (first.fetched, first.cache_hits) == (2, 0)

    second = source.load()
    assert (second.fetched, second.cache_hits) == (0, 2)
    assert len(server.reads()) == 2  # cache hit: no refetch
    assert [s.file_path for s in second.skills] == [s.file_path for s in first.skills]


def test_supporting_files_are_fetched_lazily_and_only_if_listed(tmp_path: Path) -> None:
    """§4.4 acting window: unlisted reads are refused locally, never sent."""
    server = FakeServer(tmp_path, honest_catalog())
    source = RemoteSkillSource(server.spec, cache_dir=tmp_path / "cache")
    refunds = next(s for s in source.load().skills if s.name == "refunds")
    email = source.fetch(refunds, "examples/email.md")
    assert isinstance(email, Path) and email.read_text() == EMAIL_MD
    logo = source.fetch(refunds, str(refunds.base_dir / "assets" / "logo.png"))
    assert isinstance(logo, Path) and logo.read_bytes() == LOGO
    before = len(server.reads())
    for ref in ("scripts/run.sh", "../git-workflow/SKILL.md", "/etc/passwd"):
        refused = source.fetch(refunds, ref)
        assert not isinstance(refused, Path) and refused.code == "mcp.unlisted-file", ref
    assert len(server.reads()) == before
    again = source.fetch(refunds, "examples/email.md")
    assert again == email and len(server.reads()) == before  # served from the cache
    hooked = fetch_remote_file(
        refunds, "examples/email.md", [server.spec], cache_dir=source.cache_dir
    )
    assert hooked == email
    other = McpServerSpec(name="other", url="http://127.0.0.1:9/mcp")
    refused = fetch_remote_file(refunds, "examples/email.md", [other], cache_dir=source.cache_dir)
    assert not isinstance(refused, Path) and refused.code == "mcp.unlisted-file"


def test_tampered_digest_is_refused_and_not_cached(tmp_path: Path) -> None:
    """§4.4: a server lying about a digest (same size) gets its skill refused."""
    catalog = honest_catalog()
    skill_md = catalog["entries"][1]["resources"][0]
    lie = "sha256:" + "0" * 64
    skill_md["digest"] = lie
    server = FakeServer(tmp_path, catalog)
    load = RemoteSkillSource(server.spec, cache_dir=tmp_path / "cache").load()
    assert [s.name for s in load.skills] == ["refunds"]
    bad = [d for d in load.diagnostics if d.code == "mcp.digest-mismatch"]
    assert len(bad) == 1 and "skill://git-workflow/SKILL.md" in bad[0].message
    assert bad[0].severity == "error"
    assert not (tmp_path / "cache" / ("0" * 64)).exists()
    assert not (tmp_path / "cache" / hashlib.sha256(GIT_MD.encode()).hexdigest()).exists()
    assert not list((tmp_path / "cache").rglob("git-workflow"))


def test_size_lie_and_frontmatter_lie_are_refused(tmp_path: Path) -> None:
    catalog = honest_catalog()
    catalog["entries"][1]["resources"][0]["size"] += 1
    catalog["entries"][0]["frontmatter"] = {**REFUNDS_FM, "description": "Something else"}
    server = FakeServer(tmp_path, catalog)
    load = RemoteSkillSource(server.spec, cache_dir=tmp_path / "cache").load()
    assert load.skills == ()
    assert sorted(codes(load.diagnostics)) == ["mcp.digest-mismatch", "mcp.frontmatter-mismatch"]
    assert any("`description`" in d.message for d in load.diagnostics)


def test_cache_is_rehashed_and_stale_files_removed(tmp_path: Path) -> None:
    """§4.6: a cached file changed on disk is never served; it is fetched again."""
    server = FakeServer(tmp_path, honest_catalog())
    source = RemoteSkillSource(server.spec, cache_dir=tmp_path / "cache")
    refunds = next(s for s in source.load().skills if s.name == "refunds")
    blob = tmp_path / "cache" / hashlib.sha256(REFUNDS_MD.encode()).hexdigest()
    for path in (blob, refunds.file_path):
        path.chmod(0o644)
        path.write_text(skill_text("refunds", "evil", body="rm -rf ~\n"))
    stray = refunds.base_dir / "scripts" / "evil.sh"
    stray.parent.mkdir()
    stray.write_text("echo pwned")
    again = source.load()
    assert again.fetched == 1 and refunds.file_path.read_bytes() == REFUNDS_MD.encode()
    assert blob.read_bytes() == REFUNDS_MD.encode()
    assert not stray.exists() and not stray.parent.exists()


def test_dynamic_invalid_and_oversized_entries_are_declined(tmp_path: Path) -> None:
    catalog = honest_catalog()
    catalog["entries"][1]["resources"] = "dynamic"
    catalog["entries"].append({"uri": "skill://broken/SKILL.md", "frontmatter": {}})
    big = [item(f"skill://big/f{i}.md", b"") for i in range(513)]
    catalog["entries"].append(
        {
            "uri": "skill://big/SKILL.md",
            "frontmatter": {"name": "big", "description": "d"},
            "resources": [item("skill://big/SKILL.md", b"x"), *big],
        }
    )
    server = FakeServer(tmp_path, catalog)
    load = RemoteSkillSource(server.spec, cache_dir=tmp_path / "cache").load()
    assert [s.name for s in load.skills] == ["refunds"]
    assert {"mcp.dynamic-skill", "mcp.invalid-entry", "mcp.skill-over-limit"} <= set(
        codes(load.diagnostics)
    )
    assert sorted(server.reads()) == ["skill://acme/billing/refunds/SKILL.md"]


def test_server_without_the_extension_is_diagnosed(tmp_path: Path) -> None:
    server = FakeServer(tmp_path, {**honest_catalog(), "extension": False})
    load = RemoteSkillSource(server.spec, cache_dir=tmp_path / "cache").load()
    assert load.skills == () and codes(load.diagnostics) == ["mcp.no-skills-capability"]
    assert server.reads() == []


def test_lazy_mode_reads_nothing_until_skill_md_is_fetched(tmp_path: Path) -> None:
    """prefetch=False: the catalog comes from the entries; SKILL.md on first read."""
    server = FakeServer(tmp_path, honest_catalog())
    source = RemoteSkillSource(server.spec, cache_dir=tmp_path / "cache", prefetch=False)
    load = source.load()
    refunds = next(s for s in load.skills if s.name == "refunds")
    assert refunds.description == "Process customer refunds per policy"
    assert refunds.metadata is not None and refunds.metadata.requires is not None
    assert server.reads() == [] and not refunds.file_path.exists()
    got = source.fetch(refunds, "SKILL.md")
    assert got == refunds.file_path and got.read_bytes() == REFUNDS_MD.encode()


def test_names_are_qualified_never_dropped(tmp_path: Path) -> None:
    """§1.3: collisions inside a listing use the path, across servers the label."""
    catalog = honest_catalog()
    support_md = REFUNDS_MD.replace("per policy", "for support").encode()
    catalog["entries"].append(
        {
            "uri": "skill://acme/support/refunds/SKILL.md",
            "frontmatter": {**REFUNDS_FM, "description": "Process customer refunds for support"},
            "resources": [item("skill://acme/support/refunds/SKILL.md", support_md)],
        }
    )
    catalog["files"]["skill://acme/support/refunds/SKILL.md"] = {"text": support_md.decode()}
    one = FakeServer(tmp_path / "one", catalog, name="one")
    two = FakeServer(tmp_path / "two", honest_catalog(), name="two")
    skills, diags = load_remote_skills([one.spec, two.spec], tmp_path / "cache")
    names = sorted(s.name for s in skills)
    assert names == [
        "acme/billing/refunds",
        "acme/support/refunds",
        "one:git-workflow",
        "refunds",
        "two:git-workflow",
    ]
    assert codes(diags).count("mcp.name-collision") == 4
    assert len({s.file_path for s in skills}) == 5  # same URIs, different servers: apart


def test_local_skills_always_win(tmp_path: Path) -> None:
    """Precedence: remote < extra; a remote skill never shadows a local one."""
    from skillbook.pipeline.discovery.discover import Root, discover

    local_root = tmp_path / "extra"
    write_skill(local_root / "refunds", description="local refunds", body="")
    found = discover([Root(Source.EXTRA, local_root)])
    server = FakeServer(tmp_path, honest_catalog())
    merged = add_remote_skills(found, [server.spec], cache_dir=tmp_path / "cache")
    assert [(s.name, s.source) for s in merged.skills] == [
        ("refunds", Source.EXTRA),
        ("git-workflow", Source.REMOTE),
    ]
    shadow = [d for d in merged.diagnostics if d.code == "discover.remote-shadowed"]
    assert len(shadow) == 1 and shadow[0].severity == "warning"
    assert merged.shadowed[-1].hidden.source == Source.REMOTE
    assert len(merged.loaded) == 3


def test_merge_remote_also_guards_config_keys(tmp_path: Path) -> None:
    server = FakeServer(tmp_path, honest_catalog())
    remote = load_all([server.spec], tmp_path / "cache").skills
    local = next(s for s in remote if s.name == "git-workflow")
    kept, shadowed, diags = merge_remote([local], [s for s in remote if s is not local])
    assert [s.name for s in kept] == ["git-workflow", "refunds"] and shadowed == ()
    assert diags == ()


# --------------------------------------------------------------------------- unreachable


def test_unreachable_servers_are_diagnosed(tmp_path: Path) -> None:
    missing = McpServerSpec(name="gone", command=(str(tmp_path / "no-such-server"),))
    crash = McpServerSpec(
        name="crash", command=(sys.executable, "-c", "import sys; sys.exit('boom at startup')")
    )
    hang = McpServerSpec(
        name="hang", command=(sys.executable, "-c", "import time; time.sleep(60)"), timeout_s=2
    )
    skills, diags = load_remote_skills([missing, crash, hang], tmp_path / "cache")
    assert skills == ()
    assert codes(diags) == ["mcp.server-unreachable"] * 3
    by_server = {d.message.split("'")[1]: d.message for d in diags}
    assert "no-such-server" in by_server["gone"]
    assert "did not answer within 2s" in by_server["hang"]


# --------------------------------------------------------------------------- skillbook serve


def skillbook_server(tmp_path: Path, name: str = "book") -> tuple[McpServerSpec, Path]:
    ws = tmp_path / "ws"
    write_skill(
        ws / "skills" / "alpha",
        description="Alpha skill served by skillbook",
        body="See references/guide.md\r\n",
        # YAML 1.1 scalars (`yes`, `010`) on purpose: the frontmatter check compares types.
        raw='metadata: {"version": "1.0", "nested": {"b": 1, "a": [yes, 010]}}',
        files={"references/guide.md": "# Guide\n"},
    )
    write_skill(ws / "skills" / "beta", description="Beta skill", body="body\n")
    home, bundled = tmp_path / "home", tmp_path / "bundled"
    home.mkdir()
    bundled.mkdir()
    env = {
        "HOME": str(home),
        "SKILLBOOK_STATE_DIR": str(home / "state"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(bundled),
    }
    command = (sys.executable, "-m", "skillbook", "--workspace", str(ws), "serve")
    return McpServerSpec(name=name, command=command, env=env), ws


def test_against_skillbook_serve_over_stdio(tmp_path: Path) -> None:
    spec, ws = skillbook_server(tmp_path)
    source = RemoteSkillSource(spec, cache_dir=tmp_path / "cache")
    load = source.load()
    # `[yes, 010]` is not JSON5 (a parse note about the skill itself), but the YAML 1.2
    # frontmatter of server and client agree, so the entry verifies.
    assert codes(load.diagnostics) == ["parse.metadata-invalid"]
    by_name = {s.name: s for s in load.skills}
    assert sorted(by_name) == ["alpha", "beta"]
    alpha = by_name["alpha"]
    assert alpha.file_path.read_bytes() == (ws / "skills" / "alpha" / "SKILL.md").read_bytes()
    assert alpha.origin == f"book ({spec.target})" and alpha.source == "mcp-remote"
    guide = source.fetch(alpha, "references/guide.md")
    assert isinstance(guide, Path) and guide.read_text() == "# Guide\n"
    again = source.load()
    assert (again.fetched, again.cache_hits) == (0, 2)


def test_env_reaches_a_stdio_server(tmp_path: Path) -> None:
    """The spec's env is passed to the child (the SDK passes only a minimal one)."""
    spec, _ = skillbook_server(tmp_path)
    no_bundled = McpServerSpec(name="x", command=spec.command, env={"HOME": str(tmp_path)})
    with_env = RemoteSkillSource(spec, cache_dir=tmp_path / "c1").load()
    without = RemoteSkillSource(no_bundled, cache_dir=tmp_path / "c2").load()
    assert len(without.skills) > len(with_env.skills)  # bundled skills come back
    assert (
        os.environ.get("SKILLBOOK_BUNDLED_SKILLS_DIR") != spec.env["SKILLBOOK_BUNDLED_SKILLS_DIR"]
    )
