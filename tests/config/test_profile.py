"""Compat profiles: choosing one, and the rules each stage reads from it (fast lane).

The comparisons against both OpenClaw releases are in ``test_compat_oracle.py`` and
``test_oracle_catalog_latest.py``; these tests pin the same rules without the oracle.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from factories import isolated_env, write_skill

from skillbook import load
from skillbook.config.file import Config
from skillbook.config.profile import (
    DEFAULT_PROFILE,
    OPENCLAW_2026_4,
    OPENCLAW_2026_9,
    PROFILE_NAMES,
    profile_of,
)
from skillbook.errors import ConfigError
from skillbook.model import Skill, SkillMetadata
from skillbook.pipeline.book import Loader
from skillbook.pipeline.commands.specs import build_command_specs
from skillbook.pipeline.parse.frontmatter_rules import recover_freeform
from skillbook.pipeline.parse.manifest import parse_install_spec
from skillbook.pipeline.parse.skill_file import parse_skill_text
from skillbook.pipeline.prompt.budget import Entry, bounded_catalog, shorten_description
from skillbook.pipeline.prompt.home_paths import KeptPaths, compact_skill_paths
from skillbook.pipeline.prompt.skills_section import PromptLimits, build_prompt

NEW = OPENCLAW_2026_9


# ------------------------------------------------------------------ choosing a profile


def test_default_is_2026_4_and_names_are_known() -> None:
    assert DEFAULT_PROFILE is OPENCLAW_2026_4
    assert PROFILE_NAMES == ("openclaw-2026.4", "openclaw-2026.9")
    assert profile_of(None) is OPENCLAW_2026_4
    assert profile_of("openclaw-2026.9") is NEW
    assert profile_of(NEW) is NEW
    with pytest.raises(ValueError, match=r"openclaw-2026\.4, openclaw-2026\.9"):
        profile_of("openclaw-2027.1")


def test_config_key_is_validated_with_its_path() -> None:
    assert Config.from_mapping({"skills": {"compat": "openclaw-2026.9"}}).skills.compat == (
        "openclaw-2026.9"
    )
    with pytest.raises(ConfigError, match=r"skills\.compat: expected one of"):
        Config.from_mapping({"skills": {"compat": "2026.9"}})


def test_argument_beats_config_and_load_takes_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_skill(ws / "skills" / "a", "zeta")
    write_skill(ws / "skills" / "b", "alpha")
    cfg = Config.from_mapping({"skills": {"compat": "openclaw-2026.9"}})
    env = isolated_env(tmp_path)
    by_config = Loader(ws, config=cfg, env=env, cwd=tmp_path).load()
    assert by_config.profile is NEW
    assert [s.name for s in by_config.skills] == ["alpha", "zeta"]  # sorted by name
    by_arg = Loader(ws, config=cfg, env=env, cwd=tmp_path, compat="openclaw-2026.4").load()
    assert by_arg.profile is OPENCLAW_2026_4
    assert [s.name for s in by_arg.skills] == ["zeta", "alpha"]  # folders a, b: first seen
    assert load(ws, env=env, compat="openclaw-2026.9").profile is NEW


# ------------------------------------------------------------------ catalog


def test_default_budget_and_wording_follow_the_profile(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_skill(ws / "skills" / "one")
    env = isolated_env(tmp_path)
    old = Loader(ws, env=env, cwd=tmp_path).load()
    new = Loader(ws, env=env, cwd=tmp_path, compat=NEW).load()
    assert "Use the read tool to load a skill's file when" in old.prompt
    assert "Read a skill's file at its listed location when the task matches its description" in (
        new.prompt
    )


def test_bounded_catalog_shortens_descriptions_before_omitting_them() -> None:
    entries = [Entry(f"s{i}", "word " * 60, f"/x/s{i}/SKILL.md") for i in range(4)]
    kwargs = {
        "max_skills": 150,
        "remote_note": None,
        "read_full": "FULL",
        "read_compact": "NAME",
        "read_shortened": "NAME OR DESC",
        "check_command": "check",
    }
    full = bounded_catalog(entries, max_chars=100_000, **kwargs)  # type: ignore[arg-type]
    assert not full.compact and "FULL" in full.text
    short = bounded_catalog(entries, max_chars=1400, **kwargs)  # type: ignore[arg-type]
    assert short.compact and 4 <= short.description_chars < 220
    assert "descriptions shortened" in short.text and "NAME OR DESC" in short.text
    assert len(short.text) <= 1400
    bare = bounded_catalog(entries, max_chars=700, **kwargs)  # type: ignore[arg-type]
    assert bare.description_chars == 0 and "<description>" not in bare.text
    assert len(bare.text) <= 700


def test_shorten_description_normalises_spaces_and_keeps_pairs_whole() -> None:
    assert shorten_description("a  b\n c", 10) == "a b c"
    assert shorten_description("abcdefghij", 8) == "abcde..."
    assert shorten_description("abc def", 3) == "abc"
    assert shorten_description("ab\U0001f389cd", 6) == "ab\U0001f389cd"  # 6 UTF-16 units
    assert shorten_description("ab\U0001f389cd", 5) == "ab..."  # never half a pair


def test_remote_note_counts_in_2026_9_only(tmp_path: Path) -> None:
    skills = [Skill.create(f"s{i}", "d" * 200, base_dir=tmp_path / f"s{i}") for i in range(3)]
    note = "N" * 200
    full = len(build_prompt(skills, profile=NEW).text)
    limits = PromptLimits(max_chars=full + 10)
    old = build_prompt(skills, limits=limits, remote_note=note)
    new = build_prompt(skills, limits=limits, remote_note=note, profile=NEW)
    assert old.text.startswith(note) and not old.compact  # the note is free in 2026.4
    # 2026.9 counts it: the full catalog fits only without the note, so the note goes.
    assert not new.compact and not new.text.startswith(note) and len(new.text) == full


def test_state_paths_stay_absolute_in_a_data_container() -> None:
    """2026.9's ``compactPromptSkills`` with HOME=/data and the state in /data/.openclaw."""
    located = [Skill.create("m", "d", base_dir=Path("/data/.openclaw/skills/m"))]
    homes = ["/data"]
    keep = KeptPaths(roots=("/data/.openclaw/skills",), homes=())
    assert compact_skill_paths(located, homes)[0].location == "~/.openclaw/skills/m/SKILL.md"
    kept = compact_skill_paths(located, homes, keep=keep)[0].location
    assert kept == "/data/.openclaw/skills/m/SKILL.md"
    # Under an ordinary home the managed path is shortened as before.
    normal = KeptPaths(roots=("/data/.openclaw/skills",), homes=("/data",))
    assert compact_skill_paths(located, homes, keep=normal)[0].location.startswith("~/")
    assert not normal.keeps("/elsewhere/x") and os.sep == "/"


