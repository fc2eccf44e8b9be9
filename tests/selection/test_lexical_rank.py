"""A BM25-only ranking reads only what it needs and ranks as it did (issue 22, new registry queries).

``Bm25Index.scores`` adds each query word's scores, kept spread over the documents,
instead of asking bm25s (its conversions and ``np.add.at`` were most of a small
catalog's query); ``Selector.rank`` of a selector without embedding channels or
learned ranker skips the null skill, the coverage (unless the weights adapt to it)
and the request's words (unless a skill has trigger hints). These tests hold both to
the old computations, float for float, over generated catalogs' requests: typos,
unknown words, non-ASCII text, blanks, stop words, trigger phrases.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillbook.model import Skill
from skillbook.pipeline.parse.skill_file import parse_skill_text
from skillbook.selection import lexical, selector
from skillbook.selection.fusion import MixWeights, channel_weights, mix, rrf, squash
from skillbook.selection.lexical import Bm25Index, LexicalChannels
from skillbook.selection.selector import Ranking, Selector, SelectorSettings

WORDS = [
    "pdf",
    "merge",
    "split",
    "weather",
    "forecast",
    "git",
    "branch",
    "deploy",
    "docker",
    "image",
    "resize",
    "translate",
    "invoice",
    "email",
    "calendar",
    "slack",
    "notes",
    "backup",
    "chart",
    "markdown",
    "météo",
    "überweisung",
]

TRIGGERS = [
    "metadata:\n  openclaw:\n    triggers:\n      any: [split the bill]\n",
    "metadata:\n  openclaw:\n    triggers:\n      none: [weather]\n",
    "metadata:\n  openclaw:\n    triggers:\n      all: [docker, image]\n",
    "metadata:\n  openclaw:\n    triggers:\n      any: [merge pdf]\n      none: [git]\n",
]


def _skill(name: str, text: str) -> Skill:
    parsed = parse_skill_text(text)
    base = Path("/catalog") / name
    return Skill(
        name=name,
        description=parsed.description or "",
        file_path=base / "SKILL.md",
        base_dir=base,
        source="test",
        parsed=parsed,
    )


def _catalog(count: int, seed: int, triggers: bool) -> list[Skill]:
    rng = random.Random(seed)
    skills = []
    for i in range(count):
        words = rng.sample(WORDS, 4)
        name = f"{words[0]}-{words[1]}-{i}"
        extra = TRIGGERS[i % len(TRIGGERS)] if triggers and i % 7 == 0 else ""
        # Some bodies share every word, some none: posting lists long and short.
        body = " ".join(rng.choices(WORDS, k=rng.choice([0, 5, 60])))
        text = (
            f"---\nname: {name}\ndescription: {' '.join(words)} helper.\n{extra}---\n"
            f"# {name}\n\n## {words[2]} {words[3]}\n\n{body}\n"
        )
        skills.append(_skill(name, text))
    return skills


SETTINGS = {
    "bm25": SelectorSettings(backend="bm25"),
    "bm25-rrf": SelectorSettings(backend="bm25", fusion="rrf"),
    # Negative weights make -0.0 scores: the sum must still be the one signals() made.
    "bm25-own-weights": SelectorSettings(
        backend="bm25",
        weights=MixWeights(bm25_k=3.0, weights={"bm25": -0.4, "bm25Body": 0.9}, adaptive=True),
        min_score=0.05,
    ),
    # hybrid without a model: the monolingual mix of the BM25 channels alone.
    "hybrid-no-models": SelectorSettings(backend="hybrid"),
}


@pytest.fixture(scope="module")
def selectors() -> dict[str, Selector]:
    made = {}
    for name, s in SETTINGS.items():
        made[name] = Selector(_catalog(80, 22, triggers=True), settings=s, embedders={})
        made[name + "-plain"] = Selector(_catalog(40, 7, triggers=False), settings=s, embedders={})
    return made


def _typo(word: str, at: int) -> str:
    at %= max(1, len(word))
    return word[:at] + word[at + 1 :] if len(word) > 3 else word + "x"


requests = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
    st.lists(
        st.builds(_typo, st.sampled_from(WORDS), st.integers(0, 20)), min_size=1, max_size=4
    ).map(" ".join),
    st.sampled_from(
        ["split the bill please", "docker image weather", "merge pdf git", "the and of", "*", " "]
    ),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30),
    st.builds(
        lambda a, b, n: f"{a} {b} {n}",
        st.sampled_from(WORDS),
        st.sampled_from(WORDS),
        st.integers(0, 10**9),
    ),
)


def _reference(sel: Selector, request: str, depth: int) -> Ranking:
    """``Selector.rank`` as it was: every step of ``signals()``, then the same order."""
    sig = sel.signals(request)
    vetoed = {i for i, m in sig.matches.items() if m.vetoed}
    order_by = rrf(sig.channels) + sig.boost if sel.settings.fusion == "rrf" else sig.fused.copy()
    if vetoed:
        order_by[list(vetoed)] = -np.inf
    order = [i for i in _old_top(order_by, depth + len(vetoed)) if i not in vetoed][:depth]
    threshold = sel.settings.threshold(sel.profile)
    return Ranking(sel.skills, tuple(order), sig.fused, sig.channels, threshold)


def _old_top(scores: Any, n: int) -> list[int]:
    if n >= len(scores):
        return [int(i) for i in np.argsort(-scores, kind="stable")]
    part = np.argpartition(-scores, n)[:n]
    return [int(i) for i in part[np.lexsort((part, -scores[part]))]]


def _same(got: Ranking, expected: Ranking, request: str) -> None:
    assert got.order == expected.order, request
    assert got.threshold == expected.threshold, request
    # Bit for bit: the same float32 values, signs of zeros included.
    assert got.fused.dtype == expected.fused.dtype
    assert got.fused.tobytes() == expected.fused.tobytes(), request
    assert got.channels.keys() == expected.channels.keys()
    for name, scores in expected.channels.items():
        assert got.channels[name].tobytes() == scores.tobytes(), (request, name)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    request=requests, depth=st.sampled_from([1, 5, 25, 200]), which=st.sampled_from(list(SETTINGS))
)
def test_a_lexical_rank_is_the_rank_signals_gave(
    selectors: dict[str, Selector], request: str, depth: int, which: str
) -> None:
    for name in (which, which + "-plain"):
        sel = selectors[name]
        _same(sel.rank(request, depth=depth), _reference(sel, request, depth), request)


def test_the_fixed_requests_cover_vetoes_boosts_and_every_depth(
    selectors: dict[str, Selector],
) -> None:
    sel = selectors["bm25"]
    vetoed = [i for i, m in sel.signals("weather forecast").matches.items() if m.vetoed]
    ranking = sel.rank("weather forecast", depth=200)
    assert vetoed and not set(vetoed) & set(ranking.order)
    boosted = sel.signals("split the bill").boost
    assert boosted.max() > 0
    for request in ("weather forecast", "split the bill", "docker image", "", "zzqx"):
        for depth in (1, 3, 80, 500):
            _same(sel.rank(request, depth=depth), _reference(sel, request, depth), request)


def test_a_lexical_rank_reads_no_coverage_nor_words_it_does_not_need(
    selectors: dict[str, Selector], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No trigger hints and weights that do not adapt: neither is computed."""
    sel = selectors["bm25-plain"]
    expected = _reference(sel, "merge the pdf", 10)

    def refused(*args: object) -> object:
        raise AssertionError("computed for nothing")

    monkeypatch.setattr(Selector, "coverage", refused)
    monkeypatch.setattr(selector, "words", refused)
    _same(sel.rank("merge the pdf", depth=10), expected, "merge the pdf")


