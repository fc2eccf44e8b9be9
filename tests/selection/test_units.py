"""Triggers, documents, fusion, evaluation metrics and the query-file parser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skillbook.model import Skill, SkillMetadata
from skillbook.selection import QueryFileError
from skillbook.selection.documents import body_headings, body_prose, document_for, name_words
from skillbook.selection.evaluate import (
    LabelledQuery,
    QueryResult,
    metrics,
    parse_queries,
    threshold_curve,
)
from skillbook.selection.fusion import MixWeights, channel_weights, mix, rrf, squash
from skillbook.selection.phrases import words
from skillbook.selection.triggers import match_triggers, skill_triggers


def skill_with(
    meta_raw: dict[str, object] | None = None, frontmatter: dict[str, str] | None = None
) -> Skill:
    meta = SkillMetadata(raw=meta_raw) if meta_raw is not None else None
    return Skill.create(
        "s", "a skill", base_dir=Path("/x/s"), metadata=meta, frontmatter=frontmatter
    )


def test_trigger_any_all_none() -> None:
    triggers, problems = skill_triggers(
        skill_with(
            {
                "triggers": {
                    "any": ["watch youtube", "video"],
                    "all": ["pay", "invoice"],
                    "none": ["refund"],
                }
            }
        )
    )
    assert problems == ()
    assert match_triggers(triggers, words("Please WATCH YouTube now")).boosted
    assert not match_triggers(triggers, words("watch the youtube")).boosted  # not adjacent
    assert match_triggers(triggers, words("pay the invoice")).boosted
    assert not match_triggers(triggers, words("pay the bill")).boosted
    vetoed = match_triggers(triggers, words("video refund please"))
    assert vetoed.vetoed and not vetoed.boosted and vetoed.reasons[0] == "none:refund"


def test_top_level_trigger_list_and_bad_entries_are_reported() -> None:
    data: dict[str, Any] = {"triggers": ["summarize video", {"regex": "^/x"}]}
    skill = Skill.create("s", "d", base_dir=Path("/x/s"))
    skill = skill.__class__(
        skill.name,
        skill.description,
        skill.file_path,
        skill.base_dir,
        skill.source,
        parsed=skill.parsed.__class__(
            frontmatter=skill.parsed.frontmatter.__class__(values={}, data=data),
            body="",
            body_line=1,
            metadata=None,
            invocation=skill.parsed.invocation,
            dispatch=None,
        ),
    )
    triggers, problems = skill_triggers(skill)
    assert triggers.any == (("summarize", "video"),)
    assert [p.code for p in problems] == ["selection.trigger-ignored"]


def test_document_headings_skip_code_and_key_is_content_hash() -> None:
    body = "# Usage\n```bash\n# not a heading\n```\n## Merge files\ntext line\n"
    assert body_headings(body) == ("Usage", "Merge files")
    assert "not a heading" not in body_prose(body)
    assert name_words("gh-fix-ci") == "gh fix ci"
    a = document_for(Skill.create("pdf-merge", "Merge PDFs", base_dir=Path("/a")))
    b = document_for(Skill.create("pdf-merge", "Merge PDFs", base_dir=Path("/elsewhere")))
    c = document_for(Skill.create("pdf-merge", "Merge PDF files", base_dir=Path("/a")))
    assert a.key == b.key != c.key


def test_squash_mix_and_rrf() -> None:
    assert squash(np.array([0.0, 10.0]), 10.0).tolist() == [0.0, 0.5]
    channels = {"bm25": np.array([10.0, 0.0]), "wordllama": np.array([0.1, 0.9])}
    fused = mix(channels, MixWeights(bm25_k=10.0, weights={"bm25": 1.0, "wordllama": 0.5}))
    assert fused.tolist() == pytest.approx([0.55, 0.45])
    fused_rrf = rrf({"a": np.array([3.0, 1.0, 0.0]), "b": np.array([1.0, 2.0, 0.0])})
    assert fused_rrf[2] == 0.0  # found by no channel
    assert fused_rrf[0] == pytest.approx(fused_rrf[1])


def test_query_file_errors_name_the_line() -> None:
    with pytest.raises(QueryFileError, match=r"q:2: 'expected' must be a list"):
        parse_queries(
            ['{"id": "a", "query": "x", "expected": []}', '{"id": "b", "query": "y"}'], where="q"
        )
    with pytest.raises(QueryFileError, match="q:1: not JSON"):
        parse_queries(["{nope"], where="q")
    with pytest.raises(QueryFileError, match="appears twice"):
        parse_queries(['{"id": "a", "query": "x", "expected": []}'] * 2, where="q")
    parsed = parse_queries(
        ["// comment", "", '{"id": 7, "query": "x", "expected": ["s"], "kind": "k"}']
    )
    assert parsed == [LabelledQuery("7", "x", ("s",), "k")]


def test_metrics() -> None:
    q = LabelledQuery
    results = [
        QueryResult(q("1", "a", ("x",)), ("x", "y"), ("x",)),
        QueryResult(q("2", "b", ("y", "z")), ("w", "v", "z"), ()),
        QueryResult(q("3", "c", ("x",)), ("a", "b", "c", "d"), ("a",)),
        QueryResult(q("4", "hi", ()), ("x",), ()),
        QueryResult(q("5", "yo", ()), ("x",), ("x",)),
    ]
    m = metrics(results)
    assert (m.positives, m.negatives) == (3, 2)
    assert m.recall[1] == pytest.approx(1 / 3) and m.recall[3] == pytest.approx(2 / 3)
    assert m.mrr == pytest.approx((1 + 1 / 3) / 3)
    assert m.selected_recall == pytest.approx(1 / 3) and m.abstention == 0.5


def test_threshold_curve_counts_what_each_threshold_selects() -> None:
    hit = QueryResult(LabelledQuery("a", "q", ("x",)), ("x", "y"), ("x",), (0.6, 0.3))
    low = QueryResult(LabelledQuery("b", "q", ("y",)), ("x", "y"), (), (0.3, 0.2))
    chat = QueryResult(LabelledQuery("c", "hi", ()), ("x",), (), (0.4,))
    curve = {p.threshold: p for p in threshold_curve([hit, low, chat], 2, [0.2, 0.35, 0.5, 0.7])}
    # 0.2: a picks x and y (x right), b picks x and y (y right), c picks x.
    assert curve[0.2].precision == 2 / 5 and curve[0.2].recall == 1.0
    assert curve[0.2].abstention == 0.0
    assert (curve[0.35].precision, curve[0.35].recall, curve[0.35].abstention) == (0.5, 0.5, 0.0)
    assert (curve[0.5].precision, curve[0.5].recall, curve[0.5].abstention) == (1.0, 0.5, 1.0)
    assert curve[0.7].precision is None and curve[0.7].recall == 0.0
    # Only the top 1 counts with top_k 1; default thresholds span the best scores seen.
    assert threshold_curve([hit, low, chat], 1, [0.2])[0].precision == 1 / 3
    auto = threshold_curve([hit, low, chat], 2)
    assert auto[0].threshold == 0.3 and auto[-1].threshold == 0.6


def test_adaptive_mix_moves_the_english_channels_weight_to_multilingual() -> None:
    """A request whose words the catalog lacks (another language) is ranked by the
    multilingual channel; the weights keep their sum, so one threshold still holds."""
    w = MixWeights(
        bm25_k=10.0,
        weights={"bm25": 0.2, "bm25Body": 0.2, "wordllama": 0.2, "multilingual": 0.4},
        adaptive=True,
    )
    names = ("bm25", "bm25Body", "wordllama", "multilingual")
    assert channel_weights(w, names, 1.0) == pytest.approx(
        dict(zip(names, (0.2, 0.2, 0.2, 0.4), strict=True))
    )
    half = channel_weights(w, names, 0.5)
    assert half == pytest.approx(dict(zip(names, (0.1, 0.1, 0.1, 0.7), strict=True)))
    assert channel_weights(w, names, 0.0)["multilingual"] == pytest.approx(1.0)
    assert channel_weights(w, names, 7.0) == channel_weights(w, names, 1.0)  # clamped
    # Noise in BM25 and wordllama (a Spanish request) no longer outranks the encoder.
    channels = {
        "bm25": np.array([30.0, 0.0]),
        "bm25Body": np.array([0.0, 0.0]),
        "wordllama": np.array([0.3, 0.1]),
        "multilingual": np.array([0.2, 0.5]),
    }
    assert mix(channels, w, coverage=1.0).argmax() == 0
    assert mix(channels, w, coverage=0.0).argmax() == 1
    # Not adaptive, or no multilingual weight: coverage changes nothing.
    fixed = MixWeights(bm25_k=10.0, weights={"bm25": 0.5, "wordllama": 0.5}, adaptive=True)
    assert mix(channels, fixed, coverage=0.0).tolist() == mix(channels, fixed).tolist()


def test_coverage_is_the_share_of_request_words_the_catalog_knows() -> None:
    from dataclasses import dataclass

    from skillbook.selection.lexical import LexicalChannels

    @dataclass(frozen=True)
    class Doc:
        lexical: str
        body: str = ""

    channels = LexicalChannels()
    assert channels.coverage("merge pdf") == 1.0  # nothing indexed yet
    channels.update([Doc("merge pdf files"), Doc("weather forecast")])
    assert channels.coverage("please merge the files") == 1.0  # stop words and stems
    assert channels.coverage("merge zusammenfügen") == 0.5
    assert channels.coverage("¿va a llover mañana en Lisboa?") == 0.0
    assert channels.coverage("hi, how are you?") == 0.0  # no content word at all


def test_lexical_channels_rebuild_in_the_background() -> None:
    from dataclasses import dataclass

    from skillbook.selection.lexical import LexicalChannels

    @dataclass(frozen=True)
    class Doc:
        lexical: str
        body: str = ""

    a, b, c = Doc("merge pdf files"), Doc("weather forecast"), Doc("trello cards")
    channels = LexicalChannels(sync_limit=1)
    channels.update([a, b])  # the first build is always inline
    assert channels.wait() and channels.scores("pdf")["bm25"][0] > 0
    changed = Doc("merge pdf files and split them")
    channels.update([c, changed, b])
    early = channels.scores("weather")["bm25"]
    assert len(early) == 3 and early[2] > 0  # unchanged skills keep their place and score
    assert channels.wait(timeout=30)
    late = channels.scores("split")["bm25"]
    assert late[1] > 0 and late[0] == 0 and late[2] == 0
    assert channels.scores("trello")["bm25"][0] > 0


def test_the_speller_of_a_large_catalog_is_built_off_the_build_path() -> None:
    from dataclasses import dataclass

    from skillbook.selection.lexical import LexicalChannels

    @dataclass(frozen=True)
    class Doc:
        lexical: str
        body: str = ""

    channels = LexicalChannels()
    channels.spell_sync_limit = 0  # every catalog counts as large
    no_word = {"forecast"}.__contains__
    channels.update([Doc("weather forecast"), Doc("trello cards")])
    assert channels.wait(timeout=30)
    assert channels.corrections("the wether", no_word) == ["weather"]
    channels.update([Doc("merge pdf files"), Doc("trello cards")])
    assert channels.wait(timeout=30)
    assert channels.corrections("mergge", no_word) == ["merge"]
    assert channels.corrections("the wether", no_word) == []  # the old catalog's words are gone


def test_hybrid_without_the_multilingual_channel_has_its_own_calibration() -> None:
    from skillbook.selection.selector import DEFAULT_MIN_SCORE, Selector, SelectorSettings

    skills = [Skill.create("a", "merge pdf files", base_dir=Path("/a"))]
    alone = Selector(skills, settings=SelectorSettings(backend="hybrid"))
    assert alone.profile == "hybrid-monolingual"
    assert alone.select("merge pdf").threshold == DEFAULT_MIN_SCORE["hybrid-monolingual"]
    custom = Selector(skills, settings=SelectorSettings(backend="hybrid", min_score=0.5))
    assert custom.select("merge pdf").threshold == 0.5
    assert Selector(skills, settings=SelectorSettings(backend="bm25")).profile == "bm25"


def test_a_lazy_speller_builds_its_index_only_for_a_word_that_needs_it() -> None:
    from skillbook.selection.speller import Speller

    counts = {"weather": 2, "vercel": 1, "merge": 1}
    lazy, eager = Speller(counts, lazy=True), Speller(counts)
    assert lazy.corrections("vercel: the weather, merge it") == []  # known words only
    assert lazy._built is None  # a restored selector's usual request builds nothing
    assert eager._built is not None
    for text in ("the wether", "vercle and mergee", "short ok", "eather"):
        assert lazy.corrections(text) == eager.corrections(text)
    assert lazy._built == eager._built


def test_speller_corrects_typos_not_words() -> None:
    from skillbook.selection.lexical import catalog_words
    from skillbook.selection.speller import Speller

    speller = Speller.of(
        [
            catalog_words("Get the weather forecast"),
            catalog_words("Deploy to Vercel"),
            catalog_words("Merge PDF files, weather maps"),
        ]
    )
    assert speller.correct("wether") == "weather"  # deletion
    assert speller.correct("vercle") == "vercel"  # transposition
    assert speller.correct("mergee") == "merge"  # insertion
    assert speller.correct("weather") is None  # known
    assert speller.correct("eather") is None  # the first letter is kept
    lexicon = {"leather"}.__contains__
    assert speller.correct("leather", lexicon) is None  # a real word is no typo
    assert speller.corrections("the wether, deploy to vercle!") == ["weather", "vercel"]
    assert speller.corrections("forecasts", known_stem=lambda w: w == "forecasts") == []
    # Hostile input: a word too long to be a typo, and a pasted text of unknown words
    # (looked up at most SPELL_LOOKUPS times, so the typo at the end is not reached).
    assert speller.correct("w" + "e" * 100_000) is None
    assert speller.corrections("wether" + "x" * 100_000) == []
    pasted = " ".join(f"zzzz{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}" for i in range(2000))
    assert speller.corrections(pasted + " wether") == []
    assert speller.corrections("wether " + pasted) == ["weather"]
