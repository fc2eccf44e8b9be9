"""Differential tests: slash commands and invocations against OpenClaw's own code.

Each scenario writes a workspace of SKILL.md files, asks the oracle for its
``entries`` (load order), ``commands`` and ``invoke`` results in one batch, and
compares them with :func:`build_command_specs` / :func:`resolve_invocation` on skills
that skillbook parsed from the same files (``parse_skill_text``), in the oracle's load
order, with the same reserved names on both sides (§12 "Commands").
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from factories import write_skill
from oracle_support import Oracle, run_batch

from skillbook.model import Skill, Source
from skillbook.pipeline.commands.invocation import resolve_invocation
from skillbook.pipeline.commands.specs import (
    DEFAULT_RESERVED_NAMES,
    CommandSpec,
    build_command_specs,
    sanitize_command_name,
)
from skillbook.pipeline.discovery.discover import Root, discover
from skillbook.pipeline.parse.skill_file import parse_skill_text

pytestmark = pytest.mark.oracle

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _needs_oracle(oracle: Oracle) -> None:
    """Every test here runs OpenClaw's code; the ``oracle`` fixture finds it or skips."""


def run_oracle(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r["result"] for r in run_batch(requests)]


def write_workspace(root: Path, files: dict[str, str]) -> Path:
    """``files`` maps a skill folder name to the frontmatter lines of its SKILL.md."""
    for folder, frontmatter in files.items():
        write_skill(root / "skills" / folder, None, None, raw=frontmatter, body=f"\n# {folder}\n")
    return root


def fm(name: str | None, description: str, **extra: str) -> str:
    lines = [] if name is None else [f"name: {json.dumps(name, ensure_ascii=False)}"]
    lines.append(f"description: {json.dumps(description, ensure_ascii=False)}")
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def our_skills(entries: list[dict[str, Any]]) -> list[Skill]:
    """Skills skillbook parses from the files the oracle loaded, in its order."""
    skills = []
    for entry in entries:
        path = Path(entry["skill"]["filePath"])
        parsed = parse_skill_text(path.read_bytes(), path=path)
        skills.append(
            Skill(
                name=parsed.name or path.parent.name,
                description=parsed.description,
                file_path=path,
                base_dir=path.parent,
                source=Source.WORKSPACE,
                parsed=parsed,
            )
        )
    return skills


