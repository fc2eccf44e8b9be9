"""The plain path (issue 22): a saved selector ranked without numpy ranks as numpy does.

:mod:`skillbook.selection.plain` is a second implementation of the selector's
ranking, driven by the same saved parameters. These tests hold it to the numpy
selector restored from the same file: BM25, the ``mix`` and the trigger boost are
the same floats; the request's vectors are the same floats for wordllama and within
float32 noise for the multilingual encoder, so every printed value agrees to its
printed precision save where a value sits on a rounding boundary, and orders agree
save between skills whose values are that close (:func:`assert_equivalent` says
exactly what may differ). A change to the numpy path's scoring that the plain path
does not follow fails here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selection_support import env_for, make_workspace, write_skill

from skillbook.selection import plain, saved
from skillbook.selection.embedders import MultilingualEmbedder, WordLlamaEmbedder
from skillbook.selection.selector import Selector

REPO = Path(__file__).resolve().parents[2]
SETS = sorted((REPO / "benchmarks" / "data" / "selection").glob("*.jsonl"))
SRC = REPO / "src"
#: Values closer than this may come out in either order (float32 noise of the
#: multilingual vector: a few units in the 7th decimal).
TIE = 1e-5
#: One unit of the last printed decimal (scores and parts print 4).
PRINTED = 1e-4


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    """A selector over a small workspace (trigger hints included), saved, and read
    back both ways: (plain selectors, numpy selectors), by role."""
    tmp = tmp_path_factory.mktemp("plain")
    ws = make_workspace(tmp)
    write_skill(
        ws / "skills",
        "surf-report",
        "Tide tables and surf forecasts for beaches.",
        "metadata:\n  openclaw:\n    triggers:\n      any: [surf, tide tables]\n"
        "      none: [tidy]\n",
    )
    write_skill(ws / "skills", "notes", "Search, create and edit notes in a notebook.")
    from skillbook.pipeline.book import Loader

    book = Loader(ws, env=env_for(tmp), cwd=tmp).load()
    embedders: dict[str, Any] = {
        "wordllama": WordLlamaEmbedder(),
        "multilingual": MultilingualEmbedder(weights_cache=tmp / "models"),
    }
    built = Selector(book.eligible, embedders=embedders)
    everyone = Selector(book.skills, embedders=embedders)
    path = str(tmp / "x.selector")
    saved.save(path, "key", {"selector": built, "everyone": everyone}, {"why": []}, {"h": 1})
    found = saved.read_header(path, "key")
    assert found is not None
    fast = plain.load(*found)
    slow = saved.load(*found, weights_cache=tmp / "models")
    assert fast is not None and slow is not None
    return fast, slow


def assert_equivalent(a: dict[str, Any], b: dict[str, Any], context: str = "") -> None:
    """``a`` (plain) prints as ``b`` (numpy) to the printed precision.

    What may differ: a printed value by one unit of its last decimal (a value on a
    rounding boundary), the threshold and null floor by float32 noise, and the order
    (and so the selection) of skills whose learned or fused values are within
    :data:`TIE` of each other. Everything else is equal.
    """
    assert a.keys() == b.keys(), context
    for key in a:
        if key not in ("threshold", "nullFloor", "ranked", "selected"):
            assert a[key] == b[key], (context, key)
    for key in ("threshold", "nullFloor"):
        if b[key] is None:
            assert a[key] is None, context
        else:
            assert abs(a[key] - b[key]) <= PRINTED + 1e-9, (context, key)
    mine = {c["name"]: c for c in a["ranked"]}
    for rank, theirs in enumerate(b["ranked"]):
        name = theirs["name"]
        if rank < len(a["ranked"]) and a["ranked"][rank]["name"] != name:
            other = a["ranked"][rank]
            # A swap: only between skills whose ordering values are ties.
            value = _order_value(theirs)
            assert other["name"] in {c["name"] for c in b["ranked"]} or rank >= len(b["ranked"]) - 2
            swapped = next((c for c in b["ranked"] if c["name"] == other["name"]), None)
            if swapped is not None:
                assert abs(_order_value(swapped) - value) <= 0.02, (context, name, other["name"])
        if name not in mine:
            continue  # left the shown list by a swap at its end
        ours = mine[name]
        assert ours.get("triggers") == theirs.get("triggers"), (context, name)
        assert abs(ours["score"] - theirs["score"]) <= PRINTED + 1e-9, (context, name)
        assert ours["parts"].keys() == theirs["parts"].keys(), (context, name)
        for part, value in theirs["parts"].items():
            # The learned probability reads each channel's rank: a skill tied with
            # another within float32 noise may count one more above it.
            limit = 0.02 if part == "learned" else PRINTED + 1e-9
            assert abs(ours["parts"][part] - value) <= limit, (context, name, part)
    if a["selected"] != b["selected"]:
        # Only a skill on the threshold (within noise) or a swapped tie may differ.
        scores = {c["name"]: c["score"] for c in b["ranked"]}
        for name in set(a["selected"]) ^ set(b["selected"]):
            assert abs(scores.get(name, b["threshold"]) - b["threshold"]) <= TIE, (context, name)


def _order_value(entry: dict[str, Any]) -> float:
    return float(entry["parts"].get("learned", entry["score"]))


def _both(pair: tuple[Any, Any], role: str, request: str, top: int | None = None) -> Any:
    fast, slow = pair
    try:
        a = fast.selectors[role].select(request, top_k=top)
    except plain.Unsupported:
        return None  # the tables do not settle it: the command ranks with numpy
    b = slow.selectors[role].select(request, top_k=top)
    return a, b


# --------------------------------------------------------------------------- requests

_WORDS = [
    "merge", "pdf", "files", "weather", "forecast", "Lyon", "trello", "board", "cards",
    "lights", "brightness", "worktree", "branch", "stripe", "refund", "invoice", "surf",
    "tide", "tables", "tidy", "notes", "notebook", "météo", "demain", "llover", "mañana",
    "天気", "погода", "Wetter", "morgen", "wether", "forcast", "stirpe", "trelo", "mege",
    "xyzzy", "qwertyuiop", "🙂", "hello", "please", "the", "what", "is", "a", "blockchain",
]  # fmt: skip


def _typo(word: str, at: int) -> str:
    if len(word) < 2:
        return word
    i = at % (len(word) - 1)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


requests = st.one_of(
    st.lists(st.sampled_from(_WORDS), max_size=8).map(" ".join),
    st.lists(
        st.builds(_typo, st.sampled_from(_WORDS), st.integers(0, 20)), min_size=1, max_size=5
    ).map(" ".join),
    st.text(
        st.characters(codec="utf-8", exclude_categories=["Cs"]),
        max_size=30,
    ),
    # A lone surrogate (argv bytes that are not UTF-8) stopped both paths' tokenizers.
    st.lists(st.sampled_from([*_WORDS, "\udcff", "a\ud800b"]), min_size=1, max_size=5).map(
        " ".join
    ),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=requests, top=st.one_of(st.none(), st.integers(1, 12)))
def test_plain_ranks_random_requests_as_numpy(
    pair: tuple[Any, Any], request: str, top: int | None
) -> None:
    for role in ("selector", "everyone"):
        found = _both(pair, role, request, top)
        if found is None:
            continue
        a, b = found
        assert_equivalent(a.to_json(), b.to_json(), f"{role}: {request!r}")


def test_plain_scores_bm25_the_mix_and_wordllama_exactly(pair: tuple[Any, Any]) -> None:
    # The channels whose arithmetic is reproduced step for step: the same floats.
    for request in ("merge two pdf files", "surf and tide tables", "wether in Lyon", "hi"):
        a, b = _both(pair, "selector", request)
        theirs = {c.name: c for c in b.ranked}
        for c in a.ranked:
            for part in ("bm25", "bm25Body", "bm25Squashed", "bm25BodySquashed", "wordllama"):
                assert c.parts[part] == theirs[c.name].parts[part], (request, c.name, part)
            assert abs(c.parts["multilingual"] - theirs[c.name].parts["multilingual"]) < 1e-6


def test_ties_go_to_the_lower_position(pair: tuple[Any, Any]) -> None:
    # Equal scores keep catalog order, as numpy's stable sorts do.
    assert plain._top([0.5, 0.7, 0.5, 0.7, 0.1], 4, set()) == [1, 3, 0, 2]
    assert plain._top([0.5, 0.7, 0.5, 0.7, 0.1], 4, {3}) == [1, 0, 2, 4]


def test_a_trigger_boosts_and_vetoes_as_in_numpy(pair: tuple[Any, Any]) -> None:
    for request in ("check the tide tables", "surf tidy", "tidy up my notes"):
        a, b = _both(pair, "selector", request)
        assert_equivalent(a.to_json(), b.to_json(), request)
        assert a.vetoed == b.vetoed
        assert [c.triggers for c in a.ranked] == [c.triggers for c in b.ranked]


def test_a_pasted_document_goes_to_numpy(pair: tuple[Any, Any]) -> None:
    # The encoder's layers in Python cost per piece: a long request is numpy's.
    long = " ".join(["merge the quarterly pdf reports into one file"] * 40)
    with pytest.raises(plain.Unsupported):
        pair[0].selectors["selector"].select(long)
    assert pair[1].selectors["selector"].select(long).ranked


def test_what_the_plain_path_does_not_reproduce_goes_to_numpy(tmp_path: Path) -> None:
    # No "plain" parameters (a file of another fusion, or an older writer): None, and
    # the command ranks with the numpy selector.
    header: dict[str, Any] = {"plain": None, "names": [], "roles": {}, "arrays": []}
    assert plain.load(header, b"", 0) is None
    header["plain"] = {"m": {"kind": "another-model"}}
    assert plain.load(header, b"", 0) is None


# --------------------------------------------------------------------------- as processes

_PROBE = (
    "import sys, runpy\n"
    "sys.argv = ['skillbook', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('skillbook', run_name='__main__')\n"
    "finally:\n"
    "    sys.stderr.write('\\nBUILT=%s NUMPY=%s\\n' % ('click' in sys.modules, 'numpy' in sys.modules))\n"
)


def _select(ws: Path, env: dict[str, str], *args: str) -> tuple[str, str]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, "--workspace", str(ws), "select", *args],
        env={**env, "PYTHONPATH": str(SRC)},
        cwd=ws.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr.rsplit("\n", 2)[-2]


@pytest.mark.e2e
def test_a_fresh_select_answers_without_numpy_as_a_build_prints(tmp_path: Path) -> None:
    from test_saved_selector import _settle

    ws = make_workspace(tmp_path)
    env = env_for(tmp_path)
    _settle(ws)
    _first, probe = _select(ws, env, "--json", "merge two pdf files")
    assert "BUILT=True" in probe
    for request in ("merge two pdf files", "météo à Lyon demain", "wether in paris", "hi"):
        out, probe = _select(ws, env, "--json", request)
        assert probe == "BUILT=False NUMPY=False", (request, probe)
        built, _ = _select(ws, {**env, "SKILLBOOK_CACHE": "0"}, "--json", request)
        assert_equivalent(json.loads(out), json.loads(built), request)


# --------------------------------------------------------------------------- the labelled sets


@pytest.mark.corpus
def test_plain_prints_the_labelled_sets_requests_as_numpy(tmp_path: Path, corpus_dir: Path) -> None:
    from test_saved_selector import _skills

    from skillbook.cli.select_output import render

    skills = _skills(corpus_dir)
    embedders: dict[str, Any] = {
        "wordllama": WordLlamaEmbedder(),
        "multilingual": MultilingualEmbedder(weights_cache=tmp_path / "models"),
    }
    built = Selector(skills, embedders=embedders, index_dir=tmp_path / "index")
    built.wait()
    path = str(tmp_path / "x.selector")
    saved.save(path, "key", {"selector": built}, {"why": []}, {"h": 1})
    found = saved.read_header(path, "key")
    assert found is not None
    fast, slow = plain.load(*found), saved.load(*found, weights_cache=tmp_path / "models")
    assert fast is not None and slow is not None
    every = [
        json.loads(line)["query"]
        for f in SETS
        for line in f.read_text("utf-8").splitlines()
        if line.strip()
    ]
    assert len(every) > 1000
    # Every third request of every set (about 410): ranking all 1,226 twice took a
    # minute of CPU, the longest test of the rest lane, and a third of them holds every
    # kind of request the sets have (typos, long context, five languages, negatives);
    # the thresholds below are shares, the same for the sample as for the whole.
    requests = every[::3]
    same = numbers = differing = unsettled = 0
    for request in requests:
        try:
            a = fast.selectors["selector"].select(request)
        except plain.Unsupported:
            unsettled += 1
            continue
        b = slow.selectors["selector"].select(request)
        out = [
            render(
                request,
                s,  # type: ignore[arg-type]
                channels=built.channels,
                default_top=5,
                top=None,
                why={},
                blocked=[],
                diagnostics=[],
                include_ineligible=False,
                as_json=True,
            )
            for s in (a, b)
        ]
        assert isinstance(out[0], dict) and isinstance(out[1], dict)
        assert_equivalent(out[0], out[1], request)
        same += out[0] == out[1]
        for x, y in zip(out[0]["ranked"], out[1]["ranked"], strict=True):
            values = [
                (x["score"], y["score"]),
                *((x["parts"][k], y["parts"][k]) for k in y["parts"]),
            ]
            numbers += len(values)
            differing += sum(u != v for u, v in values)
    # Requests the token tables do not settle (CJK text the library must segment) go
    # to numpy; nearly every other output is the same bytes.
    assert unsettled < len(requests) * 0.05
    assert same >= (len(requests) - unsettled) * 0.97, (same, len(requests), unsettled)
    assert differing <= numbers * 0.001, (differing, numbers)


# --------------------------------------------------------------------------- the copies


def test_the_plain_features_are_the_rankers() -> None:
    # A ranker fitted on other features is declined (numpy ranks): this names the
    # change, so the plain path follows it instead of silently losing its speed.
    from skillbook.selection.ranker import FEATURES

    assert plain.FEATURES == FEATURES
    assert plain._Ranker().depth >= 1


@settings(max_examples=150, deadline=None)
@given(text=st.one_of(requests, st.text(max_size=60)))
def test_the_plain_tokenizer_words_and_name_hits_are_the_selections(text: str) -> None:
    from skillbook.selection.lexical import Tokenizer, catalog_words
    from skillbook.selection.phrases import words
    from skillbook.selection.ranker import name_hits

    lexical = Tokenizer()
    mine = plain._Tokenizer(lexical.stop, lexical.stem)
    assert mine(text) == lexical(text)
    names = ["pdf-merge", "git_worktrees", "Hue Lights", "a", *text.split()[:3]]
    have = set(words(text))
    assert plain._name_hits(names, have) == name_hits(names, list(have))
    counts = {w: len(w) for w in catalog_words(text + " weather merging invoices")}
    from skillbook.selection.speller import Speller

    theirs = Speller({w: n for w, n in counts.items() if 5 <= len(w) <= 30 and w.isalpha()})
    ours = Speller(dict(theirs.counts), lazy=True)  # as the plain path builds it
    typo = " ".join(_typo(w, 1) for w in text.split())
    for probe in (text, typo, "wether mergeing invoicse"):
        assert ours.corrections(probe, lambda w: False, lambda w: False) == theirs.corrections(
            probe, lambda w: False, lambda w: False
        )


def test_a_lone_surrogate_in_the_request_ranks_as_its_replacement(pair: tuple[Any, Any]) -> None:
    """``weather \\udcff Oslo`` (a byte that is not UTF-8 in argv) stopped the selection
    with the tokenizer's TypeError; both paths rank it as ``weather \\ufffd Oslo``."""
    slow = pair[1]
    for role in ("selector", "everyone"):
        for request in ("weather \udcff Oslo", "\ud800"):
            shown = request.replace("\udcff", "\ufffd").replace("\ud800", "\ufffd")
            b, d = slow.selectors[role].select(request), slow.selectors[role].select(shown)
            assert {**b.to_json(), "query": shown} == d.to_json()
            found = _both(pair, role, request, None)
            if found is not None:
                assert_equivalent(found[0].to_json(), found[1].to_json(), request)
