"""The learned ranker: its features, its data file, and how the selector uses it."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillbook.model import Skill
from skillbook.selection.embedders import unit_rows
from skillbook.selection.ranker import (
    FEATURES,
    LearnedRanker,
    default_ranker,
    features,
    name_hits,
)
from skillbook.selection.selector import Selector, SelectorSettings


class _Hashing:
    """A stand-in model: a text's vector is drawn from the text's hash."""

    def __init__(self, model: str) -> None:
        self._id = model

    @property
    def id(self) -> str:
        return self._id

    def embed(self, texts: Sequence[str]) -> Any:
        rng = [np.random.default_rng(list(hashlib.sha256(t.encode()).digest())) for t in texts]
        return unit_rows([r.normal(size=16) for r in rng])


SKILLS = {
    "weather": "Current weather and forecasts for any city: rain, wind.",
    "stripe": "Stripe payments: customers, subscriptions, invoices and refunds.",
    "trello": "Manage Trello boards, lists and cards.",
}


def _skills() -> list[Skill]:
    return [Skill.create(n, d, base_dir=Path("/x") / n) for n, d in SKILLS.items()]


def _hybrid(**kwargs: Any) -> Selector:
    embedders = {"wordllama": _Hashing("wl"), "multilingual": _Hashing("ml")}
    settings = kwargs.pop("settings", SelectorSettings(backend="hybrid"))
    return Selector(_skills(), settings=settings, embedders=embedders, **kwargs)


def _only(name: str, weight: float) -> LearnedRanker:
    """A model that scores by one feature alone."""
    size = len(FEATURES)
    coef = [weight if f == name else 0.0 for f in FEATURES]
    return LearnedRanker((0.0,) * size, (1.0,) * size, tuple(coef), 0.0, 30, 10.0)


def test_shipped_model_loads_and_a_model_for_other_features_is_refused() -> None:
    model = default_ranker()
    assert len(model.coef) == len(FEATURES) and model.depth >= 20
    data = model.to_json()
    assert LearnedRanker.from_json(data) == model
    with pytest.raises(ValueError, match="not this version's"):
        LearnedRanker.from_json({**data, "features": data["features"][:-1]})
    with pytest.raises(ValueError, match="values"):
        LearnedRanker.from_json({**data, "coef": data["coef"][:-1]})


_JSON = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["features", "mean", "scale", "coef", "intercept", "depth", "bm25K"]),
        _JSON,
    ),
    st.booleans(),
)
def test_a_malformed_model_file_is_a_value_error(overrides: dict[str, Any], keep: bool) -> None:
    """Whatever ``ranker.json`` holds, reading it gives a model or a ValueError."""
    data = {**default_ranker().to_json(), **overrides} if keep else overrides
    try:
        model = LearnedRanker.from_json(data)
    except ValueError:
        return
    assert len(model.coef) == len(FEATURES) and model.depth >= 1


def test_features_describe_each_candidate_against_the_whole_catalog() -> None:
    channels = {
        "bm25": np.array([10.0, 0.0, 30.0]),
        "bm25Body": np.array([0.0, 0.0, 0.0]),
        "wordllama": np.array([0.5, 0.1, 0.3]),
        "multilingual": np.array([0.2, 0.6, 0.4]),
    }
    fused = np.array([0.3, 0.2, 0.5])
    x = features(
        channels,
        fused,
        np.zeros(3),
        [2, 0],
        coverage=0.5,
        null_cosine=0.25,
        words=3,
        name_hit=[1.0, 0.0],
        bm25_k=10.0,
    )
    col = {name: x[:, i] for i, name in enumerate(FEATURES)}
    assert x.shape == (2, len(FEATURES))
    assert col["bm25"] == pytest.approx([0.75, 0.5])  # squashed: s / (s + 10)
    assert col["bm25Gap"] == pytest.approx([0.0, -0.25])
    assert col["wlRank"] == pytest.approx(np.log1p([1, 0]))  # how many skills score higher
    assert col["mixLead"] == pytest.approx([0.2, -0.2])  # against the best other skill
    assert col["mlOverNull"] == pytest.approx([0.15, -0.05])
    assert col["uncov*ml"] == pytest.approx([0.2, 0.1])
    assert col["nameHit"].tolist() == [1.0, 0.0]
    assert features(
        channels,
        fused,
        np.zeros(3),
        [],
        coverage=1,
        null_cosine=None,
        words=0,
        name_hit=[],
        bm25_k=10.0,
    ).shape == (0, len(FEATURES))


def test_name_hits_count_the_name_words_the_request_uses() -> None:
    words = ("merge", "my", "pdf", "files")
    assert name_hits(["pdf-merge", "gh-fix-ci", "PDF Merge & Split", "x"], words) == [
        1.0,
        0.0,
        pytest.approx(2 / 3),
        0.0,
    ]


def test_the_model_orders_the_candidates_and_the_mix_score_selects() -> None:
    """The learned model only reorders: each skill keeps its ``mix`` score, so the
    threshold, the null floor and ``routeMargin`` mean what they meant."""
    plain = _hybrid(settings=SelectorSettings(backend="hybrid", learned=False, min_score=0.0))
    request = "refund the stripe invoice"
    before = plain.select(request)
    assert plain.ranker is None
    # A model that puts the skill whose name the request does NOT use first.
    flipped = _hybrid(
        settings=SelectorSettings(backend="hybrid", min_score=0.0), ranker=_only("nameHit", -5.0)
    )
    after = flipped.select(request)
    assert after.ranked[-1].name == "stripe"
    raised = _hybrid(
        settings=SelectorSettings(backend="hybrid", min_score=0.0), ranker=_only("nameHit", 5.0)
    )
    assert raised.select(request).ranked[0].name == "stripe"
    mix_of = {c.name: c.score for c in before.ranked}
    assert {c.name: c.score for c in after.ranked} == pytest.approx(mix_of)
    assert all("learned" in c.parts for c in after.ranked)
    assert "learned" not in before.ranked[0].parts
    assert [c.rank for c in after.ranked] == [1, 2, 3]
    # What is selected: the top_k of the new order whose mix score reaches the threshold.
    high = replace(flipped.settings, min_score=mix_of["stripe"] + 1e-6)
    strict = _hybrid(settings=high, ranker=_only("nameHit", -5.0)).select(request)
    assert "stripe" not in strict.names()


def test_an_empty_or_one_skill_catalog_ranks_without_error() -> None:
    embedders = {"wordllama": _Hashing("wl"), "multilingual": _Hashing("ml")}
    empty = Selector([], settings=SelectorSettings(backend="hybrid"), embedders=embedders)
    assert empty.ranker is not None and empty.select("merge pdf").ranked == ()
    one = Selector(_skills()[:1], settings=SelectorSettings(backend="hybrid"), embedders=embedders)
    assert [c.name for c in one.select("weather in Oslo").ranked] == ["weather"]


def test_the_model_applies_only_to_the_default_hybrid_mix() -> None:
    assert _hybrid().ranker is default_ranker()
    assert _hybrid(settings=SelectorSettings(backend="hybrid", fusion="rrf")).ranker is None
    assert _hybrid(settings=SelectorSettings(backend="embedding")).ranker is None
    bm25 = Selector(_skills(), settings=SelectorSettings(backend="bm25"))
    assert bm25.ranker is None
    # Without the multilingual channel (hybrid-monolingual) it was not fitted: off.
    mono = Selector(
        _skills(),
        settings=SelectorSettings(backend="hybrid"),
        embedders={"wordllama": _Hashing("wl")},
    )
    assert mono.ranker is None
    custom = SelectorSettings(backend="hybrid", weights=default_weights())
    assert _hybrid(settings=custom).ranker is None


def default_weights() -> Any:
    from skillbook.selection.selector import DEFAULT_WEIGHTS

    return DEFAULT_WEIGHTS["hybrid"]


def test_bm25_alone_never_limits_blas() -> None:
    # Limiting BLAS's threads (threadpoolctl finding its libraries each time) cost a
    # registry's BM25 search a tenth of each new query for products it never makes.
    bm25 = Selector(_skills(), settings=SelectorSettings(backend="bm25"))
    limited: list[int] = []

    def counting() -> Any:
        limited.append(1)
        return contextlib.nullcontext()

    bm25._one_blas_thread = counting
    assert bm25.rank("merge pdf").order and bm25.select("merge pdf").ranked
    assert limited == []
    hybrid = _hybrid()
    hybrid._one_blas_thread = counting
    hybrid.rank("merge pdf")
    assert limited == [1]  # the embedding channels' products still run on one thread
