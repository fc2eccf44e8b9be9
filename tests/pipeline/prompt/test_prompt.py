"""The catalog formatters, the budget algorithm and the system-prompt section (spec §5).

Test names and docstrings cite the spec §12 "Prompt" and "System prompt" lines.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillbook.base.js import js_trim, utf16_len
from skillbook.diagnostics import Severity
from skillbook.model import InvocationPolicy, Skill, Source
from skillbook.pipeline.prompt.budget import escape_xml
from skillbook.pipeline.prompt.home_paths import PromptSkill, compact_skill_paths, home_prefixes
from skillbook.pipeline.prompt.skills_section import (
    COMPACT_WARNING_OVERHEAD,
    DEFAULT_CHECK_COMMAND,
    DEFAULT_MAX_SKILLS_IN_PROMPT,
    DEFAULT_MAX_SKILLS_PROMPT_CHARS,
    OPENCLAW_CHECK_COMMAND,
    PromptLimits,
    build_prompt,
    format_skills_compact,
    format_skills_for_prompt,
    skills_section,
)
from skillbook.pipeline.snapshot import build_snapshot

HOME = Path("/home/alice")


def skill(
    name: str,
    description: str = "Does things",
    *,
    path: Path | None = None,
    hidden: bool = False,
    source: str = "openclaw-workspace",
) -> Skill:
    base = path if path is not None else HOME / "ws" / "skills" / name
    return Skill.create(
        name,
        description,
        base_dir=base,
        source=source,
        invocation=InvocationPolicy(disable_model_invocation=hidden),
    )


def many(n: int, desc_len: int = 40, prefix: str = "skill") -> list[Skill]:
    return [skill(f"{prefix}-{i:03d}", f"Description {i} " + "d" * desc_len) for i in range(n)]


HEADER = (
    "\n\nThe following skills provide specialized instructions for specific tasks.\n"
    "Use the read tool to load a skill's file when the task matches its description.\n"
    "When a skill file references a relative path, resolve it against the skill directory "
    "(parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n"
    "\n<available_skills>\n"
)


# ----------------------------------------------------------------------- formatters


def test_full_formatter_byte_exact() -> None:
    """Prompt: full formatter output equals the upstream formatter byte-for-byte."""
    out = format_skills_for_prompt([PromptSkill("curl-tool", "Fetches URLs", "~/s/SKILL.md")])
    assert out == (
        HEADER + "  <skill>\n    <name>curl-tool</name>\n    <description>Fetches URLs"
        "</description>\n    <location>~/s/SKILL.md</location>\n  </skill>\n</available_skills>"
    )


def test_oracle_readme_examples_golden() -> None:
    """Prompt: the oracle README's worked example 2, full and truncated, byte for byte."""
    root = Path("/r/demo/skills")
    skills = [
        skill("curl-tool", "Fetches URLs", path=root / "curl-tool"),
        skill("hello-world", "Greets the user & says <hi>.", path=root / "hello-world"),
        skill("hello_world", "Another greeter", path=root / "hello_world"),
        skill("help", "Explains things", path=root / "help"),
        skill("secret", "Only for slash use", path=root / "secret", hidden=True),
    ]
    full = build_prompt(skills, homes=["/r"], check_command=OPENCLAW_CHECK_COMMAND)
    assert "<description>Greets the user &amp; says &lt;hi&gt;.</description>" in full.text
    assert "secret" not in full.text
    assert utf16_len(full.text) == 998
    small = build_prompt(
        skills,
        homes=["/r"],
        limits=PromptLimits(max_chars=800),
        check_command=OPENCLAW_CHECK_COMMAND,
    )
    assert small.text == (
        "⚠️ Skills truncated: included 2 of 4 (compact format, descriptions omitted). Run "
        "`openclaw skills check` to audit.\n\n\nThe following skills provide specialized "
        "instructions for specific tasks.\nUse the read tool to load a skill's file when the "
        "task matches its name.\nWhen a skill file references a relative path, resolve it "
        "against the skill directory (parent of SKILL.md / dirname of the path) and use that "
        "absolute path in tool commands.\n\n<available_skills>\n  <skill>\n    "
        "<name>curl-tool</name>\n    <location>~/demo/skills/curl-tool/SKILL.md</location>\n"
        "  </skill>\n  <skill>\n    <name>hello-world</name>\n    "
        "<location>~/demo/skills/hello-world/SKILL.md</location>\n  </skill>\n"
        "</available_skills>"
    )


