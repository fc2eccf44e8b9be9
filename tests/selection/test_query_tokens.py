"""Requests tokenized from the saved tables give the libraries' ids (issue 22).

A fresh ``skillbook select`` no longer builds the two tokenizers' vocabularies: it
reads compact tables saved with the selector (:mod:`skillbook.selection.query_tokens`).
Differential tests against the real ``sentencepiece`` and ``tokenizers`` libraries
over random text (ASCII, accents, CJK, Cyrillic, emoji, combining marks, full-width
letters, odd whitespace, special tokens' text): the tables either give the library's
ids or decline (None), never other ids; and a restored selector ranks random
requests, typos and unknown words included, as the built one does, without loading
either tokenizer for ordinary text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selection_support import env_for, make_workspace

from skillbook.selection import query_tokens, saved
from skillbook.selection.embedders import MultilingualEmbedder, WordLlamaEmbedder
from skillbook.selection.multilingual import MultilingualEncoder
from skillbook.selection.selector import Selector

#: Characters chosen to reach every branch: pieces of their own, NFKC changes
#: (full-width, ligatures, combining marks, jamo), whitespace kinds, the ``▁`` itself,
#: byte fallback (emoji, rare CJK), and the special tokens' characters.
ALPHABET = (
    "abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789 .,;:!?-_/'\"()<>[]{}@#$%&*+=~`|\\"
    "éèêàâçüöäßñøåœÉ ЖжПривет мир 日本語の天気中文한국어 ﾃｽﾄ ＷＯＲＬＤ ﬁ ﬀ "
    "\u0301\u0308\u1100\u1161\u11a8\u3131 \t\n\r\u00a0\u3000\u2009\u2581\u200b\u00ad "
    "😀🚀\U0001f9ea\U00020000 \x00\x1f\ufeff"
)
texts = st.one_of(
    st.text(alphabet=ALPHABET, max_size=40),
    st.text(max_size=20),  # any code point at all
    st.lists(
        st.sampled_from(["<s>", "</s>", "<unk>", "pdf", "merge", " ", "▁", "é"]), max_size=6
    ).map("".join),
)


@pytest.fixture(scope="module")
def sp() -> Any:
    import sentencepiece

    from skillbook.selection.multilingual import _resources

    return sentencepiece.SentencePieceProcessor(model_file=str(_resources() / "sp.model"))


@pytest.fixture(scope="module")
def unigram(sp: Any) -> query_tokens.UnigramTokens:
    return query_tokens.UnigramTokens(query_tokens.unigram_tables(sp))


@pytest.fixture(scope="module")
def llama() -> tuple[Any, query_tokens.BpeTokens]:
    from tokenizers import Tokenizer

    wordllama = WordLlamaEmbedder()
    path = wordllama._tokenizer_file
    blob = query_tokens.bpe_tables(path.read_bytes())
    return Tokenizer.from_file(str(path)), query_tokens.BpeTokens(blob)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_unigram_tables_give_sentencepieces_ids_or_decline(
    sp: Any, unigram: query_tokens.UnigramTokens, text: str
) -> None:
    ids = unigram.encode(text)
    if ids is not None:
        assert ids == sp.encode(text), text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_bpe_tables_give_the_tokenizers_ids_or_decline(
    llama: tuple[Any, query_tokens.BpeTokens], text: str
) -> None:
    tokenizer, tables = llama
    ids = tables.encode(text)
    if ids is not None:
        assert ids == tokenizer.encode(text, add_special_tokens=False).ids, text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=ALPHABET, max_size=12))
def test_piece_lookups_are_sentencepieces(
    sp: Any, unigram: query_tokens.UnigramTokens, word: str
) -> None:
    for piece in (word, "\u2581" + word):
        assert unigram.piece_id(piece) == sp.piece_to_id(piece)


def test_ordinary_requests_are_settled_by_the_tables(
    sp: Any, unigram: query_tokens.UnigramTokens, llama: tuple[Any, query_tokens.BpeTokens]
) -> None:
    # The point of the tables: these never reach the libraries.
    tokenizer, bpe = llama
    for text in (
        "merge two pdf files",
        "  Résumé the PDF-file, please!!  ",
        "météo à Lyon demain",
        "天気はどう",
        "Привет, как дела?",
        "wether in paris\tand\nlondon",
    ):
        assert unigram.encode(text) == sp.encode(text), text
        assert bpe.encode(text) == tokenizer.encode(text, add_special_tokens=False).ids
    # Byte fallback: wordllama's pieces for a character it has no piece for.
    emoji = "emoji 😀 in text"
    assert bpe.encode(emoji) == tokenizer.encode(emoji, add_special_tokens=False).ids
    assert unigram.encode(emoji) is None  # unknown to SentencePiece: the library decides
    for declined in ("<s>merge", "ＷＯＲＬＤ", "e\u0301"):  # special text, NFKC changes
        assert bpe.encode(declined) is None or unigram.encode(declined) is None


def test_the_encoder_with_tables_tokenizes_as_the_library(tmp_path: Path) -> None:
    library = MultilingualEncoder(workers=1, weights_cache=tmp_path)
    tables = library.query_tables(tmp_path)
    fast = MultilingualEncoder(workers=1, weights_cache=tmp_path, tables=tables)
    assert fast._loaded is None  # no sentencepiece model loaded
    texts = ["merge two pdf files", "météo à Lyon", "", "   ", "x" * 300]
    assert fast.tokenize(texts, max_tokens=96) == library.tokenize(texts, max_tokens=96)
    assert fast._loaded is None
    assert fast.is_word("weather") and not fast.is_word("wehter")
    # A text the tables do not settle: the library is loaded, the ids are its ids.
    odd = ["ＷＯＲＬＤ e\u0301"]
    assert fast.tokenize(odd) == library.tokenize(odd)
    assert fast._loaded is not None


def test_the_tables_cache_is_reused_and_a_damaged_copy_rebuilt(tmp_path: Path) -> None:
    wordllama = WordLlamaEmbedder()
    first = wordllama.query_tables(tmp_path)
    (kept,) = tmp_path.glob("tokens-*.tables")
    assert wordllama.query_tables(tmp_path) == first
    for damage in (kept.read_bytes()[:1000], b"\x7f" * 64, b""):
        kept.write_bytes(damage)
        assert wordllama.query_tables(tmp_path) == first
        assert kept.read_bytes()[:-4] == first  # written again


# --------------------------------------------------------------------------- selectors


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Selector, str, Path]:
    """A selector built over a small workspace, its saved file and the models folder."""
    from skillbook.pipeline.book import Loader

    tmp = tmp_path_factory.mktemp("pair")
    models = tmp / "models"
    embedders: dict[str, Any] = {
        "wordllama": WordLlamaEmbedder(),
        "multilingual": MultilingualEmbedder(weights_cache=models),
    }
    ws = make_workspace(tmp)
    book = Loader(ws, env=env_for(tmp), cwd=tmp).load()
    selector = Selector(book.eligible, embedders=embedders)
    path = str(tmp / "x.selector")
    saved.save(path, "key", {"selector": selector}, {"why": []}, {"host": "test"}, models=models)
    return selector, path, models


def _restored(path: str, models: Path) -> Selector:
    found = saved.read_header(path, "key")
    assert found is not None
    loaded = saved.load(*found, weights_cache=models)
    assert loaded is not None
    return loaded.selectors["selector"]


@pytest.fixture(scope="module")
def pair(built: tuple[Selector, str, Path]) -> tuple[Selector, Selector]:
    selector, path, models = built
    return selector, _restored(path, models)


words = st.sampled_from(
    [
        "merge", "pdf", "files", "weather", "wether", "forecast", "forcast", "notes",
        "météo", "demain", "天気", "fusionner", "documents", "zxqv", "blockchain",
        "ＰＤＦ", "e\u0301t\u00e9", "😀", "<s>", "github", "githbu", "the", "and",
    ]
)  # fmt: skip
requests = st.one_of(
    st.lists(words, min_size=1, max_size=6).map(" ".join),
    st.text(alphabet=ALPHABET, max_size=30),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests)
def test_a_restored_selector_ranks_random_requests_as_the_built_one(
    pair: tuple[Selector, Selector], request: str
) -> None:
    built, restored = pair
    a, b = built.select(request), restored.select(request)
    assert a.to_json() == b.to_json(), request
    assert [c.score for c in a.ranked] == [c.score for c in b.ranked]


def test_a_restored_selector_loads_no_tokenizer_for_ordinary_requests(
    built: tuple[Selector, str, Path],
) -> None:
    selector, path, models = built
    restored = _restored(path, models)
    for request in ("merge two pdf files", "météo à Lyon demain", "wether in paris"):
        assert selector.select(request).to_json() == restored.select(request).to_json()
    embedders: Any = restored.embedders
    assert embedders["wordllama"]._loaded is None
    assert embedders["multilingual"]._model._loaded is None


def test_a_damaged_table_without_a_free_slot_answers_and_ends() -> None:
    # Every slot taken by a string no lookup matches: probing must stop, not spin.
    import struct

    slots = struct.pack("<ii", 1, 3) * 1024
    strings = b"\0\x01\xff"
    header = {"count": 4, "slots": 1024, "unk": 0, "hidden": [], "longest": 4}
    header |= {"safe": "ab", "spaces": " "}
    scores = struct.pack("<4f", 0.0, -1.0, -2.0, -3.0)
    blob = query_tokens._pack(query_tokens._MAGIC_UNIGRAM, header, [slots, strings, scores])
    tokens = query_tokens.UnigramTokens(blob)
    assert tokens.piece_id("ab") == 0  # unknown
    assert tokens.encode("ab") is None  # no piece reaches the end: the library decides
    with pytest.raises(ValueError):
        bad = {**header, "slots": 1000}  # not a power of two
        query_tokens.UnigramTokens(
            query_tokens._pack(query_tokens._MAGIC_UNIGRAM, bad, [slots, strings, scores])
        )