def compare(
    ws: Path,
    *,
    reserved: Sequence[str] | None,
    texts: Sequence[str] = (),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run both sides; returns (ours, theirs) commands after asserting every difference."""
    req: dict[str, Any] = {"workspace": str(ws)}
    if reserved is not None:
        req["reservedNames"] = list(reserved)
    entries, theirs, invoked = run_oracle(
        [
            {"op": "entries", **req},
            {"op": "commands", **req},
            {"op": "invoke", **req, "texts": list(texts) or ["/x"]},
        ]
    )
    skills = our_skills(entries["entries"])
    assert [s.name for s in skills] == [e["skill"]["name"] for e in entries["entries"]]
    cs = build_command_specs(
        skills, reserved=DEFAULT_RESERVED_NAMES if reserved is None else reserved
    )
    ours = cs.to_json()
    assert ours == theirs["commands"]
    for result in invoked["results"] if texts else []:
        got = resolve_invocation(result["text"], cs)
        assert (got.to_json() if got else None) == result["invocation"], result["text"]
    return ours, theirs["commands"]


COLLIDING = {
    "hello-world": fm("hello-world", "Greets"),
    "hello_world": fm("hello_world", "Another greeter"),
    "hello-world-3": fm("Hello World", "Third greeter"),
    "help": fm("help", "Explains things"),
    "status": fm("Status", "Shows status"),
    "skill": fm("skill", "Named like the /skill command"),
    "bang": fm("!!!", "Sanitises to nothing"),
    "kanji": fm("日本語", "Also sanitises to nothing"),
    "long-a": fm("a" * 40 + "-one", "Long name one"),
    "long-b": fm("a" * 40 + "-two", "Long name two"),
    "long-c": fm("a" * 30 + "_2", "Takes the first suffixed candidate"),
    "emoji": fm("Émoji 🎉 Skill", "Unicode name"),
    "under": fm("__x__y__", "Underscores"),
    "quiet": fm("quiet", "Not a command", user_invocable="false"),
    "quiet-no": fm("quiet-no", "Not a command either", user_invocable="no"),
    "secret": fm("secret", "Hidden from the model", disable_model_invocation="true"),
    "noname": fm(None, "Name from the folder"),
}


@pytest.mark.parametrize(
    "reserved",
    [None, [], ["help"], ["HELP", " Status ", "hello_world", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]],
    ids=["builtin", "none", "help", "mixed-case"],
)
def test_colliding_and_reserved_names_match_oracle(
    tmp_path: Path, reserved: list[str] | None
) -> None:
    """§12 Commands: sanitise/dedupe/reserved, user-invocable false, hidden skills kept."""
    ws = write_workspace(tmp_path, COLLIDING)
    ours, _ = compare(
        ws,
        reserved=reserved,
        texts=[
            "/hello_world hi",
            "/hello_world_2",
            "/hello_world_3   a  b  ",
            "/help",
            "/help_2 me",
            "/skill help",
            "/skill hello-world x",
            "/skill Hello World",
            "/skill hello_world_3",
            "/skill !!!",
            "/skill 日本語 go",
            "/skill",
            "/skill skill",
            "/skill_2",
            "/secret now",
            "/quiet",
            "/skill quiet",
            "/noname",
            "/NoName  ARGS ",
            "/moji_skill",
            "/skill émoji-🎉-skill",
            "/x_y",
            "/skill __x__y__",
        ],
    )
    assert len(ours) == len(COLLIDING) - 2


def test_builtin_reserved_list_matches_oracle() -> None:
    (result,) = run_oracle([{"op": "reserved"}])
    assert frozenset(result["names"]) == DEFAULT_RESERVED_NAMES


BOUNDARY = "a" * 98
DESCRIPTIONS = {
    "d100": "x" * 100,
    "d101": "x" * 101,
    "d-emoji-99": BOUNDARY + "🎉" + "tail",  # the cut splits the pair at unit 99/100
    "d-emoji-fits": BOUNDARY + "🎉",  # exactly 100 units: kept
    "d-emoji-101": BOUNDARY + "b🎉",  # 101 units: the emoji is dropped whole
    "d-emoji-97": "a" * 97 + "🎉🎉",  # pair ends at 99: kept before the ellipsis
    "d-spaces": "   padded description   ",
    "d-newline": "line one\nline two " + "z" * 120,
    "d-cjk": "説明" * 60,
    "d-astral-only": "🎉" * 60,
}


def test_long_descriptions_match_oracle(tmp_path: Path) -> None:
    """§12 Commands: descriptions > 100 UTF-16 units cut to 99 + `…`, short unchanged."""
    ws = write_workspace(tmp_path, {k: fm(k, v) for k, v in DESCRIPTIONS.items()})
    ours, _ = compare(ws, reserved=[])
    by_name = {c["skillName"]: c["description"] for c in ours}
    assert by_name["d100"] == "x" * 100
    assert by_name["d-emoji-99"] == BOUNDARY + "\ud83c…"


def test_dispatch_fields_match_oracle(tmp_path: Path) -> None:
    """§12 Commands: `command-dispatch: tool` + `command-tool` → dispatch spec."""
    ws = write_workspace(
        tmp_path,
        {
            "send": fm("send", "Sends", command_dispatch="tool", command_tool="sessions_send"),
            "send-raw": fm(
                "send-raw", "Raw", command_dispatch="tool", command_tool="t", command_arg_mode="raw"
            ),
            "send-parsed": fm(
                "send-parsed",
                "Unknown arg mode",
                command_dispatch="tool",
                command_tool="t",
                command_arg_mode="parsed",
            ),
            "upper": fm("upper", "Upper case kind", command_dispatch="TOOL", command_tool="x"),
            "snake": fm("snake", "Snake-case keys", **{"command_dispatch": "tool"})
            + "command_tool: snake_tool\n",
            "no-tool": fm("no-tool", "Missing tool", command_dispatch="tool"),
            "other": fm("other", "Other kind", command_dispatch="model", command_tool="x"),
            "blank-tool": fm(
                "blank-tool", "Blank tool", command_dispatch="tool", command_tool='"  "'
            ),
        },
    )
    ours, _ = compare(
        ws,
        reserved=None,
        texts=[
            '/send  --to main "hello   world"\n-- and more  ',
            "/send_2",
            "/skill send -x",
            "/send_raw 'quoted' \"double\"",
        ],
    )
    dispatch = {c["skillName"]: c.get("dispatch") for c in ours}
    assert dispatch["send"] == {"kind": "tool", "toolName": "sessions_send", "argMode": "raw"}
    assert dispatch["send-parsed"] == {"kind": "tool", "toolName": "t", "argMode": "raw"}
    assert dispatch["no-tool"] is None and dispatch["other"] is None


INVOKE_SPECS = [
    CommandSpec("demo_skill", "demo-skill", "Demo"),
    CommandSpec("demo_skill_2", "demo_skill", "Demo two"),
    CommandSpec("my_skill", "My Skill", "Spaces in the skill name"),
    CommandSpec("Mixed_Case", "MixedCase", "Upper-case name"),
    CommandSpec("skill_2", "skill", "Named skill"),
    CommandSpec("blank", "", "Blank skill name"),
]

INVOKE_TEXTS = [
    "/demo_skill do the thing",
    "/skill demo_skill do the thing",
    "/skill demo-skill",
    "/skill DEMO-SKILL   ",
    "/skill demo_skill_2 a",
    "/skill my-skill hi",
    "/skill My_Skill",
    "/skill my skill",
    "/skill mixedcase x",
    "/skill mixed-case",
    "/mixed_case  y ",
    "/MIXED_CASE",
    "/skill skill",
    "/skill_2 z",
    "/skill",
    "/skill   ",
    "/blank",
    "/skill blank",
    "/unknown thing",
    "/",
    "//demo_skill",
    "demo_skill",
    "  /demo_skill  padded  ",
    "/demo_skill\ttab\targs",
    "/demo_skill\na\nb\n",
    "/demo_skill\u3000ideographic\u3000space",
    "/demo_skill\ufeffbom",
    "/demo_skill\x1cfile-separator",
    "/demo_skill\u0085next-line",
    "/demo_skill\u00a0nbsp",
    "/demo_skill  -leading dash",
    "/demo_skill \"quoted   args\" 'single'",
    "/demo_skill:extra",
    "/demo_skill@bot args",
]


def test_invocations_match_oracle_on_given_specs() -> None:
    """§12 Commands: `/demo_skill …`, `/skill demo_skill …`, `/skill demo-skill`, unknown."""
    (result,) = run_oracle(
        [{"op": "invoke", "commands": [c.to_json() for c in INVOKE_SPECS], "texts": INVOKE_TEXTS}]
    )
    assert result["commands"] == [c.to_json() for c in INVOKE_SPECS]
    for item in result["results"]:
        got = resolve_invocation(item["text"], INVOKE_SPECS)
        assert (got.to_json() if got else None) == item["invocation"], repr(item["text"])


def test_discovered_workspace_matches_oracle(tmp_path: Path) -> None:
    """The whole path: skillbook's discovery order and parse feed the same commands."""
    ws = write_workspace(tmp_path, COLLIDING | {k: fm(k, v) for k, v in DESCRIPTIONS.items()})
    (theirs,) = run_oracle([{"op": "commands", "workspace": str(ws)}])
    found = discover([Root(Source.WORKSPACE, ws / "skills")])
    assert build_command_specs(found.skills).to_json() == theirs["commands"]


def test_random_names_and_descriptions_match_oracle(tmp_path: Path) -> None:
    """Seeded fuzz: 150 names and descriptions mixing case, punctuation, non-ASCII and
    astral characters, near the 32-character and 100-unit limits; then invocations."""
    rng = random.Random(59228)
    alphabet = "abcXYZ019-_ .é🎉İßK日" + "a" * 10
    names: list[str] = []
    while len(names) < 150:
        n = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 45))).strip()
        if n and n not in names:
            names.append(n)
    files = {}
    for i, name in enumerate(names):
        desc = "".join(rng.choice("de 🎉ü") for _ in range(rng.randint(90, 110))).strip() or "d"
        files[f"s{i:03d}"] = fm(name, desc)
    ws = write_workspace(tmp_path, files)
    texts = []
    for name in rng.sample(names, 40):
        texts.append(f"/skill {name.split()[0]} arg  {rng.randint(0, 9)} ")
        texts.append("/" + sanitize_command_name(name) + rng.choice(["", " x", "\n y ", "_2"]))
    compare(ws, reserved=["a", "b_2", "help"], texts=texts)
