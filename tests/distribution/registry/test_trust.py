"""The registry's word on a release (clawhub-api.md §3.9, §3.11, §3.12): the security
verdict asked before every archive download, read as OpenClaw 2026.9 reads it, the
``/verify`` snapshot kept in the lock, and ``/install``'s GitHub hand-offs and refusals."""

from __future__ import annotations

import json
from typing import Any

import pytest

from distribution.registry.clawhub_server import ClawHub, Failure, flat_zip
from distribution.registry.conftest import DEMO_V1, FAST, Said
from skillbook.distribution.registry import RegistryError, RegistryNotFound
from skillbook.distribution.registry.client import RegistryClient
from skillbook.distribution.registry.endpoint import Endpoint
from skillbook.distribution.registry.installer import Installer, InstallOptions
from skillbook.distribution.registry.trust import check_release
from skillbook.distribution.registry.workdir import Workdir

COMMIT = "89abcdef0123456789abcdef0123456789abcdef"


def verdict(hub: ClawHub, **fields: Any) -> None:
    hub.state.verdicts[("demo", "1.0.0")] = fields


def refusal(installer: Installer, options: InstallOptions, **kw: Any) -> RegistryError:
    with pytest.raises(RegistryError) as caught:
        installer.install("demo", InstallOptions(state_dir=options.state_dir, **kw))
    return caught.value


