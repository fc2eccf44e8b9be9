"""Differential tests: our catalog and snapshot against OpenClaw's own code (the oracle).

Each scenario writes a workspace of SKILL.md files under the request's ``home`` (so
OpenClaw shortens paths to ``~/``), asks the oracle's ``prompt`` op for several
limits in one batch, and compares the text byte for byte with :func:`build_prompt`
on hand-built skills (name, description and path known from the files written).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from factories import write_skill
from oracle_support import Oracle, run_batch

from skillbook.base.js import utf16_len
from skillbook.model import (
    InvocationPolicy,
    Requires,
    Skill,
    SkillMetadata,
)
from skillbook.pipeline.prompt.home_paths import compact_skill_paths, home_prefixes
from skillbook.pipeline.prompt.skills_section import (
    OPENCLAW_CHECK_COMMAND,
    PromptLimits,
    build_prompt,
    format_skills_compact,
    format_skills_for_prompt,
)
from skillbook.pipeline.snapshot import build_snapshot

pytestmark = pytest.mark.oracle

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _needs_oracle(oracle: Oracle) -> None:
    """Every test here runs OpenClaw's code; the ``oracle`` fixture finds it or skips."""


def run_oracle(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return run_batch(requests)


# --------------------------------------------------------------------------- fixtures


def make_skill(
    name: str,
    description: str,
    skill_dir: Path,
    *,
    hidden: bool = False,
    metadata: SkillMetadata | None = None,
) -> Skill:
    return Skill.create(
        name,
        description,
        base_dir=skill_dir,
        source="openclaw-workspace",
        metadata=metadata,
        invocation=InvocationPolicy(disable_model_invocation=hidden),
    )


def write_workspace(
    root: Path,
    specs: Sequence[tuple[str, str]],
    *,
    hidden: frozenset[str] = frozenset(),
    metadata: dict[str, tuple[str, SkillMetadata]] | None = None,
) -> list[Skill]:
    """Write ``root/skills/<dNNN>/SKILL.md`` per (name, description); return the skills.

    Folder names ``d000``, ``d001``… sort the same in ICU collation and code-unit
    order, so OpenClaw loads them in the order of ``specs``.
    """
    metadata = metadata or {}
    skills: list[Skill] = []
    for i, (name, desc) in enumerate(specs):
        assert desc == desc.strip(), "OpenClaw trims descriptions; keep the fixtures trimmed"
        meta = metadata.get(name)
        d = write_skill(
            root / "skills" / f"d{i:03d}",
            json.dumps(name, ensure_ascii=False),
            json.dumps(desc, ensure_ascii=False),
            body="\nBody.\n",
            disable_model_invocation=True if name in hidden else None,
            raw=f"metadata: {meta[0]}" if meta is not None else "",
        )
        skills.append(
            make_skill(name, desc, d, hidden=name in hidden, metadata=meta[1] if meta else None)
        )
    return skills


def prompt_request(
    workspace: Path, home: Path, limits: dict[str, int] | None = None, **extra: Any
) -> dict[str, Any]:
    req: dict[str, Any] = {
        "op": "prompt",
        "workspace": str(workspace),
        "home": str(home),
        "omitMeta": True,
    }
    if limits:
        req["config"] = {"skills": {"limits": limits}}
    req.update(extra)
    return req


def ours(
    skills: Sequence[Skill],
    home: Path,
    limits: dict[str, int] | None = None,
    remote_note: str | None = None,
) -> str:
    lim = limits or {}
    catalog = build_prompt(
        skills,
        limits=PromptLimits(
            max_skills=lim.get("maxSkillsInPrompt", 150),
            max_chars=lim.get("maxSkillsPromptChars", 30_000),
        ),
        homes=home_prefixes(home, home),
        remote_note=remote_note,
        check_command=OPENCLAW_CHECK_COMMAND,
    )
    return catalog.text


def compare(
    skills: Sequence[Skill],
    workspace: Path,
    home: Path,
    limit_sets: Sequence[dict[str, int] | None],
) -> list[str]:
    """Run every limit set through both; return the oracle prompts (all asserted equal)."""
    results = run_oracle([prompt_request(workspace, home, lim) for lim in limit_sets])
    prompts: list[str] = []
    diffs: list[str] = []
    for lim, res in zip(limit_sets, results, strict=True):
        theirs = res["result"]["prompt"]
        mine = ours(skills, home, lim)
        if mine != theirs:
            diffs.append(f"limits={lim}: {first_difference(theirs, mine)}")
        prompts.append(theirs)
    assert not diffs, "\n".join(diffs)
    return prompts


def first_difference(theirs: str, mine: str) -> str:
    i = next(
        (k for k, (a, b) in enumerate(zip(theirs, mine, strict=False)) if a != b),
        min(len(theirs), len(mine)),
    )
    lo = max(0, i - 60)
    return (
        f"differ at {i} (lengths {len(theirs)} vs {len(mine)}):\n"
        f"  oracle ...{theirs[lo : i + 60]!r}\n  ours   ...{mine[lo : i + 60]!r}"
    )


def lengths(skills: Sequence[Skill], home: Path) -> tuple[int, int]:
    shown = compact_skill_paths(skills, home_prefixes(home, home))
    return (
        utf16_len(format_skills_for_prompt(shown)),
        utf16_len(format_skills_compact(shown)),
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


# --------------------------------------------------------------------------- scenarios


def test_entries_match_hand_built_skills(home: Path) -> None:
    """Sanity: OpenClaw loads the names, descriptions and paths we assume."""
    ws = home / "ws"
    specs = [("alpha", "A & b <c> \"q\" 'a'"), ("béta-🎉", "emoji 🎉🎉 and ü"), ("gamma", "x")]
    skills = write_workspace(ws, specs)
    res = run_oracle([{"op": "entries", "workspace": str(ws), "home": str(home), "omitMeta": True}])
    got = [
        (e["skill"]["name"], e["skill"]["description"], e["skill"]["filePath"])
        for e in res[0]["result"]["entries"]
    ]
    assert got == [(s.name, s.description, str(s.file_path)) for s in skills]


def test_tiers_full_compact_binary_search_count(home: Path) -> None:
    """Prompt: Tier 1 / Tier 2 / Tier 3, count-only and count + compact, compact reserve."""
    ws = home / "ws"
    specs = [
        (f"skill-{i:02d}", f"Does thing number {i} {'x' * (i * 7)}".strip()) for i in range(30)
    ]
    skills = write_workspace(ws, specs)
    full, compact = lengths(skills, home)
    ten_full, ten_compact = lengths(skills[:10], home)
    five_compact = lengths(skills[:5], home)[1]
    limit_sets: list[dict[str, int] | None] = [
        None,  # tier 1: the default budget holds everything
        {"maxSkillsPromptChars": full},  # exactly at the budget: full
        {"maxSkillsPromptChars": full - 1},  # tier 2: compact fits
        {"maxSkillsPromptChars": compact + 150},  # compact exactly at budget - reserve
        {"maxSkillsPromptChars": compact + 149},  # one short: binary search drops one
        {"maxSkillsPromptChars": compact + 50},  # compact reserve forces dropping
        {"maxSkillsPromptChars": compact // 2},  # tier 3: binary search
        {"maxSkillsPromptChars": five_compact + 150},  # exactly five fit
        {"maxSkillsInPrompt": 5},  # count-only truncation
        {"maxSkillsInPrompt": 10, "maxSkillsPromptChars": ten_full - 1},  # count + compact
        {"maxSkillsInPrompt": 10, "maxSkillsPromptChars": ten_compact + 100},  # count + search
        {"maxSkillsInPrompt": 0},  # nothing by count
        {"maxSkillsInPrompt": -3},  # negative count clamps to 0
        {"maxSkillsPromptChars": 10},  # extreme
        {"maxSkillsPromptChars": 0},
        {"maxSkillsPromptChars": -5},
    ]
    prompts = compare(skills, ws, home, limit_sets)
    assert "⚠️" not in prompts[0] and "⚠️" not in prompts[1]
    assert prompts[2].startswith("⚠️ Skills catalog using compact format")
    assert "included 29 of 30" in prompts[4]
    assert "included 5 of 30 (compact" in prompts[7]
    assert "included 5 of 30. Run" in prompts[8]
    assert "included 10 of 30 (compact format, descriptions omitted)" in prompts[9]
    assert "~/ws/skills/d000/SKILL.md" in prompts[0] and str(home) not in prompts[0]


def test_extreme_budget_single_skill(home: Path) -> None:
    """Prompt: Extreme budget (10) → `included 0 of 1`, skill absent."""
    ws = home / "ws"
    skills = write_workspace(ws, [("solo", "Only one")])
    prompts = compare(skills, ws, home, [{"maxSkillsPromptChars": 10}])
    assert prompts[0].startswith("⚠️ Skills truncated: included 0 of 1 (compact format")
    assert "solo" not in prompts[0]


def test_eight_long_descriptions_budget_500(home: Path) -> None:
    """Prompt: 8 skills × 800-char descriptions with budget 500 → truncated, < 2000 chars."""
    ws = home / "ws"
    skills = write_workspace(ws, [(f"long-{i}", ("Lorem ipsum " * 70)[:800]) for i in range(8)])
    prompts = compare(skills, ws, home, [{"maxSkillsPromptChars": 500}])
    assert prompts[0].startswith("⚠️ Skills truncated")
    assert utf16_len(prompts[0]) < 2000


def test_astral_emoji_and_xml_specials(home: Path) -> None:
    """UTF-16 counting: budgets set to the exact code-unit length, with astral characters."""
    ws = home / "ws"
    specs = [
        (f"emoji-{i}-{'🦀' * i}", f"Crabs {'🦀🎉' * (i + 3)} & <tags> \"quoted\" 'single' {i}")
        for i in range(12)
    ]
    skills = write_workspace(ws, specs)
    full, compact = lengths(skills, home)
    six_compact = lengths(skills[:6], home)[1]
    assert full != len(format_skills_for_prompt(compact_skill_paths(skills, [str(home)])))
    limit_sets: list[dict[str, int] | None] = [
        None,
        {"maxSkillsPromptChars": full},
        {"maxSkillsPromptChars": full - 1},
        {"maxSkillsPromptChars": compact + 150},
        {"maxSkillsPromptChars": compact + 149},
        {"maxSkillsPromptChars": six_compact + 150},
        {"maxSkillsPromptChars": six_compact + 149},
    ]
    prompts = compare(skills, ws, home, limit_sets)
    assert "&amp; &lt;tags&gt; &quot;quoted&quot; &apos;single&apos;" in prompts[0]
    assert "included 6 of 12" in prompts[5] and "included 5 of 12" in prompts[6]


def test_two_hundred_skills(home: Path) -> None:
    """Default limits on 200 skills: the count limit (150) and the 30 000 budget."""
    ws = home / "ws"
    skills = write_workspace(
        ws, [(f"bulk-{i:03d}", f"Bulk skill {i} {'d' * (i % 40)}".strip()) for i in range(200)]
    )
    prompts = compare(
        skills, ws, home, [None, {"maxSkillsPromptChars": 100_000}, {"maxSkillsInPrompt": 200}]
    )
    assert "of 200" in prompts[0]


def test_hidden_skills_and_remote_note(home: Path) -> None:
    """Prompt: `disable-model-invocation` skills hidden; the remote note is prepended."""
    ws = home / "ws"
    specs = [("shown", "Visible"), ("secret", "Slash only"), ("also", "Visible too")]
    skills = write_workspace(ws, specs, hidden=frozenset({"secret"}))
    note = "  Remote macOS node available (mac). Run macOS-only skills via exec host=node.  "
    reqs = [
        prompt_request(ws, home),
        prompt_request(ws, home, eligibility={"remote": {"platforms": ["darwin"], "note": note}}),
        prompt_request(
            ws,
            home,
            {"maxSkillsPromptChars": 300},
            eligibility={"remote": {"platforms": ["darwin"], "note": note}},
        ),
    ]
    res = run_oracle(reqs)
    assert res[0]["result"]["prompt"] == ours(skills, home)
    assert res[1]["result"]["prompt"] == ours(skills, home, remote_note=note)
    assert res[2]["result"]["prompt"] == ours(
        skills, home, {"maxSkillsPromptChars": 300}, remote_note=note
    )
    assert "secret" not in res[0]["result"]["prompt"]


def test_only_hidden_skills_and_negative_budget(home: Path) -> None:
    """No visible skill: empty prompt; a negative budget still yields OpenClaw's note."""
    ws = home / "ws"
    skills = write_workspace(ws, [("secret", "Slash only")], hidden=frozenset({"secret"}))
    prompts = compare(skills, ws, home, [None, {"maxSkillsPromptChars": -1}])
    assert prompts[0] == ""


def test_paths_outside_home_stay_absolute(tmp_path: Path) -> None:
    """Prompt: paths under home are shown with `~/`; others stay absolute."""
    home = tmp_path / "home"
    home.mkdir()
    ws = tmp_path / "elsewhere"
    skills = write_workspace(ws, [("far", "Far away"), ("near", "Also far")])
    full, compact = lengths(skills, home)
    prompts = compare(
        skills,
        ws,
        home,
        [None, {"maxSkillsPromptChars": full - 1}, {"maxSkillsPromptChars": compact + 149}],
    )
    assert str(ws / "skills" / "d000" / "SKILL.md") in prompts[0]


def test_snapshot_matches_oracle(home: Path) -> None:
    """Snapshot: skills (incl. hidden) with primaryEnv/requiredEnv, filter, version, resolvedSkills."""
    ws = home / "ws"
    meta = {
        "keyed": (
            '{"openclaw": {"primaryEnv": "KEYED_API_KEY", "requires": {"env": ["KEYED_API_KEY"]}}}',
            SkillMetadata(primary_env="KEYED_API_KEY", requires=Requires(env=("KEYED_API_KEY",))),
        ),
        "binned": (
            '{"openclaw": {"requires": {"bins": ["curl"]}}}',
            SkillMetadata(requires=Requires(bins=("curl",))),
        ),
        "emoji": ('{"openclaw": {"emoji": "x"}}', SkillMetadata(emoji="x")),
    }
    specs = [
        ("keyed", "Needs a key"),
        ("binned", "Needs curl"),
        ("emoji", "Has emoji"),
        ("secret", "Hidden"),
        ("plain", "Plain"),
    ]
    skills = write_workspace(ws, specs, hidden=frozenset({"secret"}), metadata=meta)
    base = {
        "op": "snapshot",
        "workspace": str(ws),
        "home": str(home),
        "omitMeta": True,
        "bins": ["curl"],
        "env": {"KEYED_API_KEY": "k"},
    }
    res = run_oracle(
        [
            base,
            {**base, "snapshotVersion": 42, "skillFilter": [" plain ", "secret", "keyed"]},
        ]
    )
    homes = home_prefixes(home, home)

    catalog = build_prompt(skills, homes=homes, check_command=OPENCLAW_CHECK_COMMAND)
    snap = build_snapshot(skills, catalog, skill_filter=None, version=None)
    assert snap.to_json() == res[0]["result"]["snapshot"]

    filtered = [s for s in skills if s.name in {"plain", "secret", "keyed"}]
    catalog = build_prompt(filtered, homes=homes, check_command=OPENCLAW_CHECK_COMMAND)
    snap = build_snapshot(filtered, catalog, skill_filter=("plain", "secret", "keyed"), version=42)
    assert snap.to_json() == res[1]["result"]["snapshot"]


def test_multiline_and_control_characters(home: Path) -> None:
    """Descriptions with newlines, tabs and control characters pass through unescaped."""
    ws = home / "ws"
    specs = [("multi", "line one\nline two\ttabbed"), ("ctl", "bell \x07 and nul-free")]
    skills = write_workspace(ws, specs)
    full, _ = lengths(skills, home)
    compare(skills, ws, home, [None, {"maxSkillsPromptChars": full - 1}])


def test_home_through_symlink(tmp_path: Path) -> None:
    """§5.4: the realpath of a symlinked home is a prefix too (workspace given by real path)."""
    real = tmp_path / "real-home"
    real.mkdir()
    link = tmp_path / "link-home"
    link.symlink_to(real)
    ws = real / "ws"
    skills = write_workspace(ws, [("one", "First"), ("two", "Second")])
    results = run_oracle([prompt_request(ws, link)])
    theirs = results[0]["result"]["prompt"]
    assert "<location>~/ws/skills/d000/SKILL.md</location>" in theirs
    mine = ours(skills, link)
    assert mine == theirs, first_difference(theirs, mine)
