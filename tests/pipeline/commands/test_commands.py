"""Slash commands (spec §6): names, descriptions, dispatch, invocation, channel menus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillbook.base.js import utf16_len
from skillbook.diagnostics import CODES
from skillbook.model import CommandDispatch, Skill, Source
from skillbook.pipeline.commands.channels import (
    DISCORD,
    OMIT_DUPLICATE_NAME,
    OMIT_INVALID_NAME,
    OMIT_MAX_COMMANDS,
    OMIT_PAYLOAD,
    TELEGRAM,
    ChannelLimits,
    channel_view,
)
from skillbook.pipeline.commands.invocation import (
    Invocation,
    find_command,
    resolve_invocation,
    rewrite_for_model,
    tool_call_arguments,
)
from skillbook.pipeline.commands.specs import (
    DEFAULT_RESERVED_NAMES,
    ELLIPSIS,
    CommandSet,
    CommandSpec,
    Renamed,
    build_command_specs,
    reserved_names,
    sanitize_command_name,
    shorten,
    unique_command_name,
)
from skillbook.pipeline.parse.skill_file import parse_skill_text


def make_skill(
    name: str,
    description: str = "Does things",
    *,
    source: str = Source.WORKSPACE,
    extra: str = "",
) -> Skill:
    """A Skill parsed from real SKILL.md text (values quoted as JSON, which YAML reads)."""
    text = (
        f"---\nname: {json.dumps(name, ensure_ascii=False)}\n"
        f"description: {json.dumps(description, ensure_ascii=False)}\n{extra}---\nBody\n"
    )
    parsed = parse_skill_text(text)
    folder = Path("/ws/skills") / (name or "unnamed")
    return Skill(
        name=parsed.name or name,
        description=parsed.description,
        file_path=folder / "SKILL.md",
        base_dir=folder,
        source=str(source),
        parsed=parsed,
    )


def names(cs: CommandSet) -> list[str]:
    return [c.name for c in cs.commands]


# --------------------------------------------------------------------------- names


def test_commands_sanitise_dedupe_reserved() -> None:
    """§12 Commands: sanitise/dedupe/reserved → hello_world, hello_world_2, help_2."""
    skills = [make_skill("hello-world"), make_skill("hello_world"), make_skill("help")]
    cs = build_command_specs(skills, reserved={"help"})
    assert names(cs) == ["hello_world", "hello_world_2", "help_2"]
    assert [c.skill_name for c in cs.commands] == ["hello-world", "hello_world", "help"]
    assert cs.renamed == (
        Renamed("hello-world", "hello_world", "hello_world"),
        Renamed("hello_world", "hello_world", "hello_world_2"),
        Renamed("help", "help", "help_2"),
    )
    assert [r.deduplicated for r in cs.renamed] == [False, True, True]
    # Only the suffixed ones are diagnosed; sanitising alone is routine.
    assert [(d.code, d.skill) for d in cs.diagnostics] == [
        ("command.renamed", "hello_world"),
        ("command.renamed", "help"),
    ]
    assert "another skill" in cs.diagnostics[0].message
    assert "built-in command" in cs.diagnostics[1].message
    assert all(d.path is not None for d in cs.diagnostics)


def test_default_reserved_names_are_openclaws_builtin_list() -> None:
    """§6.2 baseline set (53 names, without channel `dock_*` names)."""
    assert len(DEFAULT_RESERVED_NAMES) == 53
    assert {"help", "skill", "status", "export-session", "t", "v", "bash"} <= DEFAULT_RESERVED_NAMES
    assert not any(n.startswith("dock") for n in DEFAULT_RESERVED_NAMES)
    cs = build_command_specs([make_skill("help"), make_skill("Status"), make_skill("weather")])
    assert names(cs) == ["help_2", "status_2", "weather"]


def test_reserved_names_extra_and_case() -> None:
    extra = reserved_names([" Dock_Telegram ", "", "dock-telegram"])
    assert {"dock_telegram", "dock-telegram"} <= extra
    assert "" not in extra
    assert extra > DEFAULT_RESERVED_NAMES
    # Reserved names compare case-insensitively and trimmed.
    cs = build_command_specs([make_skill("deploy")], reserved=["  DEPLOY "])
    assert names(cs) == ["deploy_2"]
    # An empty reserved set reserves nothing, not even the built-ins.
    assert names(build_command_specs([make_skill("help")], reserved=())) == ["help"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("hello-world", "hello_world"),
        ("Hello World", "hello_world"),
        ("  __a--b__  ", "a_b"),
        ("a___b", "a_b"),
        ("", "skill"),
        ("---", "skill"),
        ("日本語", "skill"),
        ("Émoji 🎉 Skill", "moji_skill"),
        ("x" * 40, "x" * 32),
        ("a" * 31 + "-b", "a" * 31 + "_"),  # cut after the strip: a trailing `_` can remain
        ("K", "k"),  # KELVIN SIGN lowercases to ASCII k, as in JavaScript
    ],
)
def test_sanitize_command_name(raw: str, expected: str) -> None:
    assert sanitize_command_name(raw) == expected


def test_unique_name_truncates_base_to_fit_suffix() -> None:
    base = "b" * 32
    assert unique_command_name(base, {base}) == "b" * 30 + "_2"
    used = {base} | {"b" * (32 - len(f"_{i}")) + f"_{i}" for i in range(2, 10)}
    assert unique_command_name(base, used) == "b" * 29 + "_10"
    assert unique_command_name("Foo", {"bar"}) == "Foo"


def test_unique_name_falls_back_to_x_after_999() -> None:
    used = {"go"} | {f"go_{i}" for i in range(2, 1000)}
    assert unique_command_name("go", used) == "go_x"
    long = "c" * 32
    used = {long} | {"c" * (32 - len(f"_{i}")) + f"_{i}" for i in range(2, 1000)}
    assert unique_command_name(long, used) == "c" * 30 + "_x"


def test_shared_used_set_spans_calls() -> None:
    """§6.3: one growing `used` set across workspaces; assigned names are added to it."""
    used: set[str] = set()
    first = build_command_specs([make_skill("deploy")], reserved=(), used=used)
    second = build_command_specs([make_skill("deploy")], reserved=(), used=used)
    assert names(first) == ["deploy"]
    assert names(second) == ["deploy_2"]
    assert used == {"deploy", "deploy_2"}


def test_user_invocable_false_excluded_model_hidden_included() -> None:
    """§12 Commands: `user-invocable: false` → no command; §6.6 hidden skills are commands."""
    skills = [
        make_skill("quiet", extra="user-invocable: false\n"),
        make_skill("nope", extra="user-invocable: no\n"),
        make_skill("secret", extra="disable-model-invocation: true\n"),
    ]
    cs = build_command_specs(skills)
    assert names(cs) == ["secret"]


# --------------------------------------------------------------------------- descriptions


def test_long_description_is_cut_to_100_with_ellipsis() -> None:
    """§12 Commands: description >100 → ≤100 chars ending with `…`; short unchanged."""
    long = "word " * 40
    short = "Short and sweet"
    cs = build_command_specs([make_skill("long", long), make_skill("short", short)])
    cut = cs.commands[0].description
    assert len(cut) == 100
    assert cut.endswith(ELLIPSIS)
    assert cut == long.strip()[:99] + ELLIPSIS
    assert cs.commands[1].description == short
    assert [d.code for d in cs.diagnostics] == ["command.description-shortened"]


def test_description_boundaries_count_utf16_units() -> None:
    exactly = "a" * 100
    assert shorten(exactly, 100) == exactly
    assert shorten("a" * 101, 100) == "a" * 99 + ELLIPSIS
    # 98 units + an astral emoji (2 units) + more: OpenClaw's cut keeps half the pair.
    text = "a" * 98 + "🎉" + "b"
    assert shorten(text, 100) == "a" * 98 + "\ud83c" + ELLIPSIS
    assert shorten(text, 100, keep_pairs=True) == "a" * 98 + ELLIPSIS
    # An emoji that ends exactly at unit 100 is no cut at all.
    fits = "a" * 98 + "🎉"
    assert utf16_len(fits) == 100
    assert shorten(fits, 100) == fits


def test_blank_description_falls_back_to_name() -> None:
    skill = make_skill("plain")
    blank = Skill(
        name="plain",
        description="  \ufeff ",
        file_path=skill.file_path,
        base_dir=skill.base_dir,
        source=skill.source,
        parsed=skill.parsed,
    )
    assert build_command_specs([blank]).commands[0].description == "plain"


# --------------------------------------------------------------------------- dispatch


def test_dispatch_spec_shape() -> None:
    """§12 Commands: command-dispatch tool + sessions_send → {kind, toolName, argMode}."""
    skill = make_skill(
        "send", extra="command-dispatch: tool\ncommand-tool: sessions_send\ncommand-arg-mode: raw\n"
    )
    spec = build_command_specs([skill], reserved=()).commands[0]
    assert spec.dispatch == CommandDispatch(tool_name="sessions_send")
    assert spec.to_json() == {
        "name": "send",
        "skillName": "send",
        "description": "Does things",
        "dispatch": {"kind": "tool", "toolName": "sessions_send", "argMode": "raw"},
    }
    assert "dispatch" not in build_command_specs([make_skill("x")]).commands[0].to_json()
    assert spec.source == "openclaw-workspace"
    assert CommandSpec.from_json(spec.to_json(), source=spec.source) == spec


# --------------------------------------------------------------------------- invocation


@pytest.fixture
def demo() -> CommandSet:
    return build_command_specs(
        [make_skill("demo-skill"), make_skill("demo_skill"), make_skill("Other Thing")]
    )


def test_invoke_by_name(demo: CommandSet) -> None:
    """§12 Commands: `/demo_skill do the thing` → skill demo-skill, args `do the thing`."""
    inv = resolve_invocation("/demo_skill do the thing", demo)
    assert inv is not None
    assert inv.command.skill_name == "demo-skill"
    assert inv.args == "do the thing"
    assert resolve_invocation("  /DEMO_SKILL   x  ", demo) == Invocation(demo.commands[0], "x")


def test_invoke_via_skill_command(demo: CommandSet) -> None:
    """§12 Commands: `/skill demo_skill …` works; `/skill demo-skill` → demo_skill, no args."""
    inv = resolve_invocation("/skill demo_skill do the thing", demo)
    assert inv is not None and inv.command.name == "demo_skill" and inv.args == "do the thing"
    # The lookup matches names and skill names, then the `-` normalisation, first hit wins.
    inv = resolve_invocation("/skill demo-skill", demo)
    assert inv is not None
    assert inv.command.name == "demo_skill" and inv.command.skill_name == "demo-skill"
    assert inv.args is None
    inv = resolve_invocation("/skill other-thing  now ", demo)
    assert inv is not None and inv.command.name == "other_thing" and inv.args == "now"
    inv = resolve_invocation("/Skill OTHER_THING", demo)
    assert inv is not None and inv.command.skill_name == "Other Thing"


@pytest.mark.parametrize(
    "text", ["/unknown", "demo_skill", "", "   ", "/", "/skill", "/skill   ", "/skill nope x"]
)
def test_unknown_invocation_is_none(demo: CommandSet, text: str) -> None:
    """§12 Commands: unknown → null."""
    assert resolve_invocation(text, demo) is None


def test_invocation_uses_javascript_whitespace(demo: CommandSet) -> None:
    # U+3000 and U+FEFF separate in JavaScript; U+001C does not (Python's isspace says yes).
    inv = resolve_invocation("/demo_skill\u3000go\ufeff", demo)
    assert inv is not None and inv.args == "go"
    assert resolve_invocation("/demo_skill\x1cgo", demo) is None
    inv = resolve_invocation("/demo_skill go\x1c", demo)
    assert inv is not None and inv.args == "go\x1c"


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("/send_it  --flag \"a  b\"\n\tline2 'q'  ", "--flag \"a  b\"\n\tline2 'q'"),
        ("/send_it -", "-"),
        ("/send_it\n\n  first\n\n  second\n", "first\n\n  second"),
        ('/skill send_it -n 3 "x   y"', '-n 3 "x   y"'),
        ("/send_it `code` $HOME; rm -rf ~ && echo 'hi'", "`code` $HOME; rm -rf ~ && echo 'hi'"),
    ],
)
def test_dispatch_args_passed_untouched(text: str, args: str) -> None:
    """Regression (OpenClaw #59228): tool-dispatch arguments keep their inner content."""
    skill = make_skill("send-it", extra="command-dispatch: tool\ncommand-tool: sessions_send\n")
    cs = build_command_specs([skill])
    inv = resolve_invocation(text, cs)
    assert inv is not None and inv.command.dispatch is not None
    assert inv.args == args
    assert tool_call_arguments(inv) == {
        "command": args,
        "commandName": "send_it",
        "skillName": "send-it",
    }


def test_dispatch_payloads(demo: CommandSet) -> None:
    inv = Invocation(demo.commands[0], None)
    assert tool_call_arguments(inv) == {
        "command": "",
        "commandName": "demo_skill",
        "skillName": "demo-skill",
    }
    assert rewrite_for_model(inv) == 'Use the "demo-skill" skill for this request.'
    with_args = Invocation(demo.commands[0], "line 1\nline 2")
    assert rewrite_for_model(with_args) == (
        'Use the "demo-skill" skill for this request.\n\nUser input:\nline 1\nline 2'
    )
    assert with_args.to_json() == {"command": demo.commands[0].to_json(), "args": "line 1\nline 2"}
    assert "args" not in inv.to_json()


def test_find_command_by_skill_name() -> None:
    specs = [
        CommandSpec("a", "Alpha", "x"),
        CommandSpec("a_2", "alpha", "y"),
        CommandSpec("b", "", "z"),
        CommandSpec("c", "", "w"),
    ]
    assert find_command(specs, "ALPHA") is specs[0]
    assert find_command(specs, "  ") is None


# --------------------------------------------------------------------------- channels


def _many(n_bundled: int, n_workspace: int) -> CommandSet:
    skills = [make_skill(f"bundled-{i}", source=Source.BUNDLED) for i in range(n_bundled)]
    skills += [make_skill(f"ws-{i}", source=Source.WORKSPACE) for i in range(n_workspace)]
    return build_command_specs(skills)


def test_telegram_view_keeps_workspace_commands_first() -> None:
    """120 skills → Telegram's 100, all workspace ones kept, the rest listed as omitted."""
    cs = _many(100, 20)
    view = channel_view(cs, TELEGRAM)
    assert len(view.commands) == 100
    kept = {c.name for c in view.commands}
    assert {f"ws_{i}" for i in range(20)} <= kept
    assert [o.command.name for o in view.omitted] == [f"bundled_{i}" for i in range(80, 100)]
    assert {o.reason for o in view.omitted} == {OMIT_MAX_COMMANDS}
    # Kept commands stay in input order (bundled first, as loaded).
    assert [c.name for c in view.commands][:2] == ["bundled_0", "bundled_1"]
    assert [d.code for d in view.diagnostics] == ["command.channel-omitted"] * 20
    assert "Telegram" in view.diagnostics[0].message


def test_channel_view_without_priority_keeps_the_first() -> None:
    view = channel_view(_many(100, 20), TELEGRAM, priority=False)
    assert [c.name for c in view.commands] == [f"bundled_{i}" for i in range(100)]
    assert [o.command.name for o in view.omitted] == [f"ws_{i}" for i in range(20)]


def test_telegram_payload_budget_shortens_descriptions() -> None:
    """Telegram: 100 commands × (32-char name + 100-char description) > 5,700 → fitted."""
    skills = [make_skill(f"{i:03d}" + "n" * 29, "d" * 200) for i in range(100)]
    view = channel_view(build_command_specs(skills), TELEGRAM)
    assert len(view.commands) == 100 and not view.omitted
    total = sum(utf16_len(c.name) + utf16_len(c.description) for c in view.commands)
    assert total <= 5_700
    # (5700 - 100*32) / 100 = 25 units for each description.
    assert {c.description for c in view.commands} == {"d" * 24 + ELLIPSIS}
    assert len(view.shortened) == 100


def test_payload_budget_spares_short_descriptions() -> None:
    specs = [CommandSpec("a", "a", "x" * 300), CommandSpec("b", "b", "short")]
    view = channel_view(specs, ChannelLimits(10, 32, 1000, 60))
    assert view.commands[1].description == "short"
    assert utf16_len(view.commands[0].description) == 60 - 2 - 5
    assert view.shortened == ("a",)


def test_payload_budget_drops_lowest_priority_when_names_do_not_fit() -> None:
    specs = [
        CommandSpec("bundled_one", "b1", "d", source=Source.BUNDLED),
        CommandSpec("workspace_1", "w1", "d", source=Source.WORKSPACE),
        CommandSpec("workspace_2", "w2", "d", source=Source.WORKSPACE),
    ]
    view = channel_view(specs, ChannelLimits(10, 32, 100, 24))
    assert [c.name for c in view.commands] == ["workspace_1", "workspace_2"]
    assert [(o.command.name, o.reason) for o in view.omitted] == [("bundled_one", OMIT_PAYLOAD)]
    tiny = channel_view(specs, ChannelLimits(10, 32, 100, 5))
    assert tiny.commands == () and len(tiny.omitted) == 3


def test_discord_view_and_name_checks() -> None:
    specs = [
        CommandSpec("ok", "ok", "e" * 150),
        CommandSpec("OK", "dup", "same name, other case"),
        CommandSpec("x" * 33, "long", "name too long"),
        CommandSpec("", "blank", "no name"),
        CommandSpec("emoji", "emoji", "a" * 98 + "\ud83c" + ELLIPSIS),
    ]
    view = channel_view(specs, DISCORD)
    assert [c.name for c in view.commands] == ["ok", "emoji"]
    assert view.commands[0].description == "e" * 99 + ELLIPSIS
    # A lone surrogate (OpenClaw's cut) would not encode as UTF-8: it is dropped.
    assert view.commands[1].description == "a" * 98 + ELLIPSIS
    view.commands[1].description.encode("utf-8")
    assert [o.reason for o in view.omitted] == [
        OMIT_DUPLICATE_NAME,
        OMIT_INVALID_NAME,
        OMIT_INVALID_NAME,
    ]
    telegram = channel_view([CommandSpec("Has-Dash", "x", "y")], TELEGRAM)
    assert telegram.commands == () and telegram.omitted[0].reason == OMIT_INVALID_NAME


def test_channel_presets() -> None:
    assert (TELEGRAM.max_commands, TELEGRAM.max_name_len, TELEGRAM.max_description_len) == (
        100,
        32,
        256,
    )
    assert TELEGRAM.max_payload_chars == 5_700
    assert (DISCORD.max_commands, DISCORD.max_name_len, DISCORD.max_description_len) == (
        100,
        32,
        100,
    )
    assert DISCORD.max_payload_chars is None


def test_diagnostic_codes_registered() -> None:
    for code in ("command.renamed", "command.description-shortened", "command.channel-omitted"):
        assert code in CODES
