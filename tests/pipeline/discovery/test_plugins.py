"""Plugin skill folders and Claude-bundle commands: what the oracle cannot show.

Refused plugins (unsafe permissions, bad manifests, too new), the diagnostics that
OpenClaw leaves out, the ``plugins`` config schema, and bundle commands at dispatch.
The behaviour OpenClaw has is compared byte for byte in test_plugins_oracle.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from factories import isolated_env, write_plugin, write_skill

from skillbook.config.file import Config
from skillbook.config.paths import Paths
from skillbook.errors import ConfigError
from skillbook.pipeline.book import Loader, SkillBook
from skillbook.pipeline.commands.dispatch import command_dispatch
from skillbook.pipeline.commands.invocation import (
    expand_template,
    resolve_invocation,
    rewrite_for_model,
)
from skillbook.runtime.watch import watch_roots


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


def load(tmp_path: Path, env: dict[str, str], config: dict[str, Any] | None = None) -> SkillBook:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return Loader(ws, config=Config.from_mapping(config or {}), env=env, cwd=tmp_path).load()


def codes(book: SkillBook, prefix: str = "plugin.") -> list[str]:
    return [d.code for d in book.diagnostics if d.code.startswith(prefix)]


def ext(tmp_path: Path) -> Path:
    return tmp_path / "state" / "extensions"


# --------------------------------------------------------------------------- refused


def test_a_world_writable_plugin_is_blocked(tmp_path: Path, env: dict[str, str]) -> None:
    root = write_plugin(
        ext(tmp_path) / "open", {"id": "open", "skills": ["./skills"]}, skills=["skills/open-skill"]
    )
    root.chmod(0o777)
    book = load(tmp_path, env)
    assert [s.name for s in book.skills] == []
    (blocked,) = [d for d in book.diagnostics if d.code == "plugin.blocked"]
    assert "world-writable path" in blocked.message and "mode=777" in blocked.message


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_plugin_owned_by_another_user_is_blocked(tmp_path: Path, env: dict[str, str]) -> None:
    root = write_plugin(
        ext(tmp_path) / "theirs",
        {"id": "theirs", "skills": ["./skills"]},
        skills=["skills/theirs-skill"],
    )
    os.chown(root, 4242, 4242)
    book = load(tmp_path, env)
    assert book.skills == ()
    assert any(
        "suspicious ownership" in d.message and "uid=4242" in d.message for d in book.diagnostics
    )


@pytest.mark.parametrize(
    ("manifest", "why"),
    [
        ("{not json", "failed to parse"),
        ({"skills": ["./skills"]}, "requires id"),
        (json.dumps({"id": "x", "skills": ["./skills"]}), "requires configSchema"),
        ("[1, 2]", "must be an object"),
    ],
)
def test_a_bad_manifest_is_reported(
    tmp_path: Path, env: dict[str, str], manifest: dict[str, Any] | str, why: str
) -> None:
    write_plugin(ext(tmp_path) / "bad", manifest, skills=["skills/bad-skill"])
    book = load(tmp_path, env)
    assert book.skills == ()
    (bad,) = [d for d in book.diagnostics if d.code == "plugin.manifest-invalid"]
    assert why in bad.message and "not loaded" in bad.message


def test_a_symlinked_manifest_is_not_read(tmp_path: Path, env: dict[str, str]) -> None:
    root = write_plugin(
        ext(tmp_path) / "linked",
        {"id": "linked", "skills": ["./skills"]},
        skills=["skills/linked-skill"],
    )
    real = tmp_path / "elsewhere.json"
    (root / "openclaw.plugin.json").rename(real)
    (root / "openclaw.plugin.json").symlink_to(real)
    book = load(tmp_path, env)
    assert book.skills == () and codes(book) == ["plugin.manifest-invalid"]


def test_a_missing_extension_entry_is_reported(tmp_path: Path, env: dict[str, str]) -> None:
    root = write_plugin(
        ext(tmp_path) / "pkg", {"id": "pkg", "skills": ["./skills"]}, skills=["skills/pkg-skill"]
    )
    (root / "package.json").write_text(json.dumps({"openclaw": {"extensions": ["./gone.js"]}}))
    book = load(tmp_path, env)
    assert book.skills == ()
    assert (
        "lists the extension entry ./gone.js, which does not exist" in book.diagnostics[0].message
    )


def test_min_host_version(tmp_path: Path, env: dict[str, str]) -> None:
    root = write_plugin(
        ext(tmp_path) / "future",
        {"id": "future", "skills": ["./skills"]},
        skills=["skills/future-skill"],
    )
    (root / "package.json").write_text(
        json.dumps(
            {
                "openclaw": {
                    "extensions": ["./index.js"],
                    "install": {"minHostVersion": ">=2099.1.0"},
                }
            }
        )
    )
    book = load(tmp_path, env)
    assert book.skills == () and codes(book) == ["plugin.incompatible"]
    assert "requires OpenClaw >=2099.1.0, this host is 2026.4.12" in book.diagnostics[0].message
    newer = load(tmp_path, {**env, "OPENCLAW_COMPATIBILITY_HOST_VERSION": "2099.2.0"})
    assert [s.name for s in newer.skills] == ["future-skill"]
    (root / "package.json").write_text(
        json.dumps(
            {"openclaw": {"extensions": ["./index.js"], "install": {"minHostVersion": "2099"}}}
        )
    )
    assert 'the form ">=x.y.z"' in load(tmp_path, env).diagnostics[0].message


def test_a_missing_load_path_is_reported(tmp_path: Path, env: dict[str, str]) -> None:
    book = load(tmp_path, env, {"plugins": {"load": {"paths": ["nowhere", "  "]}}})
    assert [d.message for d in book.diagnostics if d.code == "plugin.load-path"] == [
        f"plugin path not found: {tmp_path / 'nowhere'}"
    ]


def test_duplicate_ids_are_both_loaded_and_reported(tmp_path: Path, env: dict[str, str]) -> None:
    write_plugin(
        ext(tmp_path) / "one", {"id": "same", "skills": ["./skills"]}, skills=["skills/one-skill"]
    )
    write_plugin(
        tmp_path / "cfg" / "two",
        {"id": "same", "skills": ["./skills"]},
        skills=["skills/two-skill"],
    )
    book = load(tmp_path, env, {"plugins": {"load": {"paths": ["cfg/two"]}}})
    assert [s.name for s in book.skills] == ["two-skill", "one-skill"]
    assert codes(book) == ["plugin.duplicate-id"]


def test_an_inactive_plugin_says_why(tmp_path: Path, env: dict[str, str]) -> None:
    write_plugin(
        tmp_path / "ws" / ".openclaw" / "extensions" / "wsp",
        {"id": "wsp", "skills": ["./skills"]},
        skills=["skills/wsp-skill"],
    )
    book = load(tmp_path, env)
    (note,) = [d for d in book.diagnostics if d.code == "plugin.inactive"]
    assert "add 'wsp' to `plugins.allow`" in note.message
    allowed = load(tmp_path, env, {"plugins": {"allow": ["wsp"]}})
    assert [s.name for s in allowed.skills] == ["wsp-skill"] and codes(allowed) == []


def test_without_a_workspace_bundle_commands_still_load(
    tmp_path: Path, env: dict[str, str]
) -> None:
    bundle = ext(tmp_path) / "cb"
    write_skill(bundle / "skills" / "cb-skill")
    (bundle / "commands").mkdir()
    (bundle / "commands" / "ship.md").write_text("Ship it: $ARGUMENTS\n")
    book = Loader(None, env=env, cwd=tmp_path).load()
    assert book.skills == ()
    assert [c.name for c in book.commands().commands] == ["ship"]


# --------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    ("plugins", "key_path", "expected"),
    [
        ({"allow": ["a", 1]}, "plugins.allow[1]", "expected string, got 1"),
        ({"enabled": "yes"}, "plugins.enabled", "expected boolean"),
        ({"load": {"paths": "x"}}, "plugins.load.paths", "expected array of strings"),
        ({"slots": {"memory": 3}}, "plugins.slots.memory", "expected string"),
        ({"entries": {"p": {"enabled": "on"}}}, "plugins.entries.p.enabled", "expected boolean"),
        ({"entries": {"p": "on"}}, "plugins.entries.p", "expected object"),
    ],
)
def test_plugins_config_errors_name_the_key(
    plugins: dict[str, Any], key_path: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as err:
        Config.from_mapping({"plugins": plugins}, file=Path("openclaw.json"))
    assert err.value.key_path == key_path
    assert str(err.value).startswith(f"openclaw.json: {key_path}: {expected}")


def test_plugins_config_keeps_openclaws_other_keys() -> None:
    cfg = Config.from_mapping(
        {
            "plugins": {
                "installs": {"x": {"installPath": "/p"}},
                "entries": {"x": {"config": {"k": 1}}},
            }
        }
    )
    assert cfg.plugins.entries["x"].enabled is None and cfg.plugins.configured
    assert cfg.raw["plugins"]["installs"] == {"x": {"installPath": "/p"}}


# --------------------------------------------------------------------------- commands


def test_bundle_commands_are_prompts_even_when_a_skill_has_the_name(
    tmp_path: Path, env: dict[str, str]
) -> None:
    write_skill(
        tmp_path / "ws" / "skills" / "deploy", metadata={"skillbook": {"commandExec": "echo hi"}}
    )
    bundle = ext(tmp_path) / "cb"
    (bundle / "commands").mkdir(parents=True)
    (bundle / "commands" / "deploy.md").write_text(
        "---\nname: deploy\n---\nDeploy $ARGUMENTS carefully\n"
    )
    (bundle / "commands" / "blank.md").write_text("---\nname: blank\n---\n\n")
    book = load(tmp_path, env)
    commands = book.commands()
    assert [(c.name, c.skill_name) for c in commands.commands] == [
        ("deploy", "deploy"),
        ("deploy_2", "deploy"),
    ]
    invocation = resolve_invocation("/deploy_2 prod", commands)
    assert invocation is not None
    assert command_dispatch(invocation.command, book.eligible) is None
    assert rewrite_for_model(invocation) == "Deploy prod carefully"
    assert codes(book, "command.") == ["command.bundle-skipped"]


@pytest.mark.parametrize(
    ("template", "args", "expected"),
    [
        ("Review $ARGUMENTS now", "  the PR ", "Review the PR now"),
        ("Review $ARGUMENTS and $ARGUMENTS", None, "Review  and"),
        ("  Summarise the log  ", None, "Summarise the log"),
        ("Summarise", "the log", "Summarise\n\nUser input:\nthe log"),
    ],
)
def test_templates_take_arguments_as_openclaw_does(
    template: str, args: str | None, expected: str
) -> None:
    assert expand_template(template, args) == expected


def test_plugin_skill_folders_are_watched(tmp_path: Path, env: dict[str, str]) -> None:
    write_plugin(
        ext(tmp_path) / "w", {"id": "w", "skills": ["./skills"]}, skills=["skills/w-skill"]
    )
    paths = Paths.from_env(env, cwd=tmp_path)
    roots = watch_roots(tmp_path / "ws", paths, Config.empty(), cwd=tmp_path, env=env)
    assert ext(tmp_path) / "w" / "skills" in roots
