"""Small workspaces that show one difference between OpenClaw 2026.4.12 and 2026.9.6 each.

Not a test module: :mod:`test_compat_oracle` (half of them; ``test_compat_oracle_shard1``
the other half) runs every :class:`Scenario` through both
oracle versions and both compat profiles. Each scenario names the difference it pins
(an id of :data:`compat_differences.DIFFERENCES`) and the ops whose results must differ
between the two OpenClaw releases, so a scenario that stops showing its difference
fails instead of passing silently.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factories import write_skill
from oracle_cases import make_stub_bins

OPS = ("prompt", "status", "commands")


def scenario_env(scenario: Scenario, world: World) -> dict[str, str]:
    """The scenario's extra variables, ``{base}`` replaced by the world's folder."""
    return {k: v.replace("{base}", str(world.base)) for k, v in scenario.env.items()}


#: Both sides see no plugin of the oracle package itself (browser, canvas): the
#: comparison is about skills on disk (docs/oracle-differences.md says why).
PLUGINS_OFF: dict[str, Any] = {"plugins": {"enabled": False}}


class World:
    """One home, state dir, bundled dir, workspace and PATH for both implementations."""

    def __init__(
        self, base: Path, *, default_state: bool = False, workspace: str | None = None
    ) -> None:
        self.base = base.resolve()
        self.home = self.base / "home"
        self.state = self.home / ".openclaw" if default_state else self.base / "state"
        self.bundled = self.base / "bundled"
        self.ws = self.base / workspace if workspace is not None else self.home / "ws"
        for folder in (self.home, self.state, self.bundled, self.ws / "skills"):
            folder.mkdir(parents=True, exist_ok=True)
        self.bin = make_stub_bins(self.base / "bin", ("present-bin", "curl"))

    def skill(self, folder: Path, name: str | None, description: str = "desc", **fm: Any) -> Path:
        """A skill whose body starts with a ``# <name> title`` heading (OpenClaw 2026.9 shows
        it as the command's display name); ``fm`` as in :func:`factories.skill_text`."""
        body = f"\n# {name or folder.name} title\nBody\n"
        return write_skill(folder, name, description, body=body, **fm)

    def raw(self, folder: Path, text: str) -> None:
        write_skill(folder, text=text)

    @property
    def skills(self) -> Path:
        return self.ws / "skills"


def gated(**openclaw: Any) -> dict[str, Any]:
    return {"openclaw": openclaw}


@dataclass(frozen=True)
class Scenario:
    #: The id of the difference it pins (compat_differences.DIFFERENCES).
    id: str
    build: Callable[[World], None]
    #: Ops whose baseline and latest results differ (checked: the difference is real).
    differs: tuple[str, ...]
    config: dict[str, Any] = field(default_factory=dict)
    agent: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    #: ``{"platforms": [...], "bins": [...], "note": "..."}``: a paired remote node.
    remote: dict[str, Any] | None = None
    default_state: bool = False
    #: Also compare the snapshot's ``resolvedSkills`` (names, in order).
    snapshot: bool = False
    #: The workspace relative to the world's base folder (default: ``home/ws``).
    workspace: str | None = None
    #: The difference it pins when that is not its own id (a second case of one rule).
    pins: str | None = None

    @property
    def difference(self) -> str:
        return self.pins or self.id


def _long(n: int) -> str:
    return ("Handles requests about the topic with care and detail; " * 40)[:n].strip()


def _order(w: World) -> None:
    # Folder order (JS sort) differs from name order: 2026.4 keeps first-seen order.
    w.skill(w.skills / "a-folder", "zeta")
    w.skill(w.skills / "b-folder", "Alpha")
    w.skill(w.skills / "c-folder", "beta")


def _budget(w: World) -> None:
    # About 20 000 characters: under 2026.4's 30 000, over 2026.9's 18 000.
    for i in range(20):
        w.skill(w.skills / f"s{i:02d}", f"s{i:02d}", _long(900))


def _small_budget(w: World) -> None:
    for i in range(6):
        w.skill(w.skills / f"s{i}", f"s{i}", _long(300))


def _grouped(w: World) -> None:
    w.skill(w.skills / "plain", "plain")
    w.skill(w.skills / "group" / "inner", "inner")
    w.skill(w.skills / "group" / "deeper" / "deepest", "deepest")


def _invalid_parent(w: World) -> None:
    w.raw(w.skills / "parent", "---\nname: parent\n---\nno description\n")
    w.skill(w.skills / "parent" / "child", "child")


def _yaml_error(w: World) -> None:
    w.raw(w.skills / "broken", "---\nname: broken\ndescription: ok\nmetadata: {bad\n---\nBody\n")
    w.raw(w.skills / "recovered", "---\nname: recovered\ndescription: Use when: asked\n---\n")
    w.skill(w.skills / "fine", "fine")


