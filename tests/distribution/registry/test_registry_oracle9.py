"""OpenClaw 2026.9.6's own ClawHub install code (the oracle's ``latest``, driven from its
``dist``) and skillbook against the same test registry (clawhub-api.md §3.9-§3.12,
§4.5, §5): the files each writes, the records 2026.9 reads (``artifact``,
``skillFile``, ``fileTreeSha256``, ``verification``), each one updating what the other
installed, both refusing a locally edited skill and a release the registry blocks, and
both following a GitHub hand-off."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from factories import write_skill
from oracle_support import Oracle

from distribution.registry.clawhub_server import ClawHub, flat_zip
from distribution.registry.conftest import DEMO_V1, DEMO_V2
from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.endpoint import Endpoint
from skillbook.distribution.registry.installer import Installer, InstallOptions
from skillbook.distribution.registry.skillfiles import tree_sha256
from skillbook.distribution.registry.updater import update_skills
from skillbook.distribution.registry.verify import verify_skills
from skillbook.distribution.registry.workdir import Workdir

# Node 20 lacks the ES2025 Set methods a dependency of 2026.9 calls at import time
# (2026.9 asks for Node >= 24.16); on a newer Node these lines change nothing.
DRIVER = """
for (const [name, fn] of Object.entries({
  union(o) { const r = new Set(this); for (const v of o.keys()) r.add(v); return r; },
  intersection(o) { const r = new Set(); for (const v of this) if (o.has(v)) r.add(v); return r; },
  difference(o) { const r = new Set(); for (const v of this) if (!o.has(v)) r.add(v); return r; },
  isSubsetOf(o) { for (const v of this) if (!o.has(v)) return false; return true; },
  isSupersetOf(o) { for (const v of o.keys()) if (!this.has(v)) return false; return true; },
  isDisjointFrom(o) { for (const v of this) if (o.has(v)) return false; return true; },
})) if (!Set.prototype[name]) Object.defineProperty(Set.prototype, name, { value: fn, configurable: true, writable: true });
const path = await import("node:path");
const [dist, raw] = process.argv.slice(2);
const params = JSON.parse(raw);
const load = (name) => import(path.join(dist, name));
const mod = await load("clawhub-Bx9h2i4B.mjs");
const logs = [];
params.logger = { info: (m) => logs.push(m), warn: (m) => logs.push(m) };
const op = params.op;
delete params.op;
let result;
if (op === "install") {
  result = await mod.t(params);
} else {
  // updateSkillsFromClawHub for one slug, step by step: its SQLite lifecycle lease
  // needs node:sqlite (Node >= 22), the steps themselves do not.
  const store = await load("clawhub-store-Cs7uxSAP.mjs");
  const status = await load("clawhub-status-Bxp10gpf.mjs");
  const guard = await load("clawhub-uninstall-p4qp8753.mjs");
  const { workspaceDir } = params;
  const lock = await store.d(workspaceDir);
  const slug = await status.o({ workspaceDir, requestedSlug: params.slug, lock });
  const tracked = await status.s({ workspaceDir, slug, lock, baseUrl: params.baseUrl });
  const local = params.force ? { ok: true } : await guard.n({ workspaceDir, slug, previousVersion: tracked.previousVersion });
  if (!tracked.ok) result = { ok: false, error: tracked.error };
  else if (!local.ok) result = { ok: false, code: "force_required", error: `${local.error} Updating replaces the installed skill directory.` };
  else {
    const ref = tracked.ownerHandle ? `@${tracked.ownerHandle}/${slug}` : slug;
    const installed = await mod.t({ workspaceDir, slug: ref, baseUrl: tracked.baseUrl, force: true, clawManaged: true, logger: params.logger, ...(params.force ? {} : { expectedClawHubState: local.plan ?? null }) });
    result = installed.ok ? { ok: true, slug, previousVersion: tracked.previousVersion, version: installed.version, changed: tracked.previousVersion !== installed.version } : installed;
  }
}
console.log(JSON.stringify({ result, logs }));
"""

_OC9_ORIGIN = ("artifact", "skillFile", "fileTreeSha256")


def openclaw9(oracle: Oracle, tmp: Path, env: dict[str, str] | None = None, **params: Any) -> Any:
    driver = tmp / "driver9.mjs"
    driver.write_text(DRIVER)
    dist = oracle.root / "latest" / "node_modules" / "openclaw" / "dist"
    home = tmp / "oc-home"
    home.mkdir(exist_ok=True)
    proc = subprocess.run(
        ["node", str(driver), str(dist), json.dumps(params)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "OPENCLAW_STATE_DIR": str(home / "state"),
            "CLAWHUB_DISABLE_TELEMETRY": "1",
            **(env or {}),
        },
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def digest_by_openclaw9(oracle: Oracle, tmp: Path, folder: Path) -> str:
    script = tmp / "digest9.mjs"
    dist = oracle.root / "latest" / "node_modules" / "openclaw" / "dist"
    script.write_text(
        f'const m = await import("{dist}/skill-tree-digest-DQM6dl_F.mjs");\n'
        "console.log(await m.n(process.argv[2]));\n"
    )
    proc = subprocess.run(
        ["node", str(script), str(folder)], capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).parts[0].startswith(".")
    }


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def ours(hub: ClawHub, root: Path, env: dict[str, str] | None = None) -> Installer:
    root.mkdir(exist_ok=True)
    return Installer(Workdir(root), Endpoint(hub.url), env=env or {})


def test_openclaw_2026_9_and_skillbook_record_the_same_release(
    latest_oracle: Oracle, hub: ClawHub, tmp_path: Path
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    theirs, mine = tmp_path / "openclaw", tmp_path / "skillbook"
    theirs.mkdir()
    done = openclaw9(
        latest_oracle, tmp_path, op="install", workspaceDir=str(theirs), slug="demo",
        baseUrl=hub.url,
    )  # fmt: skip
    assert done["result"]["ok"] is True, done
    assert done["result"]["version"] == "1.0.0"
    assert "Downloading demo@1.0.0 from ClawHub…" in done["logs"]
    # 2026.9 asked /install, then the security verdict, then downloaded the archive.
    routes = hub.state.routes()
    assert routes[:3] == [
        "/api/v1/skills/demo/install",
        "/api/v1/skills/-/security-verdicts",
        "/api/v1/download",
    ]
    oc9_verdict_body = hub.state.requests[1]["body"]
    hub.state.requests.clear()
    ours(hub, mine).install("demo", InstallOptions(state_dir=tmp_path / "s"))
    [asked] = [r for r in hub.state.requests if r["method"] == "POST"]
    assert asked["body"] == {
        **oc9_verdict_body,
        "items": [{**oc9_verdict_body["items"][0], "ownerHandle": "bar-owner"}],
    }
    skill_t, skill_m = theirs / "skills" / "demo", mine / "skills" / "demo"
    assert files(skill_t) == files(skill_m) == DEMO_V1
    origin_t, origin_m = (
        read(skill_t / ".clawhub/origin.json"),
        read(skill_m / ".clawhub/origin.json"),
    )
    # Every field 2026.9 records, skillbook records too, with the same value; the tree
    # digests differ only because skillbook's tree holds its manifest, and each one is
    # the digest 2026.9 computes of that tree.
    for key in ("version", "registry", "slug", "installedVersion", "artifact", "skillFile"):
        assert origin_m[key] == origin_t[key], key
    assert set(origin_t) <= set(origin_m)
    assert (
        origin_t["artifact"]["sha256"]
        == __import__("hashlib").sha256(flat_zip(DEMO_V1)).hexdigest()
    )
    assert origin_m["fileTreeSha256"] == digest_by_openclaw9(latest_oracle, tmp_path, skill_m)
    assert origin_t["fileTreeSha256"] == tree_sha256(skill_t)
    entry_t = read(theirs / ".clawhub/lock.json")["skills"]["demo"]
    entry_m = read(mine / ".clawhub/lock.json")["skills"]["demo"]
    assert set(entry_t) <= set(entry_m)
    for key in ("version", "registry", "artifact", "skillFile", "verification"):
        assert entry_m[key] == entry_t[key], key


def test_each_updates_what_the_other_installed_and_both_refuse_local_edits(
    latest_oracle: Oracle, hub: ClawHub, tmp_path: Path
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    by_openclaw, by_skillbook = tmp_path / "a", tmp_path / "b"
    by_openclaw.mkdir()
    openclaw9(
        latest_oracle, tmp_path, op="install", workspaceDir=str(by_openclaw), slug="demo",
        baseUrl=hub.url,
    )  # fmt: skip
    mine = ours(hub, by_skillbook)
    mine.install("demo", InstallOptions(state_dir=tmp_path / "s"))
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    # 2026.9 updates skillbook's install without --force: the records prove it unedited.
    theirs = openclaw9(
        latest_oracle, tmp_path, op="update", workspaceDir=str(by_skillbook), slug="demo",
        baseUrl="http://127.0.0.1:9",
    )["result"]  # fmt: skip
    assert theirs["ok"] is True, theirs
    assert (theirs["previousVersion"], theirs["version"]) == ("1.0.0", "1.1.0")
    assert files(by_skillbook / "skills" / "demo") == DEMO_V2
    # skillbook sees 2026.9's install as unedited (its tree digest), and updates it.
    other = ours(hub, by_openclaw)
    assert [v.drift.state for v in verify_skills(other.workdir)] == ["clean"]
    [result] = update_skills(other, "demo", InstallOptions(state_dir=tmp_path / "s"))
    assert result.message == "Updated demo: 1.0.0 -> 1.1.0"
    # A local edit: both refuse to overwrite it.
    hub.state.publish("demo", "1.2.0", DEMO_V1)
    write_skill(by_openclaw / "skills/demo", description="mine", body="")
    refused = openclaw9(
        latest_oracle, tmp_path, op="update", workspaceDir=str(by_openclaw), slug="demo",
        baseUrl=hub.url,
    )["result"]  # fmt: skip
    assert refused["ok"] is False and refused["code"] == "force_required"
    assert "local SKILL.md changes" in refused["error"]
    [ours_refused] = update_skills(other, "demo", InstallOptions(state_dir=tmp_path / "s"))
    assert not ours_refused.ok and ours_refused.code == "registry.local-changes"
    (by_openclaw / "skills/demo/notes.txt").write_text("added\n")
    assert [v.drift.state for v in verify_skills(other.workdir)] == ["modified"]


def test_both_refuse_a_release_the_registry_blocks(
    latest_oracle: Oracle, hub: ClawHub, tmp_path: Path
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    hub.state.verdicts[("demo", "1.0.0")] = {
        "ok": False,
        "decision": "blocked",
        "reasons": ["scan:malicious"],
        "security": {"status": "malicious", "passed": False},
    }
    theirs = tmp_path / "a"
    theirs.mkdir()
    done = openclaw9(
        latest_oracle, tmp_path, op="install", workspaceDir=str(theirs), slug="demo",
        baseUrl=hub.url,
    )["result"]  # fmt: skip
    assert done["ok"] is False and done["code"] == "clawhub_download_blocked"
    assert done["error"] == "ClawHub blocked this release; install was not started."
    with pytest.raises(RegistryError) as caught:
        ours(hub, tmp_path / "b").install(
            "demo", InstallOptions(state_dir=tmp_path / "s", force=True)
        )
    assert caught.value.code == "registry.trust-blocked"
    assert "malicious behavior detected" in caught.value.message
    # Neither downloaded the archive.
    assert "/api/v1/download" not in hub.state.routes()
    assert not (theirs / "skills" / "demo").exists()
    assert not (tmp_path / "b" / "skills" / "demo").exists()


def test_both_follow_a_github_hand_off(latest_oracle: Oracle, hub: ClawHub, tmp_path: Path) -> None:
    commit = "0123456789abcdef0123456789abcdef01234567"
    hub.state.publish("gh", "1.0.0", DEMO_V1)
    hub.state.skills[("bar-owner", "gh")].latest = None
    repo = {"README.md": b"# repo\n", **{f"skills/gh/{k}": v for k, v in DEMO_V1.items()}}
    hub.state.static[f"/codeload/acme/tools/zip/{commit}"] = flat_zip(
        repo, prefix=f"tools-{commit}/"
    )
    source_url = f"https://github.com/acme/tools/tree/{commit}/skills/gh"
    hub.state.install["gh"] = (
        200,
        {
            "ok": True,
            "slug": "gh",
            "installKind": "github",
            "github": {
                "repo": "acme/tools",
                "path": "skills/gh",
                "commit": commit,
                "contentHash": "0" * 64,
                "sourceUrl": source_url,
            },
        },
    )
    env = {"CLAWHUB_GITHUB_CODELOAD_BASE_URL": f"{hub.url}/codeload"}
    theirs, mine = tmp_path / "a", tmp_path / "b"
    theirs.mkdir()
    done = openclaw9(
        latest_oracle, tmp_path, env, op="install", workspaceDir=str(theirs), slug="gh",
        baseUrl=hub.url,
    )["result"]  # fmt: skip
    assert done["ok"] is True and done["version"] == commit, done
    [outcome] = ours(hub, mine, env).install("gh", InstallOptions(state_dir=tmp_path / "s"))
    assert outcome.version == commit and outcome.display_version() == commit[:12]
    assert files(theirs / "skills/gh") == files(mine / "skills/gh") == DEMO_V1
    origin_t = read(theirs / "skills/gh/.clawhub/origin.json")
    origin_m = read(mine / "skills/gh/.clawhub/origin.json")
    for key in ("installedVersion", "sourceUrl", "artifact", "skillFile"):
        assert origin_m[key] == origin_t[key], key
    assert origin_m["sourceUrl"] == source_url
    # Neither sent a security-verdict request for the hand-off (2026.9 does not).
    assert all(r["method"] == "GET" for r in hub.state.requests)


def test_both_install_a_skills_sh_reference_alike(
    latest_oracle: Oracle, hub: ClawHub, tmp_path: Path
) -> None:
    from skillbook.distribution.fingerprint import github_content_hash, sha256_hex

    commit = "fedcba9876543210fedcba9876543210fedcba98"
    hub.state.publish("web", "1.0.0", DEMO_V1)
    repo = {f"skills/web/{k}": v for k, v in DEMO_V1.items()}
    hub.state.static[f"/codeload/acme/tools/zip/{commit}"] = flat_zip(repo, prefix="t/")
    content = github_content_hash((p, len(b), sha256_hex(b)) for p, b in DEMO_V1.items())
    hub.state.install["web"] = (
        200,
        {
            "ok": True,
            "slug": "web",
            "installKind": "github",
            "github": {"repo": "acme/tools", "path": "skills/web", "commit": commit,
                       "contentHash": content, "sourceUrl": "https://github.com/acme/tools"},
            "trust": {"state": "not-scanned-by-clawhub"},
        },
    )  # fmt: skip
    env = {"CLAWHUB_GITHUB_CODELOAD_BASE_URL": f"{hub.url}/codeload"}
    ref = "skills-sh:acme/tools/web"
    theirs, mine = tmp_path / "a", tmp_path / "b"
    theirs.mkdir()
    done = openclaw9(
        latest_oracle, tmp_path, env, op="install", workspaceDir=str(theirs), slug=ref,
        baseUrl=hub.url,
    )  # fmt: skip
    assert done["result"]["ok"] is True, done
    assert "Not scanned by ClawHub" in done["logs"]
    [outcome] = ours(hub, mine, env).install(ref, InstallOptions(state_dir=tmp_path / "s"))
    assert outcome.version == done["result"]["version"] == commit
    origin_t = read(theirs / "skills/web/.clawhub/origin.json")
    origin_m = read(mine / "skills/web/.clawhub/origin.json")
    for key in ("slug", "requestedReference", "trustState", "installedVersion", "sourceUrl"):
        assert origin_m[key] == origin_t[key], key
    entry_t = read(theirs / ".clawhub/lock.json")["skills"]["web"]
    entry_m = read(mine / ".clawhub/lock.json")["skills"]["web"]
    assert (entry_m["requestedReference"], entry_m["trustState"]) == (
        entry_t["requestedReference"], entry_t["trustState"],
    )  # fmt: skip
    # Both asked /install by reference.
    asked = [r["query"] for r in hub.state.requests if r["path"] == "/api/v1/skills/web/install"]
    assert asked == [{"reference": ref}, {"reference": ref}]
