"""Paths.from_env and resolve_user_path (spec §3.7-3.8 with SKILLBOOK_* variables)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbook.config.paths import PACKAGE_BUNDLED_DIR, Paths, resolve_user_path


def test_defaults_follow_home(tmp_path: Path) -> None:
    p = Paths.from_env({"HOME": str(tmp_path / "h")}, cwd=tmp_path)
    assert p.home == tmp_path / "h"
    assert p.os_home == tmp_path / "h"
    assert p.state_dir == tmp_path / "h" / ".skillbook"
    assert p.managed_dir == tmp_path / "h" / ".skillbook" / "skills"
    assert p.personal_dir == tmp_path / "h" / ".agents" / "skills"
    assert p.config_path is None
    assert p.bundled_dir == (PACKAGE_BUNDLED_DIR if PACKAGE_BUNDLED_DIR.is_dir() else None)


def test_skillbook_home_with_tilde_expands_against_os_home(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "os"), "SKILLBOOK_HOME": "~/eff"}
    p = Paths.from_env(env, cwd=tmp_path)
    assert p.home == tmp_path / "os" / "eff"
    assert p.os_home == tmp_path / "os"
    # Personal skills follow the OS home, state follows the effective home.
    assert p.personal_dir == tmp_path / "os" / ".agents" / "skills"
    assert p.state_dir == tmp_path / "os" / "eff" / ".skillbook"


@pytest.mark.parametrize("unset", ["undefined", "null", "   ", ""])
def test_unset_words_fall_through(tmp_path: Path, unset: str) -> None:
    env = {"SKILLBOOK_HOME": unset, "HOME": unset, "USERPROFILE": str(tmp_path / "up")}
    p = Paths.from_env(env, cwd=tmp_path)
    assert p.home == tmp_path / "up"
    assert p.os_home == tmp_path / "up"


def test_relative_home_resolves_against_cwd(tmp_path: Path) -> None:
    p = Paths.from_env({"HOME": "rel/home"}, cwd=tmp_path)
    assert p.home == tmp_path / "rel" / "home"


def test_state_dir_override_then_config_path(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "SKILLBOOK_CONFIG_PATH": "~/conf/sb.json"}
    p = Paths.from_env(env, cwd=tmp_path)
    assert p.config_path == tmp_path / "conf" / "sb.json"
    assert p.state_dir == tmp_path / "conf"
    env["SKILLBOOK_STATE_DIR"] = "  ~/state  "
    p = Paths.from_env(env, cwd=tmp_path)
    assert p.state_dir == tmp_path / "state"
    assert p.managed_dir == tmp_path / "state" / "skills"


def test_bundled_override_trimmed_without_checks(tmp_path: Path) -> None:
    """§12: OPENCLAW_BUNDLED_SKILLS_DIR (with surrounding spaces) returned trimmed."""
    env = {"HOME": str(tmp_path), "SKILLBOOK_BUNDLED_SKILLS_DIR": f"  {tmp_path}/nope  "}
    p = Paths.from_env(env, cwd=tmp_path)
    assert p.bundled_dir == tmp_path / "nope"


def test_openclaw_variables_are_a_fallback(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path),
        "OPENCLAW_STATE_DIR": str(tmp_path / "oc"),
        "OPENCLAW_BUNDLED_SKILLS_DIR": str(tmp_path / "b"),
    }
    p = Paths.from_env(env, cwd=tmp_path)
    assert p.state_dir == tmp_path / "oc"
    assert p.bundled_dir == tmp_path / "b"
    env["SKILLBOOK_STATE_DIR"] = str(tmp_path / "sb")
    assert Paths.from_env(env, cwd=tmp_path).state_dir == tmp_path / "sb"
    assert Paths.from_env(env, cwd=tmp_path, compat=False).bundled_dir != tmp_path / "b"


def test_resolve_user_path(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert resolve_user_path("  ~/x/../y ", home, cwd=tmp_path) == home / "y"
    assert resolve_user_path("~", home, cwd=tmp_path) == home
    assert resolve_user_path("rel", home, cwd=tmp_path) == tmp_path / "rel"
    # `~user` is not a home reference (as in OpenClaw): it stays a relative name.
    assert resolve_user_path("~other/x", home, cwd=tmp_path) == tmp_path / "~other" / "x"
    with pytest.raises(ValueError):
        resolve_user_path("   ", home, cwd=tmp_path)


def test_from_process_reads_os_environ(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SKILLBOOK_STATE_DIR", str(tmp_path / "st"))
    assert Paths.from_process().state_dir == tmp_path / "st"


# --------------------------------------------------------------------------- config file


def _file(path: Path, text: str = "{}") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_no_config_anywhere_uses_skillbooks_state_dir(tmp_path: Path) -> None:
    loc = Paths.from_env({"HOME": str(tmp_path)}, cwd=tmp_path).config_location
    assert loc.file is None and loc.state_dir == tmp_path / ".skillbook"
    assert loc.searched[:2] == (
        tmp_path / ".skillbook" / "skillbook.json",
        tmp_path / ".openclaw" / "openclaw.json",
    )
    assert loc.note() is None and not loc.is_openclaw


def test_openclaws_default_config_is_found_and_its_folder_is_the_state_dir(
    tmp_path: Path,
) -> None:
    """Drop-in: with no flag, ~/.openclaw/openclaw.json and ~/.openclaw/skills."""
    config = _file(tmp_path / ".openclaw" / "openclaw.json")
    paths = Paths.from_env({"HOME": str(tmp_path)}, cwd=tmp_path)
    loc = paths.config_location
    assert loc.file == paths.config_path == config
    assert loc.is_openclaw and loc.reason == "OpenClaw's config at its default place"
    assert paths.state_dir == tmp_path / ".openclaw"
    assert paths.managed_dir == tmp_path / ".openclaw" / "skills"
    assert loc.state_dir_reason == "the config file's folder"


def test_openclaw_home_moves_the_default_places(tmp_path: Path) -> None:
    config = _file(tmp_path / "oc-home" / ".openclaw" / "openclaw.json")
    env = {"HOME": str(tmp_path), "OPENCLAW_HOME": str(tmp_path / "oc-home")}
    paths = Paths.from_env(env, cwd=tmp_path)
    assert paths.config_path == config
    assert paths.managed_dir == tmp_path / "oc-home" / ".openclaw" / "skills"
    assert paths.origins["home"] == "$OPENCLAW_HOME"


def test_skillbooks_own_config_wins_and_the_other_is_reported(tmp_path: Path) -> None:
    own = _file(tmp_path / ".skillbook" / "skillbook.json")
    openclaw = _file(tmp_path / ".openclaw" / "openclaw.json")
    loc = Paths.from_env({"HOME": str(tmp_path)}, cwd=tmp_path).config_location
    assert loc.file == own and loc.state_dir == tmp_path / ".skillbook"
    assert loc.not_read == (openclaw,)
    note = loc.note()
    assert note is not None
    assert note.startswith(f"reading {own} (skillbook's own config at its default place)")
    assert f"not reading {openclaw}" in note and "--config" in note


def test_legacy_clawdbot_config_is_found(tmp_path: Path) -> None:
    config = _file(tmp_path / ".clawdbot" / "clawdbot.json")
    paths = Paths.from_env({"HOME": str(tmp_path)}, cwd=tmp_path)
    assert paths.config_path == config and paths.config_location.is_openclaw
    assert paths.state_dir == tmp_path / ".clawdbot"


def test_an_existing_openclaw_state_dir_without_config_is_the_state_dir(tmp_path: Path) -> None:
    (tmp_path / ".openclaw" / "skills").mkdir(parents=True)
    paths = Paths.from_env({"HOME": str(tmp_path)}, cwd=tmp_path)
    assert paths.config_path is None
    assert paths.managed_dir == tmp_path / ".openclaw" / "skills"
    (tmp_path / ".skillbook").mkdir()
    assert Paths.from_env({"HOME": str(tmp_path)}, cwd=tmp_path).state_dir == (
        tmp_path / ".skillbook"
    )


@pytest.mark.parametrize("how", ["explicit", "SKILLBOOK_CONFIG_PATH", "OPENCLAW_CONFIG_PATH"])
def test_the_state_dir_follows_the_config_file_however_it_is_named(
    tmp_path: Path, how: str
) -> None:
    """The same file gives the same state dir (and managed skills) by flag, variable or place."""
    config = _file(tmp_path / "elsewhere" / "openclaw.json")
    env = {"HOME": str(tmp_path)}
    if how == "explicit":
        paths = Paths.from_env(env, cwd=tmp_path, config="elsewhere/openclaw.json")
        reason = "config="
    else:
        paths = Paths.from_env({**env, how: "~/elsewhere/openclaw.json"}, cwd=tmp_path)
        reason = f"${how}"
    assert paths.config_path == config
    assert paths.config_location.reason == reason
    assert paths.managed_dir == tmp_path / "elsewhere" / "skills"


def test_a_state_dir_variable_is_searched_and_wins_over_the_files_folder(tmp_path: Path) -> None:
    state = tmp_path / "state"
    config = _file(state / "openclaw.json")
    env = {"HOME": str(tmp_path), "OPENCLAW_STATE_DIR": str(state)}
    loc = Paths.from_env(env, cwd=tmp_path).config_location
    assert loc.file == config and loc.reason == "OpenClaw's config in $OPENCLAW_STATE_DIR"
    assert loc.state_dir == state and loc.state_dir_reason == "$OPENCLAW_STATE_DIR"
    # A file named elsewhere is read, the state dir stays the variable's.
    other = _file(tmp_path / "x" / "skillbook.json")
    paths = Paths.from_env(env, cwd=tmp_path, config=other)
    assert paths.config_path == other and paths.state_dir == state


def test_compat_off_ignores_openclaws_places(tmp_path: Path) -> None:
    _file(tmp_path / ".openclaw" / "openclaw.json")
    paths = Paths.from_env({"HOME": str(tmp_path)}, cwd=tmp_path, compat=False)
    assert paths.config_path is None and paths.state_dir == tmp_path / ".skillbook"


def test_a_blank_skillbook_variable_falls_back_to_openclaws(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "SKILLBOOK_STATE_DIR": "  ", "OPENCLAW_STATE_DIR": "~/oc"}
    assert Paths.from_env(env, cwd=tmp_path).state_dir == tmp_path / "oc"


def test_without_config_file_keeps_the_folders(tmp_path: Path) -> None:
    _file(tmp_path / ".openclaw" / "openclaw.json")
    paths = Paths.from_env({"HOME": str(tmp_path)}, cwd=tmp_path)
    value = paths.without_config_file("a Config value (config=)")
    assert value.config_path is None and value.config_location.file is None
    assert value.state_dir == paths.state_dir and value.config_location.not_read == ()
    assert value.config_location.to_json()["reason"] == "a Config value (config=)"