def _delimiter(w: World) -> None:
    w.raw(w.skills / "dashes", "---\nname: dashes\ndescription: d\n----\nx: y\n---\nBody\n")
    w.skill(w.skills / "fine", "fine")


def _legacy(w: World) -> None:
    w.skill(w.skills / "old", "old", metadata={"clawdbot": {"requires": {"bins": ["absent"]}}})
    w.skill(w.skills / "older", "older", metadata={"moltbot": {"requires": {"bins": ["absent"]}}})


def _skill_key(w: World) -> None:
    w.skill(w.skills / "keyless", "keyless", metadata=gated(skillKey=""))


def _sha256(w: World) -> None:
    url = "https://example.com/tool.tar.gz"
    w.skill(
        w.skills / "dl",
        "dl",
        metadata=gated(
            requires={"bins": ["absent"]},
            install=[
                {"kind": "download", "url": url, "sha256": "not-a-digest"},
                {"kind": "download", "url": url + "?2", "sha256": "A" * 64},
            ],
        ),
    )


def _source_origin(w: World) -> None:
    folder = w.skill(w.skills / "installed", "installed")
    (folder / ".openclaw").mkdir()
    (folder / ".openclaw" / "source-origin.json").write_text('{"slug": "from-origin"}')


def _personal(w: World) -> None:
    w.skill(w.home / ".agents" / "skills" / "mine", "mine")
    w.skill(w.skills / "ws-skill", "ws-skill")


def _managed_link(w: World) -> None:
    outside = w.base / "elsewhere" / "linked"
    w.skill(outside, "linked")
    (w.state / "skills").mkdir(parents=True, exist_ok=True)
    (w.state / "skills" / "linked").symlink_to(outside)
    w.skill(w.state / "skills" / "plain-managed", "plain-managed")


def _visibility(w: World) -> None:
    w.skill(w.skills / "shown", "shown")
    w.skill(w.skills / "hidden", "hidden", disable_model_invocation="true")
    w.skill(w.skills / "quiet", "quiet", user_invocable="false")


def _install_index(w: World) -> None:
    w.skill(
        w.skills / "tool",
        "tool",
        metadata=gated(
            requires={"bins": ["absent"]},
            install=[
                {"kind": "brew", "formula": "tool", "os": ["darwin"]},
                {"kind": "node", "package": "tool"},
            ],
        ),
    )


def _blank_env(w: World) -> None:
    w.skill(w.skills / "needs-env", "needs-env", metadata=gated(requires={"env": ["BLANK_VAR"]}))
    w.skill(
        w.skills / "needs-key",
        "needs-key",
        metadata=gated(primaryEnv="KEY_VAR", requires={"env": ["KEY_VAR"]}),
    )


def _os_case(w: World) -> None:
    w.skill(w.skills / "shouty", "shouty", metadata=gated(os=["Linux"]))
    w.skill(w.skills / "mac", "mac", metadata=gated(os=["macos"]))


def _commands(w: World) -> None:
    w.skill(w.skills / "long", "long", _long(150))
    w.skill(w.skills / "focus", "focus")
    w.skill(w.skills / "goal", "goal")
    w.skill(w.skills / "no-title", "no-title")
    (w.skills / "no-title" / "SKILL.md").write_text(
        "---\nname: no-title\ndescription: d\n---\nNo heading here\n"
    )


def _candidates(w: World) -> None:
    for i in range(6):
        w.skill(w.skills / f"s{i}", f"s{i}")


def _nested(w: World) -> None:
    w.skill(w.skills / "direct", "direct")
    w.skill(w.skills / "skills" / "nested", "nested")


def _remote_note(w: World) -> None:
    for i in range(4):
        w.skill(w.skills / f"s{i}", f"s{i}", _long(200))


def _agent_limits(w: World) -> None:
    for i in range(5):
        w.skill(w.skills / f"s{i}", f"s{i}", _long(300))


def _bom(w: World) -> None:
    w.skill(w.skills / "plain", "plain")
    path = w.skill(w.skills / "bom", "bom") / "SKILL.md"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())


def _always_os(w: World) -> None:
    w.skill(w.skills / "mac-only", "mac-only", metadata=gated(always=True, os=["darwin"]))


def _effective_home(w: World) -> None:
    w.skill(w.base / "effective-home" / "ws" / "skills" / "here", "here")


def _allow_bundled_empty(w: World) -> None:
    w.skill(w.bundled / "bundled-one", "bundled-one")
    w.skill(w.skills / "mine", "mine")


def _project_escape(w: World) -> None:
    outside = w.base / "outside" / "escaped"
    w.skill(outside, "escaped")
    project = w.ws / ".agents" / "skills"
    project.mkdir(parents=True)
    (project / "escaped").symlink_to(outside)
    w.skill(project / "inside", "inside")