def test_formatters_render_every_given_skill() -> None:
    """Prompt: formatters render all given skills (no visibility re-check)."""
    hidden = skill("secret", hidden=True)
    assert "<name>secret</name>" in format_skills_for_prompt([hidden])
    assert "<name>secret</name>" in format_skills_compact([hidden])


def test_compact_omits_description_keeps_name_and_location() -> None:
    """Prompt: compact omits description, keeps name/location."""
    out = format_skills_compact([skill("alpha", "Secret sauce")])
    assert "<name>alpha</name>" in out
    assert f"<location>{HOME}/ws/skills/alpha/SKILL.md</location>" in out
    assert "Secret sauce" not in out and "<description>" not in out
    assert "task matches its name." in out


def test_empty_list_renders_empty_string() -> None:
    """Prompt: empty list → ``""``."""
    assert format_skills_for_prompt([]) == ""
    assert format_skills_compact([]) == ""


def test_xml_escaping() -> None:
    """Prompt: XML escaping (`a<b&c` → `a&lt;b&amp;c`), all five specials, & first."""
    assert escape_xml("a<b&c") == "a&lt;b&amp;c"
    assert escape_xml("&lt; \"x\" 'y' >") == "&amp;lt; &quot;x&quot; &apos;y&apos; &gt;"
    assert escape_xml("\x01\t control") == "\x01\t control"
    out = format_skills_for_prompt([PromptSkill("a<b&c", "d\"'", "/p&q")])
    assert "<name>a&lt;b&amp;c</name>" in out
    assert "<description>d&quot;&apos;</description>" in out
    assert "<location>/p&amp;q</location>" in out


def test_compact_of_fifty_skills_is_small() -> None:
    """Prompt: compact of 50 skills < 6000 chars."""
    skills = [PromptSkill(f"skill-{i}", "x" * 200, f"~/s/skill-{i}/SKILL.md") for i in range(50)]
    assert len(format_skills_compact(skills)) < 6000


def test_exact_size_formulas() -> None:
    """§5.1/§5.2 sizes: 368 + Σ(97 + …) full, 361 + Σ(65 + …) compact, in UTF-16 units."""
    items = [PromptSkill("n&m", "d🦀<", "~/x/SKILL.md"), PromptSkill("b", "", "/abs")]
    full = 368 + sum(
        97
        + utf16_len(escape_xml(s.name))
        + utf16_len(escape_xml(s.description))
        + utf16_len(escape_xml(s.location))
        for s in items
    )
    compact = 361 + sum(
        65 + utf16_len(escape_xml(s.name)) + utf16_len(escape_xml(s.location)) for s in items
    )
    assert utf16_len(format_skills_for_prompt(items)) == full
    assert utf16_len(format_skills_compact(items)) == compact


# ----------------------------------------------------------------------- budget tiers


def test_constants() -> None:
    assert DEFAULT_MAX_SKILLS_IN_PROMPT == 150
    assert DEFAULT_MAX_SKILLS_PROMPT_CHARS == 30_000
    assert COMPACT_WARNING_OVERHEAD == 150
    assert PromptLimits() == PromptLimits(150, 30_000)


def test_disable_model_invocation_hidden() -> None:
    """Prompt: `disable-model-invocation: true` skill hidden from the prompt (kept out of
    resolved), but present in ``snapshot.skills``; legacy entries likewise hidden."""
    skills = [skill("shown"), skill("secret", hidden=True)]
    cat = build_prompt(skills)
    assert "secret" not in cat.text
    assert [s.name for s in cat.resolved] == ["shown"]
    assert cat.omitted == ()
    snap = build_snapshot(skills, cat)
    assert [s.name for s in snap.skills] == ["shown", "secret"]


def test_tier1_under_budget_full_no_warning() -> None:
    """Prompt: Tier 1: under budget → full, no `⚠️`."""
    cat = build_prompt(many(5))
    assert "⚠️" not in cat.text
    assert not cat.compact and not cat.truncated
    assert cat.text.count("<description>") == 5
    assert cat.diagnostics == ()


def test_tier2_compact_fits() -> None:
    """Prompt: Tier 2: full over, compact fits (with 150 reserve) → compact, note
    `compact format (descriptions omitted)`, no `included`, all skills present."""
    skills = many(10, desc_len=200)
    full_len = utf16_len(format_skills_for_prompt(skills))
    cat = build_prompt(skills, limits=PromptLimits(max_chars=full_len - 1))
    assert cat.compact and not cat.truncated
    assert cat.text.startswith(
        "⚠️ Skills catalog using compact format (descriptions omitted). "
        "Run `skillbook check` to audit.\n"
    )
    assert "included" not in cat.text
    assert all(f"<name>{s.name}</name>" in cat.text for s in skills)
    assert [d.code for d in cat.diagnostics] == ["prompt.compact"]
    assert cat.diagnostics[0].severity is Severity.INFO