# ---------------------------------------------------------------- BM25 scores


def _bm25s(index: Bm25Index, query: str) -> Any:
    """The scores as ``Bm25Index.scores`` asked bm25s for them before."""
    known = [t for t in index.tokenize(query) if t in index._bm25.vocab_dict] if index.size else []
    if not known:
        return np.zeros(index.size, dtype=np.float32)
    return np.asarray(index._bm25.get_scores(known), dtype=np.float32)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(
        st.lists(st.sampled_from([*WORDS, "the", "and"]), max_size=30).map(" ".join),
        min_size=1,
        max_size=25,
    ),
    queries=st.lists(requests, min_size=1, max_size=6),
    spread=st.sampled_from([0, 64, lexical.SPREAD_BYTES]),
)
def test_bm25_scores_are_the_ones_bm25s_gives(
    texts: list[str], queries: list[str], spread: int
) -> None:
    # A memory too small for one word, for a few, and the default: kept or not, the same.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lexical, "SPREAD_BYTES", spread)
        index = Bm25Index(texts)
        for query in [*queries, *queries]:  # the second time from the kept words
            got = index.scores(query)
            expected = _bm25s(index, query)
            assert got.dtype == np.float32
            assert got.tobytes() == expected.tobytes(), query
        assert sum(row.nbytes for row in index._spread.values()) <= spread