# ------------------------------------------------------------------ files and manifests


def test_yaml_errors_make_the_skill_invalid_after_one_requote() -> None:
    bad = "---\nname: x\ndescription: ok\nmetadata: {bad\n---\n"
    assert not parse_skill_text(bad).invalid
    got = parse_skill_text(bad, rules=NEW.frontmatter)
    assert got.invalid
    assert any(d.code == "parse.frontmatter-invalid" for d in got.diagnostics)
    colon = "---\nname: x\ndescription: Use when: asked\n---\n"
    fixed = parse_skill_text(colon, rules=NEW.frontmatter)
    assert not fixed.invalid and fixed.description == "Use when: asked"
    assert recover_freeform("summary: plain", 1, ("summary",)) is None  # no ': ' inside
    assert recover_freeform("description: |", 1, ("description",)) is None


def test_closing_delimiter_must_be_its_own_line() -> None:
    text = "---\nname: x\ndescription: d\n----\n---\nBody\n"
    assert parse_skill_text(text).body.startswith("---")  # 2026.4 closes at "----"
    strict = parse_skill_text(text, rules=NEW.frontmatter)
    assert strict.invalid  # the block now holds "----", which is not YAML


def test_sha256_and_empty_skill_key_rules() -> None:
    spec = {"kind": "download", "url": "https://e.com/t.tgz", "sha256": "nope"}
    assert parse_install_spec(spec) is not None
    assert parse_install_spec(spec, sha256=True) is None
    good = parse_install_spec({**spec, "sha256": " " + "AB" * 32}, sha256=True)
    assert good is not None and good.sha256 == "ab" * 32
    text = '---\nname: x\ndescription: d\nmetadata: {"openclaw": {"skillKey": ""}}\n---\n'
    meta_old = parse_skill_text(text).metadata
    meta_new = parse_skill_text(text, rules=NEW.frontmatter).metadata
    assert meta_old is not None and meta_old.skill_key == ""
    assert meta_new is not None and meta_new.skill_key is None
    kept = parse_skill_text(
        '---\nname: x\ndescription: d\nmetadata: {"openclaw": {"install": '
        '[{"kind": "download", "url": "https://e.com/a", "sha256": "x"}]}}\n---\n'
    )
    assert any(d.code == "parse.newer-field" for d in kept.diagnostics)


