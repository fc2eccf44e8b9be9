"""Differential tests: plugin skill folders (§3.6) and Claude-bundle commands (§6.1 step 5).

Each scenario builds plugins in the three places OpenClaw's manifest registry looks
(``plugins.load.paths``, ``<workspace>/.openclaw/extensions``, ``<state>/extensions``
and a bundled-plugins folder named by ``OPENCLAW_BUNDLED_PLUGINS_DIR``), runs the
oracle's ``entries`` and ``commands`` ops with a config, and compares the skills (name,
path, source, order), the warnings OpenClaw logs about plugin skill paths, and the
slash commands with what :class:`skillbook.pipeline.book.Loader` gives for the same files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from factories import write_plugin, write_skill
from oracle_support import Oracle, run_batch

from skillbook.config.file import Config
from skillbook.pipeline.book import Loader, SkillBook

pytestmark = pytest.mark.oracle


@pytest.fixture(autouse=True)
def _needs_oracle(oracle: Oracle) -> None:
    """Every test here runs OpenClaw's code; the ``oracle`` fixture finds it or skips."""


PLUGIN_WARNINGS = ("plugin skill path not found", "plugin skill path escapes plugin root")


class World:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.state = base / "state"
        self.bundled_plugins = base / "bundled-plugins"
        self.ws = base / "ws"
        for d in (self.home, self.state, self.bundled_plugins, self.ws / "skills"):
            d.mkdir(parents=True, exist_ok=True)
        write_skill(self.ws / "skills" / "local-one")
        self.env = {
            "HOME": str(self.home),
            "SKILLBOOK_STATE_DIR": str(self.state),
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(base / "no-bundled-skills"),
            "OPENCLAW_BUNDLED_PLUGINS_DIR": str(self.bundled_plugins),
            "PATH": os.environ.get("PATH", ""),
        }

    @property
    def global_ext(self) -> Path:
        return self.state / "extensions"

    @property
    def ws_ext(self) -> Path:
        return self.ws / ".openclaw" / "extensions"

    def requests(self, config: dict[str, Any]) -> list[dict[str, Any]]:
        common = {
            "workspace": str(self.ws),
            "home": str(self.home),
            "stateDir": str(self.state),
            "bundledDir": str(self.base / "no-bundled-skills"),
            "env": {"OPENCLAW_BUNDLED_PLUGINS_DIR": str(self.bundled_plugins)},
            "cwd": str(self.base),
            "config": config,
            "omitMeta": True,
        }
        return [{"op": "entries", **common}, {"op": "commands", "reservedNames": [], **common}]

    def ours(self, config: dict[str, Any]) -> SkillBook:
        (self.base / "no-bundled-skills").mkdir(exist_ok=True)
        return Loader(
            self.ws, config=Config.from_mapping(config), env=self.env, cwd=self.base
        ).load()


def compare(world: World, configs: list[dict[str, Any]]) -> None:
    requests = [r for c in configs for r in world.requests(c)]
    results = run_batch(requests)
    for index, config in enumerate(configs):
        entries, commands = results[2 * index], results[2 * index + 1]
        book = world.ours(config)
        theirs = [
            (e["skill"]["name"], e["skill"]["filePath"], e["skill"]["source"])
            for e in entries["result"]["entries"]
        ]
        ours = [(s.name, str(s.file_path), s.source) for s in book.skills]
        assert ours == theirs, f"config {config}"
        their_warnings = sorted(
            log["message"] for log in entries["logs"] if log["message"].startswith(PLUGIN_WARNINGS)
        )
        our_warnings = sorted(
            d.message for d in book.diagnostics if d.code.startswith("plugin.path-")
        )
        assert our_warnings == their_warnings, f"config {config}"
        assert book.commands(reserved=[]).to_json() == commands["result"]["commands"], (
            f"config {config}"
        )


def test_where_plugins_are_found_and_which_are_on(tmp_path: Path) -> None:
    w = World(tmp_path)
    g = write_plugin(
        w.global_ext / "gplug",
        {
            "id": "gplug",
            "skills": ["./skills", "./missing", " ", "./skills"],
            "legacyPluginIds": ["oldg"],
        },
    )
    write_skill(g / "skills" / "g-skill")
    write_skill(g / "skills" / "shared", description="from the plugin")
    write_skill(w.ws / "skills" / "shared", description="the workspace wins")
    ws_plug = write_plugin(w.ws_ext / "wsplug", {"id": "wsplug", "skills": ["skills"]})
    write_skill(ws_plug / "skills" / "ws-skill")
    prov = write_plugin(
        w.global_ext / "prov", {"id": "prov", "providers": ["acme-ai"], "skills": ["s"]}
    )
    write_skill(prov / "s" / "prov-skill")
    # A package.json plugin whose entry file is listed under openclaw.extensions.
    pkg = write_plugin(
        w.global_ext / "pkgplug", {"id": "pkgplug", "skills": ["./skills"]}, entry="main.js"
    )
    (pkg / "package.json").write_text(
        json.dumps({"name": "pkgplug", "openclaw": {"extensions": ["./main.js"]}})
    )
    write_skill(pkg / "skills" / "pkg-skill")
    # Bundled plugins are on only when enabled explicitly.
    bundled = write_plugin(w.bundled_plugins / "bplug", {"id": "bplug", "skills": ["./skills"]})
    write_skill(bundled / "skills" / "bundled-plugin-skill")
    # plugins.load.paths: a plugin folder named relative to the working folder.
    cfg_plug = write_plugin(tmp_path / "elsewhere" / "cplug", {"id": "cplug", "skills": ["./sk"]})
    write_skill(cfg_plug / "sk" / "config-skill")
    write_skill(tmp_path / "extra" / "extra-skill")
    load = {"load": {"paths": ["elsewhere/cplug"]}}
    compare(
        w,
        [
            {},
            {"plugins": load, "skills": {"load": {"extraDirs": ["extra"]}}},
            {"plugins": {"allow": ["wsplug", "oldg", "acme-ai"]}},
            {"plugins": {"entries": {"gplug": {"enabled": False}, "wsplug": {"enabled": True}}}},
            {"plugins": {"entries": {"oldg": {"enabled": False}, "bplug": {"enabled": True}}}},
            {"plugins": {"deny": ["gplug"], "allow": ["gplug", "prov"]}},
            {"plugins": {"enabled": False, **load}},
        ],
    )


