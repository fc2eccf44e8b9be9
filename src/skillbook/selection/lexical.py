"""Lexical ranking: BM25 over the skills' names, descriptions, headings and triggers.

Input: :class:`~skillbook.selection.documents.SkillDocument` texts. Output: a BM25
score per skill for a request (:meth:`Bm25Index.scores`): ``bm25s`` computes every
word's score in every text once (sparse matrices, no hand-written scoring); a request
adds its words' scores as bm25s does, recent requests' words kept spread over the texts
(:data:`SPREAD_BYTES`). Words are lower-cased, English stop words and
chat filler ("please", "help me") dropped and, when ``PyStemmer`` is installed,
stemmed, so "merging PDFs" meets "merge PDF files".

:class:`LexicalChannels` keeps the two BM25 channels of the selector (the skill's
summary text and the start of its body) over a list of documents. ``bm25s`` indexes
cannot be updated in place, so a change rebuilds them from cached token lists; above
:data:`SYNC_LIMIT` documents the rebuild runs in a background thread while requests
are scored by the previous index (unchanged skills keep their scores, a new or changed
skill scores 0 on BM25 until the new index is swapped in; its embeddings are current
at once). Nothing is kept on disk.

:class:`Speller` corrects typed requests: a request word the catalog never uses
("wether", "vercle") gains the catalog word one edit away ("weather", "vercel"), so
BM25 and the embeddings see a word they know. Its vocabulary is the catalog's own
words, rebuilt with the BM25 index.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from skillbook.selection._deps import require
from skillbook.selection.speller import Speller

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["SPREAD_BYTES", "SYNC_LIMIT", "Bm25Index", "LexicalChannels", "Tokenizer"]

#: Up to this many documents a BM25 rebuild runs inline; above, in the background.
SYNC_LIMIT: Final = 2000

#: Memory for query words' BM25 scores kept spread over the documents, per index
#: (4 bytes a document each: 7,000 words of a 300-skill catalog, 200 of 10,000 skills).
SPREAD_BYTES: Final = 8 * 1024 * 1024
#: Distinct words whose stems are remembered (about 150 bytes each).
MEMO_LIMIT: Final = 200_000
_TOKEN_RE: Final = re.compile(r"(?u)\b\w\w+\b")
#: Words of a request that say nothing about which skill fits it.
CHAT_WORDS: Final = frozenset(
    [
        "please",
        "help",
        "want",
        "need",
        "would",
        "like",
        "could",
        "can",
        "you",
        "me",
        "my",
        "us",
        "our",
        "let",
        "lets",
        "show",
        "tell",
        "give",
        "hey",
        "hi",
        "hello",
        "thanks",
        "thank",
        "really",
        "just",
        "some",
        "something",
        "anything",
        "how",
        "what",
        "which",
        "who",
        "why",
        "when",
        "where",
        "does",
        "do",
        "did",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "get",
        "got",
        "make",
        "use",
        "using",
    ]
)


#: Up to this many documents the speller is built inline; above, on a thread.
SPELL_SYNC_LIMIT: Final = 500


def catalog_words(text: str) -> frozenset[str]:
    """The distinct lower-case words of a skill's text."""
    return frozenset(_TOKEN_RE.findall(text.casefold()))


def _stemmer() -> Callable[[list[str]], list[str]] | None:
    try:
        import Stemmer
    except ImportError:
        return None
    stem: Callable[[list[str]], list[str]] = Stemmer.Stemmer("english").stemWords
    return stem


