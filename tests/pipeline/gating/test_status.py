"""skillbook.pipeline.gating.status: the §10 status entry shape and §8.2 install options (§12 Status lines)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from factories import stub_bins

from skillbook.config.file import Config
from skillbook.errors import SkillNotFound
from skillbook.model import (
    InstallSpec,
    Requires,
    Skill,
    SkillMetadata,
    Source,
)
from skillbook.pipeline.cache.skill_memo import SkillMemo
from skillbook.pipeline.gating.gate import BinaryLookup, Eligibility, Host, StaticRemote
from skillbook.pipeline.gating.install_options import (
    InstallPreferences,
    normalize_install_options,
    resolve_install_preferences,
)
from skillbook.pipeline.gating.status import StatusMemo, _GivenVerdicts, build_status, evaluate_all

WS = Path("/ws")
MANAGED = Path("/state/skills")


def make_skill(
    name: str = "demo",
    *,
    source: str = Source.WORKSPACE.value,
    metadata: SkillMetadata | None = None,
    frontmatter: dict[str, str] | None = None,
) -> Skill:
    base = WS / "skills" / name
    return Skill.create(
        name,
        f"{name} skill",
        base_dir=base,
        source=source,
        metadata=metadata,
        frontmatter=frontmatter or {},
    )


def bins_with(tmp_path: Path, *names: str) -> BinaryLookup:
    folder = stub_bins(tmp_path / "bin", names, "#!/bin/sh\n")
    return BinaryLookup({"PATH": str(folder)}, platform="linux")


def status(skills: list[Skill], config: Config | None = None, **kw: Any) -> Any:
    return build_status(
        skills,
        config=config or Config.empty(),
        host=kw.pop("host", Host(platform="linux", env={})),
        bins=kw.pop("bins", BinaryLookup({"PATH": ""}, platform="linux")),
        workspace_dir=WS,
        managed_dir=MANAGED,
        **kw,
    )


def test_entry_shape_and_key_order() -> None:
    skill = make_skill(
        metadata=SkillMetadata(
            primary_env="DEMO_KEY",
            emoji="🧪",
            homepage=" https://example.com ",
            requires=Requires(bins=("nope",)),
        )
    )
    report = status([skill])
    data = report.to_json()
    assert list(data) == ["workspaceDir", "managedSkillsDir", "skills"]
    assert data["workspaceDir"] == "/ws" and data["managedSkillsDir"] == "/state/skills"
    entry = data["skills"][0]
    assert list(entry) == [
        "name", "description", "source", "bundled", "filePath", "baseDir", "skillKey",
        "primaryEnv", "emoji", "homepage", "always", "disabled", "blockedByAllowlist",
        "eligible", "requirements", "missing", "configChecks", "install",
    ]  # fmt: skip
    assert entry["homepage"] == "https://example.com"
    assert entry["filePath"] == "/ws/skills/demo/SKILL.md"
    assert entry["requirements"] == {
        "bins": ["nope"], "anyBins": [], "env": [], "config": [], "os": []
    }  # fmt: skip
    assert entry["missing"]["bins"] == ["nope"]
    assert report.skills[0].status == "needs-setup"


def test_optional_keys_left_out() -> None:
    entry = status([make_skill()]).to_json()["skills"][0]
    assert "primaryEnv" not in entry and "emoji" not in entry and "homepage" not in entry


def test_emoji_and_homepage_fall_back_to_frontmatter() -> None:
    skill = make_skill(frontmatter={"emoji": "📦", "website": " https://w.example "})
    entry = status([skill]).skills[0]
    assert entry.emoji == "📦" and entry.homepage == "https://w.example"
    # `??` chain: a present-but-blank metadata homepage stops the chain.
    blank = make_skill(
        metadata=SkillMetadata(homepage="  ", emoji=""),
        frontmatter={"homepage": "https://h", "emoji": "x"},
    )
    entry = status([blank]).skills[0]
    assert entry.homepage is None and entry.emoji is None
    url_only = make_skill(frontmatter={"url": "https://u"})
    assert status([url_only]).skills[0].homepage == "https://u"


def test_status_reports_missing_and_brew_install_option_id() -> None:
    """§12 Status: missing bins/env/config and brew install option id."""
    skill = make_skill(
        metadata=SkillMetadata(
            requires=Requires(bins=("gh",), env=("GH_TOKEN",), config=("browser.enabled",)),
            install=(InstallSpec(kind="brew", formula="gh", bins=("gh",)),),
        )
    )
    cfg = Config.from_mapping({"browser": {"enabled": False, "secretish": "value"}})
    entry = status([skill], cfg).to_json()["skills"][0]
    assert entry["missing"] == {
        "bins": ["gh"], "anyBins": [], "env": ["GH_TOKEN"], "config": ["browser.enabled"], "os": []
    }  # fmt: skip
    assert entry["install"] == [
        {"id": "brew-0", "kind": "brew", "label": "Install gh (brew)", "bins": ["gh"]}
    ]
    assert entry["configChecks"] == [{"path": "browser.enabled", "satisfied": False}]


def test_config_check_values_never_exposed() -> None:
    """§12 Status: config check values never exposed."""
    skill = make_skill(metadata=SkillMetadata(requires=Requires(config=("secrets.token",))))
    cfg = Config.from_mapping({"secrets": {"token": "sk-VERY-SECRET"}})
    report = status([skill], cfg)
    assert "sk-VERY-SECRET" not in repr(report.to_json())
    assert report.to_json()["skills"][0]["configChecks"] == [
        {"path": "secrets.token", "satisfied": True}
    ]


def test_os_gated_skill_reports_missing_os_and_no_install_options() -> None:
    """§12 Status: OS-gated skills report `missing.os` off-platform; no install options then."""
    skill = make_skill(
        metadata=SkillMetadata(
            os=("darwin",), install=(InstallSpec(kind="brew", formula="peekaboo"),)
        )
    )
    entry = status([skill]).skills[0]
    assert entry.missing.os == ("darwin",)
    assert entry.install == ()
    on_mac = status([skill], platform="darwin").skills[0]
    assert on_mac.eligible and on_mac.install[0].id == "brew-0"


def test_install_options_filtered_by_os_download_per_platform() -> None:
    """§12 Status: install options filtered by OS (download per platform)."""
    specs = (
        InstallSpec(kind="download", url="https://x.example/tool-mac.tgz", os=("darwin",)),
        InstallSpec(kind="download", url="https://x.example/tool-linux.tgz", os=("linux",)),
        InstallSpec(kind="download", id=" custom ", url="https://x.example/dl/", label=" Get it "),
        InstallSpec(kind="download", url="https://x.example/"),
    )
    skill = make_skill(metadata=SkillMetadata(install=specs))
    options = [o.to_json() for o in status([skill]).skills[0].install]
    assert options == [
        {"id": "download-0", "kind": "download", "label": "Download tool-linux.tgz", "bins": []},
        {"id": "custom", "kind": "download", "label": "Get it", "bins": []},
        {
            "id": "download-2",
            "kind": "download",
            "label": "Download https://x.example/",
            "bins": [],
        },
    ]


def _one(specs: tuple[InstallSpec, ...], bins: BinaryLookup, prefs: InstallPreferences) -> str:
    skill = make_skill(metadata=SkillMetadata(install=specs))
    options = normalize_install_options(skill, prefs=prefs, platform="linux", bins=bins)
    assert len(options) == 1
    return options[0].id


def test_preferred_installer_chain(tmp_path: Path) -> None:
    brew = InstallSpec(kind="brew", formula="f")
    node = InstallSpec(kind="node", package="p")
    uv = InstallSpec(kind="uv", package="u")
    go = InstallSpec(kind="go", module="example.com/m")
    dl = InstallSpec(kind="download", url="https://x.example/a.zip")
    none = BinaryLookup({"PATH": ""}, platform="linux")
    with_brew = bins_with(tmp_path, "brew")
    prefs = InstallPreferences()
    assert _one((node, uv, brew), with_brew, prefs) == "brew-2"
    assert _one((node, uv, brew), none, prefs) == "uv-1"
    assert _one((node, brew), none, prefs) == "node-0"
    no_pref = InstallPreferences(prefer_brew=False)
    assert _one((go, brew), with_brew, no_pref) == "brew-1"
    assert _one((go, brew), none, no_pref) == "go-0"
    assert _one((brew, dl), none, prefs) == "download-1"
    assert _one((brew,), none, prefs) == "brew-0"


def test_install_labels_and_node_manager() -> None:
    cfg = Config.from_mapping({"skills": {"install": {"nodeManager": "pnpm"}}})
    prefs = resolve_install_preferences(cfg)
    assert prefs == InstallPreferences(prefer_brew=True, node_manager="pnpm")
    assert resolve_install_preferences(Config.empty()) == InstallPreferences(True, "npm")
    none = BinaryLookup({"PATH": ""}, platform="linux")

    def label(spec: InstallSpec) -> str:
        skill = make_skill(metadata=SkillMetadata(install=(spec,)))
        return normalize_install_options(skill, prefs=prefs, platform="linux", bins=none)[0].label

    # node always gets the generated label, even with an explicit one.
    assert label(InstallSpec(kind="node", package="pkg", label="Custom")) == "Install pkg (pnpm)"
    assert label(InstallSpec(kind="go", module="example.com/m")) == "Install example.com/m (go)"
    assert label(InstallSpec(kind="uv", package="u")) == "Install u (uv)"
    assert label(InstallSpec(kind="brew", formula="f", label="  ")) == "Install f (brew)"
    assert label(InstallSpec(kind="brew", formula="f", label=" Mine ")) == "Mine"
    assert label(InstallSpec(kind="brew")) == "Run installer"


def test_bundled_blocked_by_allowlist_and_workspace_override() -> None:
    """§12 Status: bundled skill blocked by allowlist; a workspace override is not bundled/blocked."""
    cfg = Config.from_mapping({"skills": {"allowBundled": ["other"]}})
    bundled = make_skill("peekaboo", source=Source.BUNDLED.value)
    override = make_skill("peekaboo", source=Source.WORKSPACE.value)
    b, w = status([bundled, override], cfg).to_json()["skills"]
    assert b["bundled"] is True and b["blockedByAllowlist"] is True and b["eligible"] is False
    assert w["bundled"] is False and w["blockedByAllowlist"] is False and w["eligible"] is True


def test_unknown_source_is_bundled_by_name() -> None:
    unknown = make_skill("peekaboo", source="  ")
    entry = status([unknown], bundled_names=frozenset({"peekaboo"})).skills[0]
    assert entry.source == "unknown" and entry.bundled


def test_disabled_and_summary_and_find() -> None:
    cfg = Config.from_mapping(
        {"skills": {"entries": {"off": {"enabled": False}}, "allowBundled": ["x"]}}
    )
    skills = [
        make_skill("ok"),
        make_skill("off"),
        make_skill("blocked", source=Source.BUNDLED.value),
        make_skill("needs", metadata=SkillMetadata(requires=Requires(env=("NOPE",)))),
        make_skill("keyed", metadata=SkillMetadata(skill_key="alias")),
    ]
    report = status(skills, cfg)
    assert [e.status for e in report.skills] == [
        "ready", "disabled", "blocked", "needs-setup", "ready"
    ]  # fmt: skip
    assert report.summary() == {
        "total": 5, "eligible": 2, "disabled": 1, "blocked": 1, "missingRequirements": 1
    }  # fmt: skip
    assert report.find("alias").name == "keyed"
    assert report.find("ok").skill_key == "ok"
    with pytest.raises(SkillNotFound):
        report.find("absent")


def test_always_with_wrong_os_is_reported_deliberate_fix() -> None:
    skill = make_skill(metadata=SkillMetadata(always=True, os=("darwin",)))
    entry = status([skill]).to_json()["skills"][0]
    assert entry["always"] is True
    assert entry["eligible"] is False
    assert entry["missing"]["os"] == ["darwin"]


def test_remote_eligibility_in_status() -> None:
    skill = make_skill(metadata=SkillMetadata(os=("darwin",), requires=Requires(bins=("imsg",))))
    remote = StaticRemote(platforms=("darwin",), bins=frozenset({"imsg"}))
    entry = status([skill], remote=remote).skills[0]
    assert entry.eligible
    # Install options follow the local platform only (as in OpenClaw).
    assert entry.install == ()


def test_given_verdicts_are_used_as_they_are(tmp_path: Path) -> None:
    skills = [
        make_skill("ready"),
        make_skill("blocked", metadata=SkillMetadata(requires=Requires(bins=("nope",)))),
    ]
    bins = bins_with(tmp_path, "tool")
    host = Host(platform="linux", env={})
    verdicts = evaluate_all(skills, config=Config.empty(), host=host, bins=bins)
    report = status(skills, host=host, bins=bins, eligibility=verdicts)
    assert [e.eligibility for e in report.skills] == list(verdicts)
    assert all(e.eligibility is v for e, v in zip(report.skills, verdicts, strict=True))
    assert report.to_json() == status(skills, host=host, bins=bins).to_json()
    with pytest.raises(ValueError, match="evaluate_all"):
        status(skills, host=host, bins=bins, eligibility=verdicts[:1])


def test_given_verdicts_are_used_for_the_status_memos_misses(tmp_path: Path) -> None:
    """After an edit the memo computes the edited positions only, each with its given verdict."""
    bins = bins_with(tmp_path)
    host = Host(platform="linux", env={})
    memo, gate_memo = StatusMemo(), SkillMemo[Eligibility]()
    gated = SkillMetadata(requires=Requires(bins=("nope",)))
    config = Config.empty()

    def build(skills: list[Skill]) -> tuple[Any, tuple[Eligibility, ...]]:
        # As the Loader does: an unchanged skill keeps its verdict and its entry.
        verdicts = evaluate_all(skills, config=config, host=host, bins=bins, memo=gate_memo)
        report = status(skills, config, host=host, bins=bins, eligibility=verdicts, memo=memo)
        assert all(e.eligibility is v for e, v in zip(report.skills, verdicts, strict=True))
        return report, verdicts

    skills = [make_skill(f"s{i}") for i in range(8)]
    first, _ = build(skills)
    skills[2], skills[6] = make_skill("s2", metadata=gated), make_skill("s6")
    second, _ = build(skills)
    moved = [
        i for i, (a, b) in enumerate(zip(first.skills, second.skills, strict=True)) if a is not b
    ]
    assert moved == [2, 6] and second.skills[2].status == "needs-setup"
    # Reordered, one added: every skill looked up by id, the misses in the new order.
    build([skills[7], make_skill("new", metadata=gated), *skills[:7]])


def test_given_verdicts_are_found_in_any_order() -> None:
    skills = tuple(make_skill(f"s{i}") for i in range(5))
    verdicts = evaluate_all(
        skills,
        config=Config.empty(),
        host=Host(platform="linux", env={}),
        bins=BinaryLookup({"PATH": ""}, platform="linux"),
    )
    given = _GivenVerdicts(skills, verdicts)
    for i in (1, 3, 0, 4, 2, 2):
        assert given.of(skills[i]) is verdicts[i]
    assert given.of(make_skill("s1")) is None  # an equal skill, not one of these


def test_verdicts_are_reused_for_the_same_skill_objects_only(tmp_path: Path) -> None:
    skill = make_skill("ready")
    memo = SkillMemo[Eligibility]()
    bins = bins_with(tmp_path, "tool")
    host = Host(platform="linux", env={})
    config = Config.empty()
    (first,) = evaluate_all([skill], config=config, host=host, bins=bins, memo=memo)
    (again,) = evaluate_all([skill], config=config, host=host, bins=bins, memo=memo)
    assert again is first
    other = Config.from_mapping({"skills": {"entries": {"ready": {"enabled": False}}}})
    (changed,) = evaluate_all([skill], config=other, host=host, bins=bins, memo=memo)
    assert changed.disabled and not first.disabled


def test_a_memo_stays_within_twice_the_skills_through_many_edits(tmp_path: Path) -> None:
    memo = SkillMemo[Eligibility]()
    bins = bins_with(tmp_path)
    host = Host(platform="linux", env={})
    skills = [make_skill(f"s{i}") for i in range(10)]
    for edit in range(50):
        skills[edit % 10] = make_skill(f"s{edit % 10}")  # a new object for the edited file
        evaluate_all(skills, config=Config.empty(), host=host, bins=bins, memo=memo)
        memo.prune(skills)
        assert len(skills) <= len(memo) <= 2 * len(skills)
    memo.prune(skills[:3])
    assert len(memo) == 3