def test_escapes_memory_slots_and_acp(tmp_path: Path) -> None:
    w = World(tmp_path)
    outside = tmp_path / "outside"
    write_skill(outside / "stolen")
    esc = write_plugin(
        w.global_ext / "esc", {"id": "esc", "skills": ["./linked", "../outside", "./ok"]}
    )
    (esc / "linked").symlink_to(outside)
    write_skill(esc / "ok" / "esc-ok")
    for name in ("mem-a", "mem-b"):
        p = write_plugin(w.global_ext / name, {"id": name, "kind": "memory", "skills": ["./s"]})
        write_skill(p / "s" / f"{name}-skill")
    multi = write_plugin(
        w.global_ext / "multi", {"id": "multi", "kind": ["memory", "tool"], "skills": ["./s"]}
    )
    write_skill(multi / "s" / "multi-skill")
    acpx = write_plugin(w.global_ext / "acpx", {"id": "acpx", "skills": ["./s"]})
    write_skill(acpx / "s" / "acpx-skill")
    compare(
        w,
        [
            {},
            {"plugins": {"slots": {"memory": "mem-b"}}},
            {"plugins": {"slots": {"memory": "none"}}, "acp": {"enabled": False}},
            {"acp": {"enabled": True}},
        ],
    )


def test_bundles_and_their_commands(tmp_path: Path) -> None:
    w = World(tmp_path)
    cb = w.global_ext / "cb"
    (cb / ".claude-plugin").mkdir(parents=True)
    (cb / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "Claude Bundle!", "commands": ["extra-cmds", "commands"]})
    )
    write_skill(cb / "skills" / "cb-skill")
    cmds = cb / "commands"
    (cmds / "workflows").mkdir(parents=True)
    (cmds / "workflows" / "review.md").write_text(
        "---\ndescription: Review things\n---\nReview $ARGUMENTS now\n"
    )
    (cmds / "deploy.md").write_text("\n\nDeploy it\nmore lines\n")
    (cmds / "local_one.md").write_text("---\nname: local-one\n---\nSame name as a skill\n")
    (cmds / "hidden.md").write_text("---\ndisable-model-invocation: yes\n---\nNot a command\n")
    (cmds / "empty.md").write_text("---\nname: empty\n---\n   \n")
    (cmds / ".secret.md").write_text("Hidden file\n")
    (cmds / "notes.txt").write_text("Not Markdown\n")
    (cmds / "long.MD").write_text("---\ndescription: " + "x" * 120 + "\n---\nLong\n")
    (cb / "extra-cmds").mkdir()
    (cb / "extra-cmds" / "x.md").write_text("From the declared folder\n")
    # A bundle without a manifest: a `skills/` folder is enough.
    bare = w.global_ext / "bare-bundle"
    write_skill(bare / "skills" / "bare-skill")
    (bare / "commands").mkdir()
    (bare / "commands" / "bare.md").write_text("Bare command\n")
    # Codex and Cursor bundles contribute skills, never commands.
    codex = w.global_ext / "codexb"
    (codex / ".codex-plugin").mkdir(parents=True)
    (codex / ".codex-plugin" / "plugin.json").write_text(json.dumps({"name": "codexb"}))
    write_skill(codex / "skills" / "codex-skill")
    cursor = w.global_ext / "cursorb"
    (cursor / ".cursor-plugin").mkdir(parents=True)
    (cursor / ".cursor-plugin" / "plugin.json").write_text(
        json.dumps({"name": "cursorb", "skills": ["more"]})
    )
    write_skill(cursor / "more" / "cursor-skill")
    (cursor / ".cursor" / "commands").mkdir(parents=True)
    (cursor / ".cursor" / "commands" / "c.md").write_text("Cursor command\n")
    compare(
        w,
        [
            {},
            {"plugins": {"entries": {"claude-bundle": {"enabled": False}}}},
            {"plugins": {"allow": ["bare-bundle", "codexb"]}},
        ],
    )