def test_invalid_skill_md_lets_children_load_only_under_2026_4(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_skill(ws / "skills" / "parent", description=None, body="")
    write_skill(ws / "skills" / "parent" / "child")
    env = isolated_env(tmp_path)
    assert [s.name for s in Loader(ws, env=env, cwd=tmp_path).load().skills] == ["child"]
    assert Loader(ws, env=env, cwd=tmp_path, compat=NEW).load().skills == ()


def test_grouped_and_hardlinked_skills_under_2026_9(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_skill(ws / "skills" / "group" / "inner")
    hard = write_skill(ws / "skills" / "hard")
    os.link(hard / "SKILL.md", tmp_path / "other-name.md")
    env = isolated_env(tmp_path)
    old = Loader(ws, env=env, cwd=tmp_path).load()
    new = Loader(ws, env=env, cwd=tmp_path, compat=NEW).load()
    assert [s.name for s in old.skills] == ["hard"]
    assert [s.name for s in new.skills] == ["inner"]
    assert any(d.code == "discover.hardlink" for d in new.diagnostics)


def test_blank_env_value_counts_only_under_2026_4(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_skill(ws / "skills" / "e", metadata={"openclaw": {"requires": {"env": ["V"]}}})
    env = {**isolated_env(tmp_path), "V": "  "}
    assert Loader(ws, env=env, cwd=tmp_path).load().status.find("e").eligible
    assert not Loader(ws, env=env, cwd=tmp_path, compat=NEW).load().status.find("e").eligible


def test_status_and_commands_shapes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_skill(ws / "skills" / "long", description="x" * 150, body="# long title\n")
    env = isolated_env(tmp_path)
    old = Loader(ws, env=env, cwd=tmp_path).load()
    new = Loader(ws, env=env, cwd=tmp_path, compat=NEW).load()
    assert "modelVisible" not in old.status.to_json()["skills"][0]
    entry = new.status.to_json()["skills"][0]
    assert entry["modelVisible"] and entry["commandVisible"] and not entry["platformIncompatible"]
    (old_cmd,) = old.commands().to_json()
    (new_cmd,) = new.commands().to_json()
    assert old_cmd["description"].endswith("…") and len(old_cmd["description"]) == 100
    assert new_cmd["description"] == "x" * 150
    assert new_cmd["displayName"] == "long title" and new_cmd["skillSource"] == "workspace"
    assert list(new_cmd) == [
        "name",
        "displayName",
        "skillFile",
        "skillName",
        "description",
        "modelVisible",
        "skillSource",
    ]


def test_reserved_names_follow_the_profile() -> None:
    skills = [Skill.create(n, "d", base_dir=Path(f"/x/{n}")) for n in ("focus", "goal")]
    old = [c.name for c in build_command_specs(skills).commands]
    new = [c.name for c in build_command_specs(skills, profile=NEW).commands]
    assert old == ["focus_2", "goal"]
    assert new == ["focus", "goal_2"]


def test_clawdbot_gates_are_openclaw_keys_under_2026_9(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_skill(ws / "skills" / "old", metadata={"clawdbot": {"requires": {"bins": ["absent"]}}})
    env = isolated_env(tmp_path)
    strict_old = Loader(ws, env=env, cwd=tmp_path, legacy_manifest_keys=False).load()
    strict_new = Loader(ws, env=env, cwd=tmp_path, legacy_manifest_keys=False, compat=NEW).load()
    assert strict_old.status.find("old").eligible  # 2026.4 ignores clawdbot
    assert not strict_new.status.find("old").eligible
    assert isinstance(strict_new.skills[0].metadata, SkillMetadata)


def test_standalone_markdown_still_loads_in_mixed_mode_under_2026_9(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_skill(ws / "skills" / "folder")
    (ws / "skills" / "notes.md").write_text("# Notes\nTakes notes.\n", encoding="utf-8")
    env = isolated_env(tmp_path)
    book = Loader(ws, env=env, cwd=tmp_path, compat=NEW, mode="mixed").load()
    assert [s.name for s in book.skills] == ["folder", "Notes"]
    assert any(d.code == "discover.standalone-md" for d in book.diagnostics)
