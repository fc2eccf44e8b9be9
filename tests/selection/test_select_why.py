"""``skillbook select`` and ``eval select`` say why a matching skill is not offered.

Stand-in skills are gated on a binary that is not on the test's private PATH, on an
environment variable, and on another OS; a fourth needs a binary that *is* on that
PATH (a stand-in executable), so the private PATH is what decides.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from selection_support import env_for, make_workspace, write_skill

from skillbook.cli.app import cli
from skillbook.config.file import Config
from skillbook.pipeline.book import Loader
from skillbook.selection.eligibility import not_eligible

GATED = {
    "docker-deploy": (
        "Deploy containers with Docker compose: build images and run services.",
        'metadata: {"openclaw": {"requires": {"bins": ["dockerish-standin"]}}}',
    ),
    "spotify-player": (
        "Play music on Spotify: play, pause and skip tracks, manage playlists.",
        'metadata: {"openclaw": {"requires": {"env": ["SPOTIFY_STANDIN_TOKEN"]}}}',
    ),
    "apple-notes": (
        "Create, search and edit notes in the Apple Notes app.",
        'metadata: {"openclaw": {"os": ["darwin"]}}',
    ),
    "video-convert": (
        "Convert and trim video files with ffmpeg: mp4, webm, gif.",
        'metadata: {"openclaw": {"requires": {"bins": ["ffmpeg-standin"]}}}',
    ),
}


def _setup(tmp: Path, backend: str = "bm25") -> tuple[Path, Path, dict[str, str]]:
    ws = make_workspace(tmp)
    for name, (desc, extra) in GATED.items():
        write_skill(ws / "skills", name, desc, extra=extra)
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    stand_in = bin_dir / "ffmpeg-standin"
    stand_in.write_text("#!/bin/sh\nexit 0\n")
    stand_in.chmod(0o755)
    cfg = tmp / "c.json"
    selection = {"indexDir": str(tmp / "i"), "backend": backend}
    cfg.write_text(json.dumps({"skills": {"selection": selection}}))
    env = {**env_for(tmp), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    return ws, cfg, env


def _run(args: list[str], env: dict[str, str]) -> Any:
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_reasons_name_the_gate(tmp_path: Path) -> None:
    ws, _cfg, env = _setup(tmp_path)
    book = Loader(ws, config=Config(), env=env).load()
    assert "video-convert" in {s.name for s in book.eligible}  # on the private PATH
    why = not_eligible(book)
    # (bundled skills gated on tools this host lacks are in it too)
    assert {"docker-deploy", "spotify-player", "apple-notes"} <= set(why)
    assert "video-convert" not in why
    assert why["docker-deploy"].status == "needs-setup"
    assert why["docker-deploy"].reasons == ("binary `dockerish-standin` is not on PATH",)
    assert (
        why["spotify-player"]
        .reasons[0]
        .startswith("environment variable SPOTIFY_STANDIN_TOKEN is not set")
    )
    assert why["apple-notes"].reasons == ("runs on darwin only (this host: linux)",)
    assert why["docker-deploy"].to_json()["missing"]["bins"] == ["dockerish-standin"]


def test_select_reports_a_matching_skill_that_is_not_eligible(tmp_path: Path) -> None:
    ws, cfg, env = _setup(tmp_path)
    base = ["-w", str(ws), "-c", str(cfg), "select"]
    text = _run([*base, "deploy containers with docker compose"], env).output
    assert "Selected: none eligible (see below)" in text
    assert "Matching but not eligible on this host" in text
    assert "docker-deploy" in text and "binary `dockerish-standin` is not on PATH" in text
    data = json.loads(
        _run([*base, "play and skip tracks in my Spotify playlists", "--json"], env).output
    )
    assert data["selected"] == []
    [entry] = data["ineligible"]
    assert entry["name"] == "spotify-player" and entry["status"] == "needs-setup"
    assert entry["missing"]["env"] == ["SPOTIFY_STANDIN_TOKEN"] and entry["score"] > 0
    # The OS gate, and --include-ineligible: ranked and marked, never "selected".
    data = json.loads(
        _run([*base, "search my Apple Notes", "--include-ineligible", "--json"], env).output
    )
    top = data["ranked"][0]
    assert top["name"] == "apple-notes" and top["eligible"] is False
    assert "apple-notes" not in data["selected"]
    assert data["ineligible"][0]["reasons"] == ["runs on darwin only (this host: linux)"]
    marked = _run([*base, "search my Apple Notes", "--include-ineligible"], env).output
    assert "apple-notes" in marked and "[not eligible: needs-setup]" in marked
    # An eligible match is selected as before, with no "not eligible" section.
    plain = _run([*base, "convert this video to gif with ffmpeg"], env).output
    assert "Selected: video-convert" in plain and "not eligible" not in plain


def test_select_with_embeddings_shares_the_models(tmp_path: Path) -> None:
    ws, cfg, env = _setup(tmp_path, backend="hybrid")
    args = ["-w", str(ws), "-c", str(cfg), "select", "deploy containers with docker compose"]
    data = json.loads(_run([*args, "--json"], env).output)
    assert [e["name"] for e in data["ineligible"]] == ["docker-deploy"]
    assert data["channels"] == ["bm25", "bm25Body", "wordllama", "multilingual"]


def test_eval_select_says_why_instead_of_not_found(tmp_path: Path) -> None:
    ws, cfg, env = _setup(tmp_path)
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        '{"id": "d1", "query": "deploy containers with docker", "expected": ["docker-deploy"]}\n'
        '{"id": "d2", "query": "run my compose services", "expected": ["docker-deploy"]}\n'
        '{"id": "n1", "query": "open my apple notes", "expected": ["apple-notes"]}\n'
        '{"id": "x1", "query": "lamp", "expected": ["no-such-skill"]}\n'
        '{"id": "x2", "query": "notes", "expected": ["apple-note"]}\n'
    )
    base = ["-w", str(ws), "-c", str(cfg), "eval", "select", "--queries", str(qfile)]
    report = json.loads(_run([*base, "--json"], env).output)
    assert report["unknownExpected"] == ["apple-note", "no-such-skill"]
    blocked = {e["name"]: e for e in report["ineligibleExpected"]}
    assert set(blocked) == {"docker-deploy", "apple-notes"}
    assert blocked["apple-notes"]["status"] == "needs-setup"
    assert blocked["docker-deploy"]["queries"] == 2
    assert blocked["docker-deploy"]["reasons"] == ["binary `dockerish-standin` is not on PATH"]
    table = _run(base, env).output
    assert "Expected skills loaded but not eligible on this host" in table
    assert "docker-deploy (2 queries)  needs-setup: binary `dockerish-standin`" in table
    # A misspelt expected name gets the loaded skill it was probably meant for.
    assert (
        "Expected skills not found (not loaded at all):\n"
        "  apple-note (did you mean apple-notes?)\n  no-such-skill\n"
    ) in table
    # Ranked over every loaded skill, they are found and nothing is reported.
    wide = json.loads(_run([*base, "--include-ineligible", "--json"], env).output)
    assert wide["ineligibleExpected"] == []
    assert wide["unknownExpected"] == ["apple-note", "no-such-skill"]
    assert wide["results"][0]["ranked"][0] == "docker-deploy"


def test_help_documents_the_query_file_and_the_flag(tmp_path: Path) -> None:
    out = _run(["eval", "select", "--help"], env_for(tmp_path)).output
    assert '"id" (unique in the file)' in out and "--include-ineligible" in out
    out = _run(["select", "--help"], env_for(tmp_path)).output
    assert "Matching but not eligible" in out and "--include-ineligible" in out