class Tokenizer:
    """Lower-case words, stop words and chat filler dropped, stemmed when PyStemmer is there.

    Each distinct word is stemmed once and remembered (``None``: a stop word): a
    catalog repeats its words, and stemming every occurrence was most of the time of
    a 10,000-skill index. Lookups read a local reference, so a full memo replaced by
    another thread never loses a word mid-call.
    """

    def __init__(self) -> None:
        from bm25s.stopwords import STOPWORDS_EN

        self.stop = frozenset(STOPWORDS_EN) | CHAT_WORDS
        self.stem = _stemmer()
        self._memo: dict[str, str | None] = {}

    def __call__(self, text: str) -> list[str]:
        found = _TOKEN_RE.findall(text.casefold())
        memo = self._memo
        new = [w for w in set(found) if w not in memo]
        if new:
            if len(memo) + len(new) > MEMO_LIMIT:
                memo = self._memo = {}
                new = list(set(found))
            kept = [w for w in new if w not in self.stop]
            fresh: dict[str, str | None] = dict.fromkeys(new)
            fresh.update(zip(kept, self.stem(kept) if self.stem is not None else kept, strict=True))
            memo.update(fresh)  # one step: another thread sees a word whole or not at all
        return [s for w in found if (s := memo[w]) is not None]


class Bm25Index:
    """BM25 (Lucene variant, k1=1.2, b=0.75) over a fixed list of texts."""

    def __init__(
        self,
        texts: Sequence[str],
        *,
        tokenizer: Tokenizer | None = None,
        tokens: Sequence[list[str]] | None = None,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        require("bm25s", "BM25 ranking")
        import bm25s
        import numpy

        self._np = numpy
        self.tokenize = tokenizer or Tokenizer()
        self.size = len(texts) if tokens is None else len(tokens)
        if tokens is None:
            tokens = [self.tokenize(t) for t in texts]
        corpus = [t or [""] for t in tokens]
        self._bm25 = bm25s.BM25(k1=k1, b=b, method="lucene")
        #: :func:`_postings` of the index, read on the first query (None: not yet).
        self._postings: tuple[Any, Any, Any, list[int]] | tuple[()] | None = None
        #: Query words' scores over every document, by word (see :meth:`scores_of`).
        self._spread: dict[str, Any] = {}
        if self.size:
            self._bm25.index(corpus, show_progress=False)

    @property
    def vocab(self) -> Any:
        """The indexed (stemmed) words, a mapping to their ids."""
        return self._bm25.vocab_dict if self.size else {}

    def scores(self, query: str) -> npt.NDArray[np.float32]:
        """One BM25 score per text (zeros when no query word is in the index)."""
        return self.scores_of(self.tokenize(query))

    def scores_of(self, tokens: Sequence[str]) -> npt.NDArray[np.float32]:
        """:meth:`scores` of a query already tokenized (by :attr:`tokenize`)."""
        np = self._np
        if not self.size:
            return np.zeros(0, dtype=np.float32)  # type: ignore[no-any-return]
        postings = self._postings
        if postings is None:
            postings = self._postings = _postings(self._bm25)
        if not postings:
            return self._get_scores(tokens)
        # bm25s's own sum (its precomputed per-word scores added word by word into
        # float32 zeros), without its per-call conversions and ``np.add.at``: each
        # word's scores are kept spread over every document (zeros elsewhere, and
        # ``x + 0.0`` is ``x`` for every sum that starts at +0.0), so a query adds a
        # few whole arrays. Scattering them per query was most of a small catalog's
        # BM25 query (tests/selection/test_lexical_postings.py holds the two equal).
        vocab, data, indices, bounds = postings
        words = len(bounds) - 1
        spread = self._spread
        out = np.zeros(self.size, dtype=np.float32)
        for token in tokens:
            row = spread.get(token)
            if row is None:
                i = vocab.get(token)
                if i is None:
                    continue
                if i >= words:
                    # Not in the scores (bm25s's empty word, a damaged saved index):
                    # bm25s's own answer, an error.
                    return self._get_scores(tokens)
                row = np.zeros(self.size, dtype=np.float32)
                row[indices[bounds[i] : bounds[i + 1]]] = data[bounds[i] : bounds[i + 1]]
                self._keep(token, row)
            out += row
        return out  # type: ignore[no-any-return]

    def _keep(self, token: str, row: Any) -> None:
        """Keep a word's spread scores, the oldest out first past :data:`SPREAD_BYTES`."""
        spread = self._spread
        while spread and (len(spread) + 1) * row.nbytes > SPREAD_BYTES:
            try:
                spread.pop(next(iter(spread)), None)
            except (RuntimeError, StopIteration):  # another thread changed it meanwhile
                break
        if row.nbytes <= SPREAD_BYTES:
            spread[token] = row

    def _get_scores(self, tokens: Sequence[str]) -> npt.NDArray[np.float32]:
        np = self._np
        known = [t for t in tokens if t in self._bm25.vocab_dict]
        if not known:
            return np.zeros(self.size, dtype=np.float32)  # type: ignore[no-any-return]
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)  # type: ignore[no-any-return]


