"""skillbook.config.file: strict ``skills`` schema, open ``agents``, JSON5, key-path errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillbook.config import file as config_file
from skillbook.config.errors import MISSING
from skillbook.config.file import Config, SecretRef, load_config, resolve_config_path
from skillbook.errors import ConfigError, SkillbookError, SkillNotFound


def _error(obj: Any) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        Config.from_mapping(obj, file=Path("openclaw.json"))
    return info.value


def test_error_tree() -> None:
    assert issubclass(ConfigError, SkillbookError)
    assert issubclass(ConfigError, ValueError)
    assert issubclass(SkillNotFound, LookupError)
    assert issubclass(SkillNotFound, SkillbookError)


def test_empty_config() -> None:
    cfg = Config.empty()
    assert cfg.skills.allow_bundled is None
    assert cfg.skills.entries == {}
    assert cfg.agents.agents == ()
    assert cfg.raw == {}
    assert Config.from_mapping({}) == cfg


def test_full_skills_section_is_read() -> None:
    cfg = Config.from_mapping(
        {
            "skills": {
                "allowBundled": ["a", "b"],
                "load": {
                    "extraDirs": ["~/x"],
                    "watch": False,
                    "watchDebounceMs": 0,
                    "allowSymlinkTargets": ["/opt"],
                    "grouped": True,
                    "mode": "mixed",
                },
                "install": {"preferBrew": False, "nodeManager": "pnpm"},
                "limits": {
                    "maxCandidatesPerRoot": 1,
                    "maxSkillsLoadedPerSource": 2,
                    "maxSkillsInPrompt": 0,
                    "maxSkillsPromptChars": 10,
                    "maxSkillFileBytes": 0,
                },
                "prompt": {"priority": "source"},
                "readTool": "Read",
                "entries": {
                    "alpha": {
                        "enabled": False,
                        "apiKey": "k",
                        "env": {"A": "1"},
                        "config": {"anything": [1, {"x": None}], "n": 1.0},
                    },
                    "beta": {"apiKey": {"source": "env", "provider": "default", "id": "B_KEY"}},
                },
            }
        }
    )
    s = cfg.skills
    assert s.allow_bundled == ("a", "b")
    assert s.load.extra_dirs == ("~/x",)
    assert s.load.watch is False and s.load.watch_debounce_ms == 0
    assert s.load.allow_symlink_targets == ("/opt",)
    assert s.load.grouped is True and s.load.mode == "mixed"
    assert s.install.prefer_brew is False and s.install.node_manager == "pnpm"
    assert s.limits.max_candidates_per_root == 1
    assert s.limits.max_skills_in_prompt == 0
    assert s.limits.max_skill_file_bytes == 0
    assert s.prompt.priority == "source"
    assert s.read_tool == "Read"
    alpha = cfg.entry("alpha")
    assert alpha is not None and alpha.enabled is False and alpha.api_key == "k"
    assert alpha.env == {"A": "1"}
    # Custom config values are kept exactly as written.
    assert alpha.config == {"anything": [1, {"x": None}], "n": 1.0}
    beta = cfg.entry("beta")
    assert beta is not None
    assert beta.api_key == SecretRef("env", "default", "B_KEY")
    assert beta.has_api_key
    assert cfg.entry("gamma") is None


def test_config_schema_entries_config_accepts_custom_fields() -> None:
    """§12 Config schema: `entries.<k>.config` accepts custom fields."""
    cfg = Config.from_mapping({"skills": {"entries": {"x": {"config": {"whatever": {"deep": 1}}}}}})
    entry = cfg.entry("x")
    assert entry is not None and entry.config["whatever"] == {"deep": 1}


def test_config_schema_rejects_legacy_skills_policy() -> None:
    """§12 Config schema: `skills.policy` rejected."""
    err = _error({"skills": {"policy": {"allow": []}}})
    assert err.key_path == "skills.policy"
    assert str(err).startswith("openclaw.json: skills.policy: unknown key")
    assert "allowBundled" in str(err)
    assert err.file == Path("openclaw.json")


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (
            {"skills": {"load": {"extraDir": []}}},
            "skills.load.extraDir: unknown key; did you mean extraDirs?",
        ),
        (
            {"skills": {"entries": {"w": {"enable": False}}}},
            "skills.entries.w.enable: unknown key; did you mean enabled?",
        ),
        ({"skills": {"Load": {}}}, "skills.Load: unknown key; did you mean load?"),
        (
            {"skills": {"selection": {"topk": 3}}},
            "skills.selection.topk: unknown key; did you mean topK?",
        ),
    ],
)
def test_an_unknown_key_one_slip_from_a_known_one_names_it(data: dict[str, Any], said: str) -> None:
    assert str(_error(data)).startswith(f"openclaw.json: {said} (expected one of: ")


def test_an_unknown_key_like_none_gets_no_guess() -> None:
    assert "did you mean" not in str(_error({"skills": {"policy": {}}}))


def test_config_schema_rejects_unknown_entry_field() -> None:
    """§12 Config schema: unknown entry fields rejected."""
    err = _error({"skills": {"entries": {"x": {"foo": 1}}}})
    assert err.key_path == "skills.entries.x.foo"
    assert "unknown key" in str(err)


def test_wrong_type_names_key_path_and_expectation() -> None:
    err = _error({"skills": {"limits": {"maxSkillsInPrompt": "many"}}})
    assert str(err) == (
        'openclaw.json: skills.limits.maxSkillsInPrompt: expected int >= 0, got "many"'
    )
    assert err.key_path == "skills.limits.maxSkillsInPrompt"


@pytest.mark.parametrize(
    ("obj", "key_path", "fragment"),
    [
        ({"skills": {"load": {"extraDirs": ["a", 3]}}}, "skills.load.extraDirs[1]", "string"),
        ({"skills": {"load": {"extraDirs": "a"}}}, "skills.load.extraDirs", "array of strings"),
        ({"skills": {"load": {"watch": "yes"}}}, "skills.load.watch", "boolean"),
        ({"skills": {"load": {"watchDebounceMs": -1}}}, "skills.load.watchDebounceMs", ">= 0"),
        ({"skills": {"load": {"mode": "loose"}}}, "skills.load.mode", '"strict"'),
        (
            {"skills": {"limits": {"maxCandidatesPerRoot": 0}}},
            "skills.limits.maxCandidatesPerRoot",
            ">= 1",
        ),
        (
            {"skills": {"limits": {"maxSkillsInPrompt": True}}},
            "skills.limits.maxSkillsInPrompt",
            "int",
        ),
        (
            {"skills": {"limits": {"maxSkillsInPrompt": 1.5}}},
            "skills.limits.maxSkillsInPrompt",
            "int",
        ),
        ({"skills": {"install": {"nodeManager": "pip"}}}, "skills.install.nodeManager", '"npm"'),
        ({"skills": {"prompt": {"priority": "name"}}}, "skills.prompt.priority", '"source"'),
        ({"skills": {"readTool": 1}}, "skills.readTool", "string"),
        ({"skills": {"allowBundled": [None]}}, "skills.allowBundled[0]", "string"),
        ({"skills": {"entries": {"x": "on"}}}, "skills.entries.x", "object"),
        (
            {"skills": {"entries": {"x": {"enabled": "false"}}}},
            "skills.entries.x.enabled",
            "boolean",
        ),
        ({"skills": {"entries": {"x": {"apiKey": 3}}}}, "skills.entries.x.apiKey", "secret ref"),
        (
            {
                "skills": {
                    "entries": {"x": {"apiKey": {"source": "vault", "provider": "p", "id": "i"}}}
                }
            },
            "skills.entries.x.apiKey.source",
            '"env"',
        ),
        (
            {"skills": {"entries": {"a.b": {"env": {"K": "v", "N": 2}}}}},
            'skills.entries["a.b"].env.N',
            "string",
        ),
        ({"skills": None}, "skills", "object"),
        ({"skills": {"load": None}}, "skills.load", "object"),
        ({"agents": {"list": [{"id": "a", "skills": "x"}]}}, "agents.list[0].skills", "array"),
        ({"agents": {"list": [{"skills": []}]}}, "agents.list[0].id", "required"),
        ({"agents": {"defaults": {"skills": [1]}}}, "agents.defaults.skills[0]", "string"),
    ],
)
def test_errors_name_the_key_path(obj: Any, key_path: str, fragment: str) -> None:
    err = _error(obj)
    assert err.key_path == key_path
    assert str(err).startswith(f"openclaw.json: {key_path}: ")
    assert fragment in str(err)


def test_top_level_must_be_object() -> None:
    err = _error([1, 2])
    assert "top level" in str(err)


def test_integral_float_counts_as_int() -> None:
    # JSON5 `5.0` is the JavaScript number 5.
    cfg = Config.from_mapping({"skills": {"limits": {"maxSkillsInPrompt": 5.0}}})
    assert cfg.skills.limits.max_skills_in_prompt == 5
    assert isinstance(cfg.skills.limits.max_skills_in_prompt, int)


def test_agents_keep_openclaw_keys_and_record_skills_presence() -> None:
    """§12 Config schema: agent `skills` arrays (incl. `[]`) accepted."""
    cfg = Config.from_mapping(
        {
            "agents": {
                "defaults": {"skills": ["a"], "workspace": "~/ws", "model": "x"},
                "list": [
                    {"id": "none", "skills": [], "model": {"primary": "y"}, "tools": {}},
                    {"id": "inherit", "default": True, "workspace": "/w"},
                ],
            },
            "browser": {"enabled": False},
        }
    )
    a = cfg.agents
    assert a.default_skills == ("a",)
    assert a.default_workspace == "~/ws"
    none, inherit = a.agents
    assert none.skills == ()
    assert inherit.skills is None
    assert inherit.default is True and inherit.workspace == "/w"
    # Unknown sections and OpenClaw's agent keys stay in raw.
    assert cfg.raw["browser"] == {"enabled": False}
    assert cfg.raw["agents"]["list"][0]["model"] == {"primary": "y"}


def test_resolve_config_path_js_semantics() -> None:
    raw = {"browser": {"enabled": False, "n": None}, "list": [{"a": 1}], "s": "str"}
    assert resolve_config_path(raw, "browser.enabled") is False
    assert resolve_config_path(raw, "browser.n") is None
    assert resolve_config_path(raw, "browser.missing") is MISSING
    assert resolve_config_path(raw, "..browser..enabled.") is False
    assert resolve_config_path(raw, "list.0.a") == 1
    assert resolve_config_path(raw, "list.length") == 1
    assert resolve_config_path(raw, "list.1") is MISSING
    assert resolve_config_path(raw, "s.x") is MISSING
    assert resolve_config_path(raw, "") == raw


def test_load_json5_with_comments_and_trailing_commas(tmp_path: Path) -> None:
    f = tmp_path / "openclaw.json"
    f.write_text(
        """// OpenClaw config
{
  skills: {
    /* block comment */
    allowBundled: ['peekaboo',],
    entries: {'my-skill': {enabled: false,},},
  },
}
""",
        encoding="utf-8",
    )
    cfg = load_config(f)
    assert cfg.skills.allow_bundled == ("peekaboo",)
    entry = cfg.entry("my-skill")
    assert entry is not None and entry.enabled is False
    assert cfg.file == f


def test_load_plain_json_with_bom(tmp_path: Path) -> None:
    f = tmp_path / "openclaw.json"
    f.write_bytes(b'\xef\xbb\xbf{"skills": {"readTool": "Read"}}')
    assert load_config(f).skills.read_tool == "Read"


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    f = tmp_path / "openclaw.json"
    f.write_text('{"skills": {"limits": {"maxSkillsInPrompt": "many"}}}', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(f)
    assert str(info.value) == (
        f'{f}: skills.limits.maxSkillsInPrompt: expected int >= 0, got "many"'
    )
    assert info.value.file == f

    f.write_text("{skills: [", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid JSON5"):
        load_config(f)

    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "absent.json")


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_a_config_not_in_utf8_names_the_byte_and_its_place(tmp_path: Path, bom: bytes) -> None:
    """It said `cannot read config: 'utf-8' codec can't decode byte 0xe9 in position 42:
    invalid continuation byte`."""
    f = tmp_path / "skillbook.json"
    f.write_bytes(bom + b'{\n  skills: { entries: { w: { env: { A: "caf\xe9" } } } }\n}\n')
    with pytest.raises(ConfigError) as info:
        load_config(f)
    assert str(info.value) == (
        f"{f}:2:43: cannot read config: byte 0xe9 is not UTF-8 (save the file as UTF-8)"
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "{\n  skills: {\n    load: { grouped: true }\n    entries: {}\n  }\n}\n",
            ':4:5: invalid JSON5: unexpected "e" (is a comma missing at the end of line 3?)',
        ),
        (
            '{\n  "a": {"b": 1} // why\n\n  // more\n  "c": 2\n}\n',
            ':5:3: invalid JSON5: unexpected """ (is a comma missing at the end of line 2?)',
        ),
        (
            "{ skills: { entries: { w: { enabled: flase } } } }",
            ':1:39: invalid JSON5: unexpected "l" (a text value needs quotes; '
            "true, false and null are lowercase)",
        ),
        (
            "{ skills: { load: { mode: strict } } }",
            ':1:27: invalid JSON5: unexpected "s" (a text value needs quotes; '
            "true, false and null are lowercase)",
        ),
        (
            "{skills: [",
            ":1:11: invalid JSON5: unexpected end of input (a {, [ or quote is left open)",
        ),
        ('{\n  "a": "https://x",\n  "b" 1}', ':3:7: invalid JSON5: unexpected "1"'),
        (
            '{ skills: { allowBundled: ["github", weather] } }',
            ':1:38: invalid JSON5: unexpected "w" (a text value needs quotes; '
            "true, false and null are lowercase)",
        ),
    ],
)
def test_invalid_json5_names_line_column_and_the_likely_slip(
    tmp_path: Path, text: str, said: str
) -> None:
    """The json5 package says `<string>:4 Unexpected "e" at column 5`: no file position
    an editor can jump to, and nothing about the missing comma behind it."""
    f = tmp_path / "skillbook.json"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(f)
    assert str(info.value) == f"{f}{said}"