def test_a_query_does_not_ask_bm25s(monkeypatch: pytest.MonkeyPatch) -> None:
    import bm25s

    channels = LexicalChannels()
    channels.update([_Doc("merge pdf files", "merge and split"), _Doc("weather", "forecast")])
    expected = {"bm25": [0.0, 0.0], "bm25Body": [0.0, 0.0]}
    before = channels.scores("merge pdf")
    assert before["bm25"][0] > 0 and before["bm25Body"][0] > 0

    def refused(*args: object, **kwargs: object) -> object:
        raise AssertionError("bm25s asked at query time")

    monkeypatch.setattr(bm25s.BM25, "get_scores", refused)
    again = channels.scores("merge pdf")
    assert {k: v.tobytes() for k, v in again.items()} == {k: v.tobytes() for k, v in before.items()}
    assert {k: v.tolist() for k, v in channels.scores("qqq").items()} == expected


class _Doc:
    def __init__(self, lexical: str, body: str) -> None:
        self.lexical = lexical
        self.body = body


# ---------------------------------------------------------------- the mix


def _old_squash(scores: Any, k: float) -> Any:
    s = np.maximum(np.asarray(scores, dtype=np.float32), 0.0)
    return np.asarray(s / (s + np.float32(k)), dtype=np.float32)


def _old_mix(channels: dict[str, Any], weights: MixWeights, coverage: float) -> Any:
    per = channel_weights(weights, channels, coverage)
    total: Any = None
    for name, scores in channels.items():
        w = per[name]
        if not w:
            continue
        part = (
            _old_squash(scores, weights.bm25_k) if name.startswith("bm25") else np.asarray(scores)
        )
        total = part * np.float32(w) if total is None else total + part * np.float32(w)
    if total is None:
        size = len(next(iter(channels.values()))) if channels else 0
        return np.zeros(size, dtype=np.float32)
    return np.asarray(total, dtype=np.float32)


_values = st.lists(
    st.one_of(st.floats(width=32), st.floats(-5, 50, width=32), st.just(0.0), st.just(-0.0)),
    min_size=3,
    max_size=3,
)


@settings(max_examples=300, deadline=None)
@given(
    bm25=_values,
    body=_values,
    cosine=_values,
    wide=st.booleans(),
    k=st.sampled_from([10.0, 6.0, 0.5, 0.0, -0.0]),
    w=st.lists(st.sampled_from([0.5, 0.7, 0.0, -0.4, 0.3, 1e-3]), min_size=3, max_size=3),
    adaptive=st.booleans(),
    coverage=st.floats(0, 1),
)
def test_the_mix_is_the_sum_it_was(
    bm25: list[float],
    body: list[float],
    cosine: list[float],
    wide: bool,
    k: float,
    w: list[float],
    adaptive: bool,
    coverage: float,
) -> None:
    """The float32 constants kept between requests: the same scores, bit for bit."""
    dtype = np.float64 if wide else np.float32
    channels = {
        "bm25": np.asarray(bm25, dtype=dtype),
        "bm25Body": np.asarray(body, dtype=np.float32),
        "multilingual": np.asarray(cosine, dtype=dtype),
    }
    weights = MixWeights(
        bm25_k=k,
        weights={"bm25": w[0], "bm25Body": w[1], "multilingual": w[2]},
        adaptive=adaptive,
    )
    with np.errstate(all="ignore"):
        for _ in range(2):  # the constants made, then kept
            got = mix(channels, weights, coverage)
            expected = _old_mix(channels, weights, coverage)
            assert got.dtype == expected.dtype == np.float32
            assert got.tobytes() == expected.tobytes()
            assert squash(bm25, k).tobytes() == _old_squash(bm25, k).tobytes()