def test_full_exactly_at_budget_is_full() -> None:
    skills = many(10, desc_len=200)
    full_len = utf16_len(format_skills_for_prompt(skills))
    cat = build_prompt(skills, limits=PromptLimits(max_chars=full_len))
    assert not cat.compact and cat.text == format_skills_for_prompt(skills)


def test_tier3_binary_search() -> None:
    """Prompt: Tier 3: compact over → binary search, `included X of Y` with 0 < X < Y."""
    skills = many(40)
    compact_len = utf16_len(format_skills_compact(skills))
    cat = build_prompt(skills, limits=PromptLimits(max_chars=compact_len // 2))
    assert cat.compact and cat.truncated
    x = len(cat.kept)
    assert 0 < x < 40
    assert f"included {x} of 40 (compact format, descriptions omitted)" in cat.text
    # The largest prefix that fits, and one more would not.
    budget = compact_len // 2 - COMPACT_WARNING_OVERHEAD
    assert utf16_len(format_skills_compact(skills[:x])) <= budget
    assert utf16_len(format_skills_compact(skills[: x + 1])) > budget


def test_count_truncation_plus_compact() -> None:
    """Prompt: count truncation + compact: `included 10 of 30` + compact note."""
    skills = many(30, desc_len=300)
    ten = utf16_len(format_skills_for_prompt(skills[:10]))
    cat = build_prompt(skills, limits=PromptLimits(max_skills=10, max_chars=ten - 1))
    assert "included 10 of 30 (compact format, descriptions omitted)" in cat.text
    assert [s.name for s in cat.omitted] == [s.name for s in skills[10:]]


def test_extreme_budget() -> None:
    """Prompt: Extreme budget (10) → `included 0 of 1`, skill absent."""
    cat = build_prompt([skill("solo")], limits=PromptLimits(max_chars=10))
    assert cat.text == (
        "⚠️ Skills truncated: included 0 of 1 (compact format, descriptions omitted). "
        "Run `skillbook check` to audit."
    )
    assert cat.kept == () and [s.name for s in cat.omitted] == ["solo"]


def test_count_only_truncation() -> None:
    """Prompt: Count-only truncation: `included 5 of 20`, no `compact`, descriptions present."""
    cat = build_prompt(many(20), limits=PromptLimits(max_skills=5))
    assert "⚠️ Skills truncated: included 5 of 20. Run `skillbook check` to audit.\n" in cat.text
    assert "compact" not in cat.text
    assert cat.text.count("<description>") == 5
    assert not cat.compact and cat.truncated


def test_compact_reserve_forces_dropping() -> None:
    """Prompt: Compact reserve: budget = compactLen + 50 forces dropping (`included`)."""
    skills = many(10, desc_len=200)
    compact_len = utf16_len(format_skills_compact(skills))
    cat = build_prompt(skills, limits=PromptLimits(max_chars=compact_len + 50))
    assert "included 9 of 10" in cat.text
    exact = build_prompt(skills, limits=PromptLimits(max_chars=compact_len + 150))
    assert exact.compact and not exact.truncated


def test_eight_long_descriptions_budget_500() -> None:
    """Prompt: 8 skills × 800-char descriptions with budget 500 → `⚠️ Skills truncated`,
    prompt < 2000 chars."""
    skills = [skill(f"long-{i}", "x" * 800) for i in range(8)]
    cat = build_prompt(skills, limits=PromptLimits(max_chars=500))
    assert cat.text.startswith("⚠️ Skills truncated")
    assert utf16_len(cat.text) < 2000


def test_budget_uses_home_compacted_paths() -> None:
    """Prompt: budget uses `~`-compacted paths; output contains `~/` and not the home path;
    `snapshot.resolvedSkills` keep absolute paths."""
    skills = many(10)
    compact_len = utf16_len(format_skills_compact(compact_skill_paths(skills, [HOME])))
    absolute_len = utf16_len(format_skills_compact(skills))
    assert absolute_len > compact_len
    # A budget that only the ~-compacted catalog meets.
    limits = PromptLimits(max_chars=compact_len + COMPACT_WARNING_OVERHEAD)
    cat = build_prompt(skills, limits=limits, homes=[HOME])
    assert not cat.truncated and "~/ws/skills/skill-000/SKILL.md" in cat.text
    assert str(HOME) not in cat.text
    assert build_prompt(skills, limits=limits).truncated
    assert all(s.file_path.is_absolute() for s in cat.resolved)
    snap = build_snapshot(skills, cat)
    assert snap.to_json()["resolvedSkills"][0]["filePath"] == f"{HOME}/ws/skills/skill-000/SKILL.md"


def test_paths_outside_home_stay_absolute() -> None:
    """Prompt: paths under home are shown with `~/`; others stay absolute."""
    inside = skill("in")
    outside = skill("out", path=Path("/opt/skills/out"))
    cat = build_prompt([inside, outside], homes=[HOME])
    assert "<location>~/ws/skills/in/SKILL.md</location>" in cat.text
    assert "<location>/opt/skills/out/SKILL.md</location>" in cat.text


def test_snapshot_prompt_equals_build_prompt_with_remote_note() -> None:
    """Prompt: snapshot prompt equals the built prompt for same inputs (remote note, limits)."""
    skills = many(5)
    limits = PromptLimits(max_skills=3)
    note = "  Remote macOS node available. Run macOS-only skills via exec host=node on that node.\n"
    cat = build_prompt(skills, limits=limits, remote_note=note)
    assert cat.text.startswith(js_trim(note) + "\n⚠️ Skills truncated: included 3 of 5.")
    assert build_snapshot(skills, cat).prompt == cat.text
    only_note = build_prompt([], remote_note=note)
    assert only_note.text == js_trim(note)
    assert build_prompt([], remote_note="   ").text == ""


def test_check_command_is_a_parameter() -> None:
    cat = build_prompt(many(3), limits=PromptLimits(max_skills=1), check_command="x y")
    assert "Run `x y` to audit." in cat.text
    assert DEFAULT_CHECK_COMMAND == "skillbook check"
    assert OPENCLAW_CHECK_COMMAND == "openclaw skills check"


def test_zero_and_negative_counts() -> None:
    cat = build_prompt(many(3), limits=PromptLimits(max_skills=0))
    assert cat.text == "⚠️ Skills truncated: included 0 of 3. Run `skillbook check` to audit."
    assert build_prompt(many(3), limits=PromptLimits(max_skills=-4)).text == cat.text


def test_nothing_visible_is_empty() -> None:
    assert build_prompt([]).text == ""
    assert build_prompt([skill("s", hidden=True)]).text == ""
    # OpenClaw still writes its note when the budget is negative (compact of nothing > -150).
    assert "included 0 of 0" in build_prompt([], limits=PromptLimits(max_chars=-1)).text


def test_truncation_is_never_silent() -> None:
    skills = many(12)
    cat = build_prompt(skills, limits=PromptLimits(max_skills=10, max_chars=1200))
    (trunc,) = [d for d in cat.diagnostics if d.code == "prompt.truncated"]
    assert trunc.severity is Severity.WARNING
    for s in cat.omitted:
        assert s.name in trunc.message
    assert "maxSkillsInPrompt" in trunc.message and "maxSkillsPromptChars" in trunc.message
    assert {s.name for s in cat.kept} | {s.name for s in cat.omitted} == {s.name for s in skills}


# ----------------------------------------------------------------------- priority (opt-in)


def test_priority_keeps_user_skills_and_renders_in_load_order() -> None:
    bundled = [skill(f"b{i}", source=Source.BUNDLED) for i in range(4)]
    extra = [skill("x0", source=Source.EXTRA)]
    user = [
        skill("managed", source=Source.MANAGED),
        skill("personal", source=Source.PERSONAL),
        skill("project", source=Source.PROJECT),
        skill("ws", source=Source.WORKSPACE),
    ]
    skills = [*extra, *bundled, *user]
    plain = build_prompt(skills, limits=PromptLimits(max_skills=4))
    assert [s.name for s in plain.kept] == ["x0", "b0", "b1", "b2"]
    ranked = build_prompt(skills, limits=PromptLimits(max_skills=5), priority=True)
    assert [s.name for s in ranked.kept] == ["x0", "managed", "personal", "project", "ws"]
    assert "included 5 of 9" in ranked.text
    # Render order is load order: the extra skill comes first.
    assert ranked.text.index("<name>x0</name>") < ranked.text.index("<name>managed</name>")
    # By size too: the cut of the compact prefix follows the priority order.
    budget = utf16_len(format_skills_compact(user)) + COMPACT_WARNING_OVERHEAD
    by_size = build_prompt(skills, limits=PromptLimits(max_chars=budget), priority=True)
    assert [s.name for s in by_size.kept] == [s.name for s in user]


# ----------------------------------------------------------------------- home prefixes


def test_compact_skill_paths_longest_home_first() -> None:
    items = [
        PromptSkill("a", "", "/home/alice/sub/x/SKILL.md"),
        PromptSkill("b", "", "/home/alicex/y"),
    ]
    out = compact_skill_paths(items, ["/home/alice", "/home/alice/sub", "/home/alice"])
    assert [p.location for p in out] == ["~/x/SKILL.md", "/home/alicex/y"]
    assert compact_skill_paths(items, []) == items


def test_compact_skill_paths_home_with_trailing_separator() -> None:
    out = compact_skill_paths([PromptSkill("a", "", "/x/y")], ["/"])
    assert out[0].location == "~/x/y"


def test_home_prefixes_adds_realpaths(tmp_path: Path) -> None:
    real = tmp_path / "real-home"
    real.mkdir()
    link = tmp_path / "link-home"
    link.symlink_to(real)
    got = home_prefixes(link, tmp_path / "missing")
    assert got == tuple(
        sorted(
            dict.fromkeys([str(link), str(tmp_path / "missing"), os.path.realpath(real)]),
            key=len,
            reverse=True,
        )
    )
    assert home_prefixes(None, "") == ()
    skills = [skill("r", path=real / "skills" / "r")]
    assert "~/skills/r/SKILL.md" in build_prompt(skills, homes=got).text


# ----------------------------------------------------------------------- system prompt


def test_skills_section_present_and_exact() -> None:
    """System prompt: skills section present when a prompt is given; contains the
    rate-limit guidance line; the prompt is trimmed and empty lines disappear."""
    catalog = build_prompt([skill("alpha")]).text
    section = skills_section(catalog)
    assert section == "\n".join(
        [
            "## Skills (mandatory)",
            "Before replying: scan <available_skills> <description> entries.",
            "- If exactly one skill clearly applies: read its SKILL.md at <location> with "
            "`read`, then follow it.",
            "- If multiple could apply: choose the most specific one, then read/follow it.",
            "- If none clearly apply: do not read any SKILL.md.",
            "Constraints: never read more than one skill up front; only read after selecting.",
            "- When a skill drives external API writes, assume rate limits: prefer fewer larger "
            "writes, avoid tight one-item loops, serialize bursts when possible, and respect "
            "429/Retry-After.",
            catalog.strip(),
        ]
    )
    assert section.endswith("</available_skills>")
    assert "\n\n\n" not in section.split("The following")[0]


def test_skills_section_absent_when_blank() -> None:
    """System prompt: absent when the prompt is missing or blank."""
    assert skills_section("") == ""
    assert skills_section(" \n\t\ufeff ") == ""


def test_skills_section_read_tool_casing() -> None:
    """System prompt: read tool casing preserved (`` `Read` ``); default `` `read` ``."""
    assert "with `Read`, then follow it." in skills_section("x", read_tool="Read")
    assert "with `read`, then follow it." in skills_section("x")


def test_js_trim_matches_javascript() -> None:
    assert js_trim("\ufeff\u00a0 x \u2028") == "x"
    assert js_trim("\x1c x \x1f") == "\x1c x \x1f"  # str.strip() would remove these


@pytest.mark.parametrize("max_chars", [0, 1, 360, 361, 511, 512, 10_000])
def test_kept_and_omitted_partition_resolved(max_chars: int) -> None:
    skills = [*many(6), skill("hidden", hidden=True)]
    cat = build_prompt(skills, limits=PromptLimits(max_chars=max_chars))
    assert cat.resolved == tuple(skills[:6])
    assert sorted(cat.kept + cat.omitted, key=lambda s: s.name) == list(cat.resolved)


def test_catalog_memo_reuses_a_catalog_only_for_the_same_skills_and_settings() -> None:
    from skillbook.pipeline.prompt.skills_section import CatalogMemo

    skills = [Skill.create("a", "first", base_dir=Path("/ws/skills/a"))]
    memo = CatalogMemo()
    first = memo.build(skills, check_command="x")
    assert memo.build(list(skills), check_command="x") is first
    assert memo.build(skills, check_command="y") is not first
    copy = [Skill.create("a", "first", base_dir=Path("/ws/skills/a"))]
    assert memo.build(copy, check_command="y").text == first.text