def test_a_config_is_read_up_to_a_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A config linked to /dev/zero was read until memory ran out (found by the crash
    hunt); the read stops past the bound. The bound is lowered here so a plain file
    shows it (a device would never end on the code before)."""
    monkeypatch.setattr(config_file, "MAX_CONFIG_BYTES", 64, raising=False)
    f = tmp_path / "openclaw.json"
    f.write_text('{"skills": {"readTool": "Read"}}' + " " * 40, encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read config: larger than 64 bytes"):
        load_config(f)
    f.write_text('{"skills": {"readTool": "Read"}}', encoding="utf-8")
    assert load_config(f).skills.read_tool == "Read"
    if Path("/dev/zero").exists():
        (tmp_path / "zero.json").symlink_to("/dev/zero")
        with pytest.raises(ConfigError, match="larger than"):
            load_config(tmp_path / "zero.json")


@pytest.mark.parametrize(
    ("server", "key_path", "detail"),
    [
        ({"name": "a"}, "skills.mcp.servers[0]", "give exactly one of `command` (stdio) or `url`"),
        ({"name": "../x", "command": ["x"]}, "skills.mcp.servers[0].name", "expected 1-64 letters"),
        ({"name": "a", "command": []}, "skills.mcp.servers[0].command", "expected non-empty array"),
        (
            {"name": "a", "command": ["x", ""]},
            "skills.mcp.servers[0].command[1]",
            "non-empty string",
        ),
        (
            {"name": "a", "url": "ftp://x"},
            "skills.mcp.servers[0].url",
            'expected an http:// or https:// URL, got "ftp://x"',
        ),
        (
            {"name": "a", "url": "http://h/", "cwd": "/"},
            "skills.mcp.servers[0].cwd",
            "only a stdio",
        ),
        ({"name": "a", "url": "http://h/", "timeout": -1}, "skills.mcp.servers[0].timeout", "> 0"),
        ({"name": "a", "command": ["x"], "extra": 1}, "skills.mcp.servers[0].extra", "unknown key"),
    ],
)
def test_mcp_servers_are_checked_by_the_config_schema(
    server: dict[str, Any], key_path: str, detail: str
) -> None:
    with pytest.raises(ConfigError) as err:
        Config.from_mapping({"skills": {"mcp": {"servers": [server]}}}, file=Path("c.json"))
    assert err.value.key_path == key_path
    assert str(err.value).startswith(f"c.json: {key_path}: ") and detail in str(err.value)


def test_mcp_server_timeouts_must_be_finite(tmp_path: Path) -> None:
    file = tmp_path / "c.json5"
    file.write_text(
        '{skills: {mcp: {servers: [{name: "a", url: "http://h/", timeout: Infinity}]}}}'
    )
    with pytest.raises(ConfigError, match=r"servers\[0\]\.timeout: expected a number of seconds"):
        load_config(file)


def test_mcp_servers_become_values() -> None:
    cfg = Config.from_mapping(
        {"skills": {"mcp": {"servers": [{"name": "a", "command": ["x", "y"], "timeout": 5}]}}}
    )
    (server,) = cfg.skills.mcp_servers
    assert server.command == ("x", "y") and server.timeout_s == 5.0 and server.transport == "stdio"
    assert cfg.source_sections() == ("skills.mcp",)
    assert Config.empty().source_sections() == ()


def test_selection_null_skill_is_a_checked_boolean() -> None:
    assert Config.from_mapping({}).skills.selection.null_skill is None
    off = Config.from_mapping({"skills": {"selection": {"nullSkill": False}}})
    assert off.skills.selection.null_skill is False
    with pytest.raises(ConfigError, match="nullSkill"):
        Config.from_mapping({"skills": {"selection": {"nullSkill": "no"}}})