def test_a_clean_pass_is_asked_with_the_owner_and_installs_quietly(
    hub: ClawHub, installer: Installer, options: InstallOptions, said: Said
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    [outcome] = installer.install("demo", options)
    assert outcome.warnings == ()
    [post] = [r for r in hub.state.requests if r["method"] == "POST"]
    assert post["path"] == "/api/v1/skills/-/security-verdicts"
    assert post["body"] == {
        "items": [{"slug": "demo", "ownerHandle": "bar-owner", "version": "1.0.0"}]
    }
    # Asked before the download, and /verify after it.
    routes = hub.state.routes()
    assert routes.index("/api/v1/skills/-/security-verdicts") < routes.index("/api/v1/download")
    assert routes[-1] == "/api/v1/skills/demo/verify"
    assert hub.state.requests[-1]["query"] == {"version": "1.0.0", "ownerHandle": "bar-owner"}


def test_blocked_is_refused_even_with_force_and_nothing_is_downloaded(
    hub: ClawHub, installer: Installer, options: InstallOptions
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    for fields in (
        {"decision": "blocked", "ok": False},
        {"ok": False, "decision": "fail", "reasons": ["static:malware_dropper"]},
        {"ok": False, "decision": "fail", "reasons": ["publisher.blocked"]},
        {"security": {"status": "malicious", "passed": False}, "ok": False, "decision": "fail"},
    ):
        verdict(hub, **fields)
        error = refusal(installer, options, force=True)
        assert error.code == "registry.trust-blocked", fields
        assert f"{hub.url} blocked this release of demo@1.0.0" in error.message
        assert "https://hub.test/skills/demo/security-audit" in error.message
    assert "/api/v1/download" not in hub.state.routes()


def test_review_required_needs_force_and_says_why(
    hub: ClawHub, installer: Installer, options: InstallOptions
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    verdict(
        hub,
        ok=False,
        decision="fail",
        reasons=["payload_strings"],
        security={"status": "suspicious", "passed": False},
    )
    error = refusal(installer, options)
    assert error.code == "registry.trust-review"
    assert "security scan status is suspicious; suspicious payload strings" in error.message
    assert not installer.workdir.target("demo").exists()
    [outcome] = installer.install("demo", InstallOptions(state_dir=options.state_dir, force=True))
    assert any(f"despite the audit on {hub.url}" in w for w in outcome.warnings)


def test_pending_and_stale_scans_are_notices(
    hub: ClawHub, installer: Installer, options: InstallOptions
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    verdict(
        hub, reasons=["scan_pending", "scan:stale"], security={"status": "pending", "passed": True}
    )
    [outcome] = installer.install("demo", options)
    [warning] = outcome.warnings
    assert warning.startswith(f"the audit of demo@1.0.0 on {hub.url}: security scan is pending")
    assert "scan data is stale" in warning and "scan pending" in warning


def test_a_registry_without_the_routes_installs_with_a_note(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    hub.state.trust_routes = False
    [outcome] = installer.install("demo", options)
    assert outcome.warnings == (
        "the registry serves no security verdicts for demo@1.0.0; relying on skillbook's own scan",
    )
    entry = json.loads((workdir.root / ".clawhub/lock.json").read_text())["skills"]["demo"]
    assert "verification" not in entry and "fileTreeSha256" in entry


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"requestedVersion": "9.9.9"}, "the verdict is for another release"),
        ({"slug": "other"}, 'the registry returned skill "other"'),
        ({"publisherHandle": "mallory"}, 'the registry returned publisher "mallory"'),
        ({"security": {"status": "clean"}}, "no usable security verdict"),
        ({"overview": ""}, "the verdict has no audit overview"),
        ({"securityAuditUrl": None}, "the verdict has no security audit URL"),
        ({"error": {"code": "internal", "message": "boom"}}, "no usable security verdict: boom"),
    ],
)
def test_a_verdict_that_cannot_be_trusted_stops_the_install(
    hub: ClawHub, installer: Installer, options: InstallOptions, fields: dict[str, Any], why: str
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    verdict(hub, **fields)
    error = refusal(installer, options)
    assert error.code == "registry.trust-unavailable"
    assert error.message == f'{hub.url} release trust check failed for "demo@1.0.0": {why}'


def test_wrong_count_and_server_errors_stop_it_too(hub: ClawHub) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    route = "/api/v1/skills/-/security-verdicts"
    hub.state.fail(route, Failure(200, {"Content-Type": "application/json"}, b'{"items": []}'))
    with RegistryClient(Endpoint(hub.url), retry=FAST) as client:
        with pytest.raises(RegistryError, match="returned 0 verdicts for 1 target"):
            check_release(client, "demo", "1.0.0")
        hub.state.fail(route, *[Failure(503, body=b"down")] * 3)
        with pytest.raises(RegistryError, match=r"failed \(503\): down") as caught:
            check_release(client, "demo", "1.0.0")
        assert caught.value.code == "registry.trust-unavailable"
        # An unknown version is a plain not-found, as the download would say.
        with pytest.raises(RegistryNotFound, match=r'Version "3\.0\.0" of skill "demo" not found'):
            check_release(client, "demo", "3.0.0")
        # Official skills on https://clawhub.ai skip the check (2026.9); nothing is asked.
        before = len(hub.state.requests)
        assert check_release(client, "demo", "1.0.0", official=True).disposition == "skipped"
        assert len(hub.state.requests) == before


def test_an_owner_the_verdicts_do_not_know_falls_back_to_verify(hub: ClawHub) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    verdict(hub, version=None, error={"code": "skill_not_found", "message": "no"})
    with RegistryClient(Endpoint(hub.url), retry=FAST) as client:
        result = check_release(client, "demo", "1.0.0", owner="bar-owner")
    assert result.disposition == "clean"
    assert hub.state.routes()[-1] == "/api/v1/skills/demo/verify"
    assert result.audit_url == "https://hub.test/bar-owner/skills/demo/security-audit?version=1.0.0"


def test_a_failing_verify_is_a_warning_and_its_snapshot_is_kept_otherwise(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    hub.state.fail("/api/v1/skills/demo/verify", *[Failure(500, body=b"oops")] * 3)
    [outcome] = installer.install("demo", options)
    assert outcome.warnings == (
        f"Skill verification for demo failed: /api/v1/skills/demo/verify on {hub.url} failed "
        "(500): oops",
    )
    entry = json.loads((workdir.root / ".clawhub/lock.json").read_text())["skills"]["demo"]
    assert "verification" not in entry


def github_hand_off(hub: ClawHub, **github: Any) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    hub.state.skills[("bar-owner", "demo")].latest = None
    answer = {"repo": "acme/tools", "path": "skills/demo", "commit": COMMIT, **github}
    hub.state.install["demo"] = (
        200,
        {"ok": True, "slug": "demo", "installKind": "github", "github": answer},
    )
    repo = {f"skills/demo/{k}": v for k, v in DEMO_V1.items()}
    hub.state.static[f"/gh/acme/tools/zip/{COMMIT}"] = flat_zip(repo, prefix="tools-x/")


def test_a_github_hand_off_downloads_the_commit_without_the_token(
    hub: ClawHub, workdir: Workdir, options: InstallOptions, said: Said
) -> None:
    github_hand_off(hub, sourceUrl="https://github.com/acme/tools/tree/x")
    env = {"CLAWHUB_GITHUB_CODELOAD_BASE_URL": f"{hub.url}/gh/"}
    endpoint = Endpoint(hub.url, token="clh_secret")
    installer = Installer(workdir, endpoint, say=said, retry=FAST, env=env)
    [outcome] = installer.install("demo", options)
    assert (outcome.version, outcome.display_version()) == (COMMIT, COMMIT[:12])
    assert f"Downloading demo@{COMMIT[:12]} from GitHub…" in said
    [zip_get] = [r for r in hub.state.requests if r["path"].startswith("/gh/")]
    assert "Authorization" not in zip_get["headers"]
    assert any("Authorization" in r["headers"] for r in hub.state.requests)
    assert outcome.origin["sourceUrl"] == "https://github.com/acme/tools/tree/x"
    # No security verdict is asked for a hand-off (OpenClaw 2026.9 asks none), and
    # /verify is asked without a version.
    assert all(r["method"] == "GET" for r in hub.state.requests)
    assert hub.state.requests[-1]["query"] == {"ownerHandle": "bar-owner"}


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"commit": "main"}, "resolved to a mutable or invalid GitHub source ref"),
        ({"repo": "acme/../x"}, "invalid GitHub repository"),
        ({"path": "skills/../../etc"}, "Invalid GitHub skill source path"),
        ({"path": "skills/absent"}, "GitHub archive did not contain skills/absent"),
        ({"path": ""}, "the repository root holds none of SKILL.md"),
    ],
)
def test_a_bad_github_hand_off_is_refused(
    hub: ClawHub, workdir: Workdir, options: InstallOptions, answer: dict[str, str], message: str
) -> None:
    github_hand_off(hub, **answer)
    env = {"CLAWHUB_GITHUB_CODELOAD_BASE_URL": f"{hub.url}/gh"}
    installer = Installer(workdir, Endpoint(hub.url), retry=FAST, env=env)
    with pytest.raises(RegistryError, match=message.replace("(", r"\(")):
        installer.install("demo", options)
    assert sorted(p.name for p in workdir.skills_dir.iterdir()) == []


