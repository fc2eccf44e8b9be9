"""The concept bridges of ``benchmarks/recall_experiments.py`` on small inputs.

The script measures them by cross-validation (nothing of it ships); these check that
what it measures is what its docstring says: a request's own words are never
"bridged" to, nor words the catalog lacks, the strongest terms are kept in a fixed
order, and co-occurrence partners need support in three skills.
"""

from __future__ import annotations

from types import ModuleType

import pytest
from benchmark_scripts import benchmark_script

pytest.importorskip("bm25s")


@pytest.fixture(scope="module")
def rx() -> ModuleType:
    return benchmark_script("recall_experiments")


def _tokenize(text: str) -> list[str]:
    # A stand-in for the BM25 tokenizer: lower-case words, a plural's "s" dropped.
    return [w.rstrip("s") for w in text.casefold().split() if len(w) > 2]


def test_expand_keeps_catalog_terms_the_request_lacks(rx: ModuleType) -> None:
    table = {
        "picture": [("photo", 0.77), ("image", 0.71), ("pictures", 0.6)],
        "draw": [("sketch", 0.46), ("drew", 0.75)],
    }
    vocab = {"photo", "image", "sketch", "picture"}
    terms = rx.expand("draw a picture of my photos", table, _tokenize, vocab)
    # "photo" is the request's own stem ("photos"), "drew" no catalog word.
    assert terms == [("image", 0.71), ("sketch", 0.46)]


def test_expand_caps_and_orders_and_can_skip_known_words(rx: ModuleType) -> None:
    table = {"alpha": [(f"term{i:02d}", 0.5) for i in range(30)]}
    vocab = {f"term{i:02d}" for i in range(30)} | {"alpha"}
    terms = rx.expand("alpha", table, _tokenize, vocab)
    assert len(terms) == rx.MAX_TERMS
    assert [t for t, _ in terms] == sorted(t for t, _ in terms)  # ties by term
    # "alpha" is a catalog word: with unknown_only it brings nothing.
    assert rx.expand("alpha", table, _tokenize, vocab, unknown_only=True) == []


def test_pmi_partners_need_three_skills(rx: ModuleType) -> None:
    docs = [{"audio", "transcrib", "whisper"}] * 3 + [{"audio", "music"}] * 2 + [{"pdf"}] * 5
    table = rx.pmi_table(docs)
    assert {p for p, _ in table["transcrib"]} == {"audio", "whisper"}
    assert "music" not in table  # in two skills only
    assert all(0.3 <= v <= 1.0 for pairs in table.values() for _, v in pairs)