def _postings(bm25: Any) -> tuple[Any, Any, Any, list[int]] | tuple[()]:
    """bm25s's word-by-document scores as (vocabulary, scores, documents, word bounds),
    or ``()`` where summing them as above would not give its ``get_scores``."""
    scores = getattr(bm25, "scores", None)
    if not isinstance(scores, dict) or getattr(bm25, "nonoccurrence_array", None) is not None:
        return ()
    data = scores.get("data")
    indices = scores.get("indices")
    indptr = scores.get("indptr")
    if data is None or indices is None or indptr is None or str(data.dtype) != "float32":
        return ()
    return bm25.vocab_dict, data, indices, [int(x) for x in indptr]


@dataclass(frozen=True, slots=True)
class _Built:
    lexical: Bm25Index
    body: Bm25Index
    #: The documents indexed, in order (kept so their ids stay unique).
    docs: tuple[Any, ...]
    #: Current document position -> position in ``docs`` (-1: not indexed yet).
    remap: Any = None


class LexicalChannels:
    """``bm25`` (summary text) and ``bm25Body`` (body prose) over documents that change."""

    def __init__(self, *, sync_limit: int = SYNC_LIMIT) -> None:
        require("bm25s", "BM25 ranking")
        import numpy

        self._np = numpy
        self.tokenize = Tokenizer()
        self.sync_limit = sync_limit
        self._tokens: dict[int, tuple[Any, list[str], list[str]]] = {}
        self._live: _Built | None = None
        self._generation = 0
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None
        #: The speller of the latest documents whose speller is built (None: none yet).
        self._speller: Speller | None = None
        self._speller_worker: threading.Thread | None = None
        self._spelling: tuple[Any, ...] = ()
        self.spell_sync_limit = SPELL_SYNC_LIMIT

    def _tokens_of(self, docs: Sequence[Any]) -> tuple[list[list[str]], list[list[str]]]:
        cache: dict[int, tuple[Any, list[str], list[str]]] = {}
        for doc in docs:
            hit = self._tokens.get(id(doc))
            if hit is None or hit[0] is not doc:
                hit = (doc, self.tokenize(doc.lexical), self.tokenize(doc.body))
            cache[id(doc)] = hit
        self._tokens = cache
        return [cache[id(d)][1] for d in docs], [cache[id(d)][2] for d in docs]

    def _build(self, docs: tuple[Any, ...]) -> _Built:
        lex, body = self._tokens_of(docs)
        built = _Built(
            Bm25Index((), tokenizer=self.tokenize, tokens=lex),
            Bm25Index((), tokenizer=self.tokenize, tokens=body),
            docs,
        )
        self._spell(docs)
        return built

    def _spell(self, docs: tuple[Any, ...]) -> None:
        """Build the speller of ``docs``: inline for a few, else on a thread of its own.

        Off the build path for a large catalog (its words are read again, about 10 %
        of the BM25 time): until it is ready, requests are corrected with the previous
        speller, or not at all.
        """

        def build() -> None:
            speller = Speller.of([catalog_words(d.lexical) for d in docs])
            with self._lock:
                if self._spelling is docs:
                    self._speller = speller

        with self._lock:
            self._spelling = docs
        if len(docs) <= self.spell_sync_limit:
            build()
            return
        worker = threading.Thread(target=build, name="skillbook-speller", daemon=True)
        self._speller_worker = worker
        worker.start()

    def update(self, documents: Sequence[Any]) -> None:
        """Index ``documents`` (objects with ``lexical`` and ``body`` texts)."""
        docs = tuple(documents)
        live = self._live
        same = live is not None and live.remap is None and len(live.docs) == len(docs)
        if same and live is not None and all(a is b for a, b in zip(live.docs, docs, strict=True)):
            return
        with self._lock:
            self._generation += 1
            generation = self._generation
        if live is None or len(docs) <= self.sync_limit:
            built = self._build(docs)
            with self._lock:
                if generation == self._generation:
                    self._live = built
            return
        np = self._np
        where = {id(d): i for i, d in enumerate(live.docs)}
        if live.remap is not None:  # still serving an older index: map through it
            old = {id(d): int(live.remap[i]) for i, d in enumerate(live.docs)}
            where = {k: v for k, v in old.items() if v >= 0}
        remap = np.array([where.get(id(d), -1) for d in docs], dtype=np.int64)
        base = live if live.remap is None else _Built(live.lexical, live.body, live.docs)
        self._live = _Built(base.lexical, base.body, docs, remap)

        def rebuild() -> None:
            with self._lock:
                if generation != self._generation:
                    return  # superseded before it started
            # Tokenizing reads the cache another update may be replacing: use our own.
            built = self._build(docs)
            with self._lock:
                if generation == self._generation:
                    self._live = built

        self._worker = threading.Thread(target=rebuild, name="skillbook-bm25", daemon=True)
        self._worker.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background rebuild; True when the live index covers every document."""
        for worker in (self._worker, self._speller_worker):
            if worker is not None:
                worker.join(timeout)
        live = self._live
        return live is not None and live.remap is None

    def corrections(self, text: str, is_word: Callable[[str], bool]) -> list[str]:
        """Catalog words one edit from the words of ``text`` that are no word at all.

        ``is_word`` is the lexicon of real words (a word the catalog does not use but
        the language does is no typo); a word whose stem the index knows is none either.
        """
        live = self._live
        speller = self._speller
        if live is None or speller is None:
            return []
        vocab = live.lexical.vocab

        def known_stem(word: str) -> bool:
            stems = self.tokenize(word)
            return bool(stems) and stems[0] in vocab

        return speller.corrections(text, is_word, known_stem)

    def coverage(self, text: str) -> float:
        """The share of the words of ``text`` (stop words aside) the summary index knows.

        1.0 when nothing is indexed yet; 0.0 for a request without a content word
        ("hallo, wie geht's?" is all stop words to the English tokenizer), where the
        lexical channels have nothing to say either.
        """
        live = self._live
        if live is None:
            return 1.0
        tokens = self.tokenize(text)
        if not tokens:
            return 0.0
        vocab = live.lexical.vocab
        return sum(1 for t in tokens if t in vocab) / len(tokens)

    def scores(self, text: str) -> dict[str, Any]:
        live = self._live
        if live is None:
            return {}
        lexical, body = live.lexical, live.body
        if lexical.tokenize is body.tokenize:
            # One tokenizer (as built here): the request is tokenized once for both.
            tokens = lexical.tokenize(text)
            out = {"bm25": lexical.scores_of(tokens), "bm25Body": body.scores_of(tokens)}
        else:
            out = {"bm25": lexical.scores(text), "bm25Body": body.scores(text)}
        if live.remap is not None:
            np = self._np
            known = live.remap >= 0
            index = np.where(known, live.remap, 0)
            out = {k: np.where(known, v[index], np.float32(0)) for k, v in out.items()}
        return out
