"""Settings.resolve: what a run uses, and the same skills whichever way the config is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from factories import write_skill

from skillbook.config.file import Config
from skillbook.config.run_settings import Settings, choose_mode
from skillbook.errors import AgentNotFound, ConfigError
from skillbook.pipeline.book import Loader


@pytest.fixture
def openclaw_home(tmp_path: Path) -> Path:
    """A home set up by OpenClaw: config, managed skills, default workspace."""
    home = tmp_path / "home"
    state = home / ".openclaw"
    state.mkdir(parents=True)
    (state / "openclaw.json").write_text(
        json.dumps({"skills": {"entries": {"managed-one": {"enabled": False}}}}),
        encoding="utf-8",
    )
    write_skill(state / "skills" / "managed-one")
    write_skill(state / "workspace" / "skills" / "in-workspace")
    return home


def _env(home: Path, **extra: str) -> dict[str, str]:
    no_bundled = str(home / "no-bundled-skills")
    return {"HOME": str(home), "PATH": "", "SKILLBOOK_BUNDLED_SKILLS_DIR": no_bundled, **extra}


def _seen(settings: Settings) -> list[tuple[str, str, str]]:
    book = Loader.from_settings(settings).load()
    return [(e.name, e.source, e.status) for e in book.status.skills]


def test_no_flags_finds_what_openclaw_finds(openclaw_home: Path, tmp_path: Path) -> None:
    settings = Settings.resolve(env=_env(openclaw_home), cwd=tmp_path)
    assert settings.paths.config_path == openclaw_home / ".openclaw" / "openclaw.json"
    assert settings.workspace.path == openclaw_home / ".openclaw" / "workspace"
    assert _seen(settings) == [
        ("managed-one", "openclaw-managed", "disabled"),
        ("in-workspace", "openclaw-workspace", "ready"),
    ]


@pytest.mark.parametrize("how", ["--config", "OPENCLAW_CONFIG_PATH", "SKILLBOOK_CONFIG_PATH"])
def test_the_same_config_file_gives_the_same_skills_however_it_is_named(
    openclaw_home: Path, tmp_path: Path, how: str
) -> None:
    file = str(openclaw_home / ".openclaw" / "openclaw.json")
    found = Settings.resolve(env=_env(openclaw_home), cwd=tmp_path)
    if how == "--config":
        named = Settings.resolve(env=_env(openclaw_home), cwd=tmp_path, config=file)
    else:
        named = Settings.resolve(env=_env(openclaw_home, **{how: file}), cwd=tmp_path)
    assert named.paths.managed_dir == found.paths.managed_dir
    assert named.workspace.path == found.workspace.path
    assert _seen(named) == _seen(found)
    assert named.paths.config_location.reason == (how if how == "--config" else f"${how}")


def test_mode_and_agent(openclaw_home: Path, tmp_path: Path) -> None:
    env = _env(openclaw_home)
    assert Settings.resolve(env=env, cwd=tmp_path).mode_reason == "the default"
    assert Settings.resolve(env=env, cwd=tmp_path, mode="strict").mode_reason == "--mode"
    with pytest.raises(AgentNotFound):
        Settings.resolve(env=env, cwd=tmp_path, agent="ops")
    assert Settings.resolve(env=env, cwd=tmp_path, agent="main").agent == "main"
    cfg = Config.from_mapping({"skills": {"load": {"mode": "mixed"}}}, file=Path("c.json"))
    assert choose_mode(None, cfg) == ("mixed", "skills.load.mode in c.json")
    assert choose_mode("legacy", cfg) == ("legacy", "--mode")


def test_a_bad_config_raises_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"skills": {"policy": {}}}', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"skills\.policy"):
        Settings.resolve(env=_env(tmp_path), cwd=tmp_path, config=str(bad))


def test_roots_are_the_loaders(openclaw_home: Path, tmp_path: Path) -> None:
    settings = Settings.resolve(env=_env(openclaw_home), cwd=tmp_path)
    discovered = Loader.from_settings(settings).load().discovery.roots
    roots = [(r.source.value, r.path) for r in discovered]
    assert ("openclaw-managed", openclaw_home / ".openclaw" / "skills") in roots
    assert roots[-1] == ("openclaw-workspace", openclaw_home / ".openclaw" / "workspace" / "skills")
