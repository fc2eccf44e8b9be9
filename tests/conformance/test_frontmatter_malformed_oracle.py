"""The malformed-frontmatter table against the live OpenClaw packages (rest lane).

``malformed_frontmatter_recorded.json`` (what the fast test
``test_frontmatter_malformed.py`` compares skillbook with) must be what OpenClaw
2026.4.12 and 2026.9.6 answer today; and a workspace made of the table's skills gives
the same catalog from 2026.9.6 as from skillbook's ``openclaw-2026.9`` profile (the
loader's decision, not only the frontmatter function's).
"""

from __future__ import annotations

from typing import Any

import pytest
from compat_scenarios import PLUGINS_OFF, World
from deep_frontmatter import STYLES, deep_skill
from malformed_frontmatter import MALFORMED, answers, load_recorded, requests
from oracle_cases import deep_merge
from oracle_support import Oracle

from skillbook.config.file import Config
from skillbook.config.profile import OPENCLAW_2026_4, OPENCLAW_2026_9
from skillbook.pipeline.book import OPENCLAW_CHECK_COMMAND, Loader
from skillbook.pipeline.parse.skill_file import parse_skill_text

pytestmark = pytest.mark.oracle


def _results(oracle: Oracle) -> list[dict[str, Any]]:
    out = oracle.run(requests(), timeout=600)
    assert all(r["ok"] for r in out["results"])
    return [r["result"] for r in out["results"]]


def test_the_record_is_what_both_releases_answer(oracle: Oracle, latest_oracle: Oracle) -> None:
    live = answers(_results(oracle), _results(latest_oracle))
    recorded = load_recorded()
    changed = [case_id for case_id in live if live[case_id] != recorded.get(case_id)]
    assert changed == [], "re-record with `python tests/malformed_frontmatter.py`"


#: Room for every case's skill in the catalog and in the scan.
_LIMITS = {
    "skills": {
        "limits": {
            "maxSkillsPromptChars": 2_000_000,
            "maxSkillsInPrompt": 5_000,
            "maxCandidatesPerRoot": 5_000,
            "maxSkillsLoadedPerSource": 5_000,
        }
    }
}


def test_a_workspace_of_the_table_gives_2026_9_6s_catalog(
    latest_oracle: Oracle, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every case whose ``name`` line is intact, under a unique name (OpenClaw keeps one
    skill per name), in one workspace: the same skills are in the catalog, with the same
    text, from both."""
    world = World(tmp_path_factory.mktemp("malformed"))
    used = 0
    for i, (case_id, text) in enumerate(MALFORMED):
        if "demo-skill" not in text or case_id.startswith("name/"):
            continue
        world.raw(world.skills / f"c{i:03d}", text.replace("demo-skill", f"c{i:03d}"))
        used += 1
    assert used >= 150
    config = deep_merge(_LIMITS, PLUGINS_OFF)
    request = {
        "op": "prompt",
        "workspace": str(world.ws),
        "home": str(world.home),
        "stateDir": str(world.state),
        "bundledDir": str(world.bundled),
        "path": [str(world.bin)],
        "cwd": str(world.base),
        "config": config,
        "omitMeta": True,
    }
    out = latest_oracle.run(request, timeout=600)
    assert out["ok"], out.get("error")
    book = Loader(
        world.ws,
        config=Config.from_mapping(config),
        env={
            "HOME": str(world.home),
            "SKILLBOOK_STATE_DIR": str(world.state),
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(world.bundled),
            "PATH": str(world.bin),
        },
        cwd=world.base,
        check_command=OPENCLAW_CHECK_COMMAND,
        legacy_manifest_keys=False,
        compat=OPENCLAW_2026_9,
    ).load()
    theirs = out["result"]["prompt"]
    assert theirs.count("<skill>") >= 60  # many cases load: the comparison is not empty
    assert book.catalog.text == theirs


# Not 1000: there OpenClaw 2026.9.6's YAML package may run out of JavaScript stack
# (RESOURCE_EXHAUSTION, depending on the stack left) and refuse the skill; skillbook
# loads it by the line parser (docs/oracle-differences.md).
@pytest.mark.parametrize("depth", [150, 400])
def test_deep_nesting_loads_in_both_releases_as_here(
    oracle: Oracle, latest_oracle: Oracle, depth: int
) -> None:
    """Hundreds of nested levels: both OpenClaw releases load the skill with the same
    ``name`` and ``description`` as skillbook (which reads it through the line parser,
    with ``parse.yaml-too-deep``); only the deep value's own text differs
    (docs/oracle-differences.md)."""
    texts = [deep_skill(depth, style) for style in STYLES]
    batch = [{"op": "frontmatter", "text": t, "omitMeta": True} for t in texts]
    for version, runner in (("2026.4.12", oracle), ("2026.9.6", latest_oracle)):
        out = runner.run(batch, timeout=600)
        profile = OPENCLAW_2026_4 if version == "2026.4.12" else OPENCLAW_2026_9
        for style, text, result in zip(STYLES, texts, out["results"], strict=True):
            theirs = result["result"]
            assert not theirs.get("issues"), (version, style, theirs.get("issues"))
            parsed = parse_skill_text(text, rules=profile.frontmatter)
            assert not parsed.invalid
            assert "parse.yaml-too-deep" in [d.code for d in parsed.diagnostics]
            for key in ("name", "description"):
                assert parsed.frontmatter.values[key] == theirs["frontmatter"][key], (
                    version,
                    style,
                )
