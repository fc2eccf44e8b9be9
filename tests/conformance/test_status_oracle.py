"""The status report against OpenClaw's own ``buildWorkspaceSkillStatus`` (oracle ``status`` op).

Uses the shared ``oracle`` fixture (tests/conftest.py), which skips without node.

Each scenario writes skills to a temporary workspace (and bundled folder), runs the
oracle with the same ``bins``, ``env``, ``config``, ``platform`` and remote
eligibility, builds our report from the same files, and compares every entry as
JSON: keys, key order and values. The one expected difference is the documented
fix for ``always: true`` skills whose ``os`` excludes the host (see skillbook.pipeline.gating.gate).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factories import stub_bins, write_skill

from skillbook.config.file import Config
from skillbook.model import Skill, Source
from skillbook.pipeline.gating.gate import BinaryLookup, Host, StaticRemote
from skillbook.pipeline.gating.status import build_status
from skillbook.pipeline.parse.skill_file import parse_skill_text

PRESENT_BINS = ["present-bin", "brew"]

pytestmark = pytest.mark.oracle


def _manifest(**kw: Any) -> dict[str, Any]:
    return {"openclaw": kw}


#: name -> (extra frontmatter lines, metadata object or None)
WORKSPACE_SKILLS: dict[str, tuple[str, dict[str, Any] | None]] = {
    "plain": ("", None),
    "bins-tool": (
        "",
        _manifest(
            emoji="🔧",
            requires={"bins": ["present-bin", "absent-bin", "remote-bin"]},
            install=[
                {"kind": "node", "package": "bins-tool", "bins": ["bins-tool"]},
                {"kind": "brew", "formula": "bins-tool", "bins": ["bins-tool"]},
            ],
        ),
    ),
    "any-some": ("", _manifest(requires={"anyBins": ["absent-1", "present-bin"]})),
    "any-none": ("", _manifest(requires={"anyBins": ["absent-1", "absent-2"]})),
    "any-remote": ("", _manifest(requires={"anyBins": ["absent-1", "remote-bin"]})),
    "env-skill": (
        "",
        _manifest(requires={"env": ["SET_VAR", "UNSET_VAR", "ENTRY_VAR", "BLANK_VAR"]}),
    ),
    "apikey": (
        "",
        _manifest(primaryEnv="GEMINI_API_KEY", requires={"env": ["GEMINI_API_KEY", "OTHER_KEY"]}),
    ),
    "apikey-blank": (
        "",
        _manifest(primaryEnv="GEMINI_API_KEY", requires={"env": ["GEMINI_API_KEY"]}),
    ),
    "apikey-ref": (
        "",
        _manifest(primaryEnv="REF_KEY", requires={"env": ["REF_KEY"]}),
    ),
    "config-skill": (
        "",
        _manifest(
            requires={
                "config": [
                    "browser.enabled",
                    "browser.evaluateEnabled",
                    "custom.flag",
                    "custom.blank",
                    "custom.obj",
                    "custom.list.0",
                    "absent.path",
                ]
            }
        ),
    ),
    "os-mac": (
        "",
        _manifest(os=["darwin"], install=[{"kind": "brew", "formula": "mac-tool"}]),
    ),
    "os-linux": ("", _manifest(os=["linux", "win32"], requires={"bins": ["absent-bin"]})),
    "always-env": ("", _manifest(always=True, requires={"env": ["UNSET_VAR"]})),
    "always-mac": ("", _manifest(always=True, os=["darwin"], requires={"env": ["UNSET_VAR"]})),
    "keyed": ("", _manifest(skillKey="alias", requires={"env": ["ALIAS_VAR"]})),
    "disabled-one": ("", _manifest(requires={"bins": ["present-bin"]})),
    "downloads": (
        "",
        _manifest(
            install=[
                {"kind": "download", "url": "https://dl.example/tool-mac.tgz", "os": ["darwin"]},
                {"kind": "download", "url": "https://dl.example/tool-linux.tgz", "os": ["linux"]},
                {"kind": "download", "url": "https://dl.example/", "id": "root", "label": " Get "},
            ]
        ),
    ),
    "installers": (
        "",
        _manifest(
            requires={"bins": ["absent-bin"]},
            install=[
                {"kind": "go", "module": "example.com/tool/cmd@v1.2.3", "os": ["darwin"]},
                {"kind": "uv", "package": "uvicorn[standard]==0.31.0", "label": "UV it"},
                {"kind": "brew", "formula": "python@3.12"},
            ],
        ),
    ),
    "go-only": (
        "homepage: https://fm.example\n",
        _manifest(
            install=[{"kind": "go", "module": "example.com/m"}, {"kind": "brew", "formula": "m"}]
        ),
    ),
    "fm-emoji": ("emoji: 🐚\nwebsite: ' https://site.example '\n", _manifest(homepage="  ")),
    "shadow": ("", None),
}

BUNDLED_SKILLS: dict[str, tuple[str, dict[str, Any] | None]] = {
    "peekaboo": ("", _manifest(os=["darwin"], requires={"bins": ["peekaboo"]})),
    "bundled-blocked": ("", None),
    "bundled-keyed": ("", _manifest(skillKey="bk")),
    "shadow": ("", None),
}

CONFIGS: dict[str, dict[str, Any]] = {
    "empty": {},
    "rich": {
        "skills": {
            "allowBundled": ["peekaboo", "bk", "shadow"],
            "install": {"preferBrew": False, "nodeManager": "bun"},
            "entries": {
                "env-skill": {"env": {"ENTRY_VAR": "x", "BLANK_VAR": ""}},
                "apikey": {"apiKey": "secret"},
                "apikey-blank": {"apiKey": ""},
                "apikey-ref": {"apiKey": {"source": "env", "provider": "default", "id": "REF_KEY"}},
                "alias": {"enabled": False, "env": {"ALIAS_VAR": "1"}},
                "disabled-one": {"enabled": False},
            },
        },
        "browser": {"enabled": False},
        "custom": {"flag": True, "blank": "  ", "obj": {}, "list": ["x"]},
    },
}

ENV = {"SET_VAR": "1", "BLANK_VAR": ""}


def _load(root: Path, source: Source) -> list[Skill]:
    skills = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        file = folder / "SKILL.md"
        parsed = parse_skill_text(file.read_bytes(), path=file)
        skills.append(
            Skill(
                name=parsed.name or folder.name,
                description=parsed.description,
                file_path=file,
                base_dir=folder,
                source=source.value,
                parsed=parsed,
            )
        )
    return skills


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("status-oracle")
    ws, bundled, bin_dir = base / "ws", base / "bundled", base / "bin"
    for root, skills in ((ws / "skills", WORKSPACE_SKILLS), (bundled, BUNDLED_SKILLS)):
        for name, (extra, metadata) in skills.items():
            write_skill(root / name, description=f"The {name} skill.", raw=extra, metadata=metadata)
    stub_bins(bin_dir, PRESENT_BINS, "#!/bin/sh\n")
    # OpenClaw merges by name into a Map: bundled first, a workspace skill with the
    # same name replaces the bundled one in its first-seen position.
    merged: dict[str, Skill] = {}
    for skill in _load(bundled, Source.BUNDLED) + _load(ws / "skills", Source.WORKSPACE):
        merged[skill.name] = skill
    return {"ws": ws, "bundled": bundled, "bin": bin_dir, "skills": list(merged.values())}


def _run_oracle(oracle: Any, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = oracle.run(requests)
    assert out["ok"], out
    results: list[dict[str, Any]] = [r["result"]["report"] for r in out["results"]]
    return results


SCENARIOS = [
    ("linux", None),
    ("darwin", None),
    ("linux", {"platforms": ["darwin"], "bins": ["remote-bin", "peekaboo"]}),
]


def _is_expected_difference(ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """``always: true`` + an ``os`` that excludes the host: we report it, OpenClaw does not."""
    return (
        ours["always"]
        and bool(ours["missing"]["os"])
        and not theirs["missing"]["os"]
        and theirs["eligible"]
        and not ours["eligible"]
    )


@pytest.mark.parametrize(("platform", "remote"), SCENARIOS)
def test_status_matches_oracle(
    oracle: Any, layout: dict[str, Any], platform: str, remote: dict[str, Any] | None
) -> None:
    requests: list[dict[str, Any]] = []
    for config in CONFIGS.values():
        req: dict[str, Any] = {
            "op": "status",
            "workspace": str(layout["ws"]),
            "bundledDir": str(layout["bundled"]),
            "bins": PRESENT_BINS,
            "env": ENV,
            "config": config,
            "platform": platform,
            "omitMeta": True,
        }
        if remote is not None:
            req["eligibility"] = {"remote": remote}
        requests.append(req)
    reports = _run_oracle(oracle, requests)

    host = Host(platform=platform, env={**ENV, "PATH": str(layout["bin"])})
    bins = BinaryLookup.for_host(host)
    static_remote = (
        StaticRemote(platforms=tuple(remote["platforms"]), bins=frozenset(remote["bins"]))
        if remote is not None
        else None
    )
    differences: list[str] = []
    expected_differences: list[str] = []
    for (config_name, config), theirs in zip(CONFIGS.items(), reports, strict=True):
        ours = build_status(
            layout["skills"],
            config=Config.from_mapping(config),
            host=host,
            bins=bins,
            remote=static_remote,
            workspace_dir=layout["ws"],
            managed_dir=Path(theirs["managedSkillsDir"]),
        ).to_json()
        assert ours["workspaceDir"] == theirs["workspaceDir"]
        assert [s["name"] for s in ours["skills"]] == [s["name"] for s in theirs["skills"]]
        for mine, their in zip(ours["skills"], theirs["skills"], strict=True):
            label = f"{platform}/{config_name}/{mine['name']}"
            if json.dumps(mine, ensure_ascii=False) == json.dumps(their, ensure_ascii=False):
                continue
            if _is_expected_difference(mine, their):
                expected_differences.append(label)
                continue
            differences.append(f"{label}:\n  ours:   {mine}\n  theirs: {their}")
    assert not differences, "\n".join(differences)
    if platform != "darwin" and remote is None:
        # The documented always+os fix shows up exactly where expected.
        assert sorted(expected_differences) == [
            f"{platform}/empty/always-mac",
            f"{platform}/rich/always-mac",
        ]
    else:
        assert expected_differences == []
