"""The router's ``<available_skills>`` block against OpenClaw's own formatting.

OpenClaw 2026.9.6 (the oracle's ``latest``) has no skill router to call: its package
holds no ``direct``/``ambiguous``/``nomatch`` decision. What it does have is the
catalog of a given set of skills — its prompt under a skill filter naming them. For
a ``direct`` and an ``ambiguous`` route, the block must be that prompt byte for byte,
under the 2026.9 profile against ``latest`` and under the 2026.4 one against the
baseline.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oracle_cases import SHARED_ENV
from oracle_support import Oracle
from selection_support import write_skill

from skillbook.config.file import Config
from skillbook.pipeline.book import Loader, SkillBook
from skillbook.selection.router import catalog_formatter, route
from skillbook.selection.selector import Selector, SelectorSettings

SKILLS = {
    "weather": "Current weather & forecasts for any city: rain, <temperature>, wind.",
    "pdf-merge": "Combine multiple PDF files into one or split a PDF into pages.",
    "pdf-tools": "Merge PDF files, split a PDF, rotate PDF pages.",
    "trello": "Manage Trello boards, lists and cards via the Trello REST API.",
}
#: OpenClaw's bundled plugins (on by default in 2026.9) publish skills of their own.
PLUGINS_OFF = {"plugins": {"enabled": False}}


def _sandbox(tmp: Path) -> dict[str, Path]:
    dirs = {k: tmp / k for k in ("home", "state", "bundled", "bin")}
    for d in dirs.values():
        d.mkdir()
    ws = dirs["home"] / "ws"  # under HOME: both sides write its paths as ~/...
    for name, desc in SKILLS.items():
        write_skill(ws / "skills", name, desc)
    return {**dirs, "ws": ws}


def _ours(box: dict[str, Path], compat: str) -> SkillBook:
    env = {
        "HOME": str(box["home"]),
        "SKILLBOOK_STATE_DIR": str(box["state"]),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(box["bundled"]),
        "PATH": str(box["bin"]),
        **SHARED_ENV,
    }
    config = Config.from_mapping(PLUGINS_OFF)
    return Loader(box["ws"], config=config, env=env, cwd=box["home"], compat=compat).load()


def _theirs(oracle: Oracle, box: dict[str, Path], names: list[str]) -> str:
    request: dict[str, Any] = {
        "op": "prompt",
        "workspace": str(box["ws"]),
        "home": str(box["home"]),
        "stateDir": str(box["state"]),
        "bundledDir": str(box["bundled"]),
        "path": [str(box["bin"])],
        "env": dict(SHARED_ENV),
        "cwd": str(box["home"]),
        "omitMeta": True,
        "config": PLUGINS_OFF,
        "skillFilter": names,
    }
    out = oracle.run(request)
    assert out["ok"], json.dumps(out)[:2000]
    text: str = out["result"]["prompt"]
    return text


def _compare(oracle: Oracle, tmp: Path, compat: str) -> None:
    box = _sandbox(tmp)
    book = _ours(box, compat)
    # Four skills: BM25 scores are low (its tuned threshold is for hundreds of skills).
    selector = Selector(book.eligible, settings=SelectorSettings(backend="bm25", min_score=0.1))
    fmt = catalog_formatter(book)
    direct = route("weather forecast: rain and wind in Oslo", selector, formatter=fmt)
    wide = route("merge two PDF files into one PDF", selector, margin=1.0, formatter=fmt)
    assert direct.outcome == "direct" and direct.names() == ["weather"]
    assert wide.outcome == "ambiguous" and set(wide.names()) == {"pdf-merge", "pdf-tools"}
    for got in (direct, wide):
        assert got.block == _theirs(oracle, box, got.names()), (compat, got.names())


def test_routed_block_is_openclaw_2026_9_formatting(latest_oracle: Oracle, tmp_path: Path) -> None:
    _compare(latest_oracle, tmp_path, "openclaw-2026.9")


def test_routed_block_is_openclaw_2026_4_formatting(oracle: Oracle, tmp_path: Path) -> None:
    _compare(oracle, tmp_path, "openclaw-2026.4")