def test_install_route_refusals_are_shown_as_sent(
    hub: ClawHub, installer: Installer, options: InstallOptions
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    hub.state.skills[("bar-owner", "demo")].latest = None
    hub.state.install["demo"] = (
        410,
        {
            "ok": False,
            "slug": "demo",
            "reason": "github_upstream_removed",
            "message": "Gone upstream.",
            "status": 410,
        },
    )
    assert refusal(installer, options).message == "Gone upstream."
    hub.state.install["demo"] = (409, {"ok": False, "slug": "demo", "reason": "ambiguous_slug"})
    message = refusal(installer, options).message
    assert message.startswith(f'Skill "demo" is ambiguous on {hub.url}. Install an owner-qualified')
    assert "skillbook install @owner/demo" in message
    hub.state.install["demo"] = (500, {"ok": False})
    assert refusal(installer, options).code == "registry.server-error"


def test_the_official_flag_rule() -> None:
    # OpenClaw 2026.9's hasOfficialClawHubFlag; stage_registry trusts it on
    # https://clawhub.ai only (the check_release(official=True) skip is tested above).
    from skillbook.distribution.registry.api import official_flag

    assert official_flag({"channel": "official"}) and official_flag(None, {"isOfficial": True})
    assert not official_flag({"official": "yes"}, None)


def test_updating_a_github_hand_off_follows_the_commit(
    hub: ClawHub, workdir: Workdir, options: InstallOptions
) -> None:
    from distribution.registry.conftest import DEMO_V2
    from skillbook.distribution.registry.updater import update_skills

    github_hand_off(hub)
    env = {"CLAWHUB_GITHUB_CODELOAD_BASE_URL": f"{hub.url}/gh"}
    installer = Installer(workdir, Endpoint(hub.url), retry=FAST, env=env)
    installer.install("demo", options)
    # The same commit: nothing is downloaded again.
    hub.state.requests.clear()
    [same] = update_skills(installer, "demo", options)
    assert same.ok and same.message == f"demo already at {COMMIT[:12]}"
    assert not any(r["path"].startswith("/gh/") for r in hub.state.requests)
    # A new commit: downloaded, swapped in, shown short.
    new = "f" * 40
    _, answer = hub.state.install["demo"]
    answer["github"]["commit"] = new
    repo = {f"skills/demo/{k}": v for k, v in DEMO_V2.items()}
    hub.state.static[f"/gh/acme/tools/zip/{new}"] = flat_zip(repo, prefix="tools-y/")
    [moved] = update_skills(installer, "demo", options)
    assert moved.message == f"Updated demo: {COMMIT[:12]} -> {new[:12]}"
    assert (workdir.skills_dir / "demo" / "references" / "b.md").read_bytes() == b"new file\n"


def skills_sh(
    hub: ClawHub, content_hash: str | None, trust: str | None = "not-scanned-by-clawhub"
) -> None:
    github_hand_off(hub)
    _, answer = hub.state.install["demo"]
    if content_hash is not None:
        answer["github"]["contentHash"] = content_hash
    if trust is not None:
        answer["trust"] = {"state": trust}


def demo_content_hash() -> str:
    from skillbook.distribution.fingerprint import github_content_hash, sha256_hex

    return github_content_hash((p, len(b), sha256_hex(b)) for p, b in DEMO_V1.items())


def test_a_skills_sh_reference_installs_the_resolved_commit_unscanned(
    hub: ClawHub, workdir: Workdir, options: InstallOptions
) -> None:
    from skillbook.distribution.registry.updater import update_skills

    skills_sh(hub, demo_content_hash().upper())
    env = {"CLAWHUB_GITHUB_CODELOAD_BASE_URL": f"{hub.url}/gh"}
    installer = Installer(workdir, Endpoint(hub.url), retry=FAST, env=env)
    ref = "skills-sh:acme/tools/demo"
    [outcome] = installer.install(ref, options)
    assert outcome.version == COMMIT and outcome.name == "demo"
    assert outcome.warnings == (f"{ref}: not scanned by {hub.url}",)
    assert outcome.origin["requestedReference"] == ref
    assert outcome.origin["trustState"] == "not-scanned-by-clawhub"
    entry = json.loads((workdir.root / ".clawhub/lock.json").read_text())["skills"]["demo"]
    assert (entry["requestedReference"], entry["trustState"]) == (ref, "not-scanned-by-clawhub")
    # Resolved by reference (no detail, no verdict), verified by reference.
    paths = hub.state.routes()
    assert "/api/v1/skills/demo" not in paths
    assert all(r["method"] == "GET" for r in hub.state.requests)
    [resolve] = [r for r in hub.state.requests if r["path"].endswith("/install")]
    assert resolve["query"] == {"reference": ref}
    assert hub.state.requests[-1]["query"] == {"reference": ref}
    # An update re-resolves the reference; the same commit is current.
    [same] = update_skills(installer, "demo", options)
    assert same.message == f"demo already at {COMMIT[:12]}"
    assert hub.state.requests[-1]["query"] == {"reference": ref}


@pytest.mark.parametrize(
    ("hash_", "trust", "code", "message"),
    [
        (
            "0" * 64,
            "not-scanned-by-clawhub",
            "registry.content-mismatch",
            "does not match the registry resolver's approved hash",
        ),
        (
            None,
            None,
            "registry.no-version",
            "did not resolve to an unscanned, commit-pinned GitHub source",
        ),
    ],
)
def test_a_skills_sh_reference_must_match_its_resolver(
    hub: ClawHub, workdir: Workdir, options: InstallOptions, hash_: str | None,
    trust: str | None, code: str, message: str,
) -> None:  # fmt: skip
    skills_sh(hub, hash_, trust)
    env = {"CLAWHUB_GITHUB_CODELOAD_BASE_URL": f"{hub.url}/gh"}
    installer = Installer(workdir, Endpoint(hub.url), retry=FAST, env=env)
    with pytest.raises(RegistryError, match=message) as caught:
        installer.install("skills-sh:acme/tools/demo", options)
    assert caught.value.code == code
    assert sorted(p.name for p in workdir.skills_dir.iterdir()) == []
    with pytest.raises(RegistryError, match="--version is not supported for skills-sh"):
        installer.install("skills-sh:acme/tools/demo", InstallOptions(version="1.0.0"))