def _personal_link(w: World) -> None:
    outside = w.base / "outside" / "linked-personal"
    w.skill(outside, "linked-personal")
    personal = w.home / ".agents" / "skills"
    personal.mkdir(parents=True)
    (personal / "linked-personal").symlink_to(outside)


def _symlinked_md(w: World) -> None:
    folder = w.skill(w.skills / "linked-md", "linked-md")
    (folder / "real.md").write_text((folder / "SKILL.md").read_text())
    (folder / "SKILL.md").unlink()
    os.symlink("real.md", folder / "SKILL.md")
    w.skill(w.skills / "fine", "fine")


def _hardlinked_md(w: World) -> None:
    folder = w.skill(w.skills / "hard", "hard")
    os.link(folder / "SKILL.md", w.base / "hardlink-of-skill.md")
    w.skill(w.skills / "fine", "fine")


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("catalog-order", _order, ("prompt", "status", "commands")),
    Scenario("default-budget", _budget, ("prompt",)),
    Scenario(
        "compact-descriptions",
        _small_budget,
        ("prompt",),
        config={"skills": {"limits": {"maxSkillsPromptChars": 1600}}},
    ),
    Scenario(
        "notes-in-budget",
        _remote_note,
        ("prompt",),
        config={"skills": {"limits": {"maxSkillsPromptChars": 1200}}},
        remote={"platforms": ["darwin"], "bins": [], "note": "Remote macOS node available."},
    ),
    Scenario(
        "agent-prompt-limit",
        _agent_limits,
        ("prompt",),
        config={
            "agents": {"list": [{"id": "small", "skillsLimits": {"maxSkillsPromptChars": 900}}]}
        },
        agent="small",
    ),
    Scenario("grouped-discovery", _grouped, ("prompt", "status", "commands")),
    Scenario("invalid-no-children", _invalid_parent, ("prompt", "status", "commands")),
    Scenario("yaml-errors-invalid", _yaml_error, ("prompt", "status", "commands")),
    Scenario("exact-delimiters", _delimiter, ("prompt", "status", "commands")),
    Scenario("manifest-clawdbot", _legacy, ("prompt", "status", "commands")),
    Scenario("skill-key-non-empty", _skill_key, ("status",)),
    Scenario("download-sha256", _sha256, ("status",)),
    Scenario("source-origin-key", _source_origin, ("status",)),
    Scenario("personal-default-state", _personal, ("prompt", "status", "commands")),
    Scenario(
        "personal-default-state-on",
        _personal,
        ("prompt", "status", "commands"),
        default_state=True,
        pins="personal-default-state",
    ),
    Scenario(
        "personal-uncontained",
        _personal_link,
        ("prompt", "status", "commands"),
        default_state=True,
        pins="managed-uncontained",
    ),
    # Checked to be the same in both releases (compat_differences.SAME).
    Scenario(
        "allow-bundled-empty",
        _allow_bundled_empty,
        (),
        config={"skills": {"allowBundled": []}},
    ),
    Scenario("project-symlink-escape", _project_escape, ()),
    Scenario("managed-uncontained", _managed_link, ("prompt", "status", "commands")),
    Scenario(
        "status-visibility",
        _visibility,
        ("status",),
        config={"agents": {"list": [{"id": "pick", "skills": ["shown", "quiet"]}]}},
        agent="pick",
    ),
    Scenario("install-index", _install_index, ("status",)),
    Scenario(
        "env-blank",
        _blank_env,
        ("prompt", "status", "commands"),
        config={"skills": {"entries": {"needs-key": {"apiKey": "   "}}}},
        env={"BLANK_VAR": "  "},
    ),
    Scenario("status-os-normalized", _os_case, ("status",)),
    Scenario("command-specs", _commands, ("prompt", "commands")),
    Scenario(
        "candidates-limit",
        _candidates,
        ("prompt", "status", "commands"),
        config={"skills": {"limits": {"maxCandidatesPerRoot": 2, "maxSkillsLoadedPerSource": 4}}},
    ),
    Scenario("nested-root", _nested, ("prompt", "status", "commands")),
    Scenario("bom-loads", _bom, ("prompt", "status", "commands")),
    Scenario("always-os-status", _always_os, ("status",)),
    Scenario("symlinked-skill-md", _symlinked_md, ("prompt", "status", "commands")),
    Scenario(
        "home-compaction",
        _effective_home,
        ("prompt",),
        env={"OPENCLAW_HOME": "{base}/effective-home", "SKILLBOOK_HOME": "{base}/effective-home"},
        workspace="effective-home/ws",
    ),
    Scenario(
        "snapshot-resolved-kept",
        _candidates,
        ("prompt",),
        config={"skills": {"limits": {"maxSkillsInPrompt": 2}}},
        snapshot=True,
    ),
    Scenario("hardlinked-skill-md", _hardlinked_md, ("prompt", "status", "commands")),
)
