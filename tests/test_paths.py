"""Paths.from_env and resolve_user_path (spec §3.7-3.8 with SKILLBOOK_* variables)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbook.paths import PACKAGE_BUNDLED_DIR, Paths, resolve_user_path


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
