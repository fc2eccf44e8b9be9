"""Lexical ranking: BM25 over the skills' names, descriptions, headings and triggers.

Input: :class:`~skillbook.selection.documents.SkillDocument` texts. Output: a BM25
score per skill for a request (:meth:`Bm25Index.scores`), from ``bm25s`` (sparse
matrices, no hand-written scoring). Words are lower-cased, English stop words and
chat filler ("please", "help me") dropped and, when ``PyStemmer`` is installed,
stemmed, so "merging PDFs" meets "merge PDF files".

The index is rebuilt from its documents when they change: over 10,000 skills that is
a fraction of a second (see ``benchmarks/bench_select.py``), so there is nothing to
keep on disk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from skillbook.selection._deps import require

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Bm25Index", "Tokenizer"]

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


def _stemmer() -> Callable[[list[str]], list[str]] | None:
    try:
        import Stemmer
    except ImportError:
        return None
    stem: Callable[[list[str]], list[str]] = Stemmer.Stemmer("english").stemWords
    return stem


class Tokenizer:
    """Lower-case words, stop words and chat filler dropped, stemmed when PyStemmer is there."""

    def __init__(self) -> None:
        from bm25s.stopwords import STOPWORDS_EN

        self.stop = frozenset(STOPWORDS_EN) | CHAT_WORDS
        self.stem = _stemmer()

    def __call__(self, text: str) -> list[str]:
        tokens = [t for t in _TOKEN_RE.findall(text.casefold()) if t not in self.stop]
        return self.stem(tokens) if self.stem is not None and tokens else tokens


class Bm25Index:
    """BM25 (Lucene variant, k1=1.2, b=0.75) over a fixed list of texts."""

    def __init__(
        self,
        texts: Sequence[str],
        *,
        tokenizer: Tokenizer | None = None,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        require("bm25s", "BM25 ranking")
        import bm25s
        import numpy

        self._np = numpy
        self.tokenize = tokenizer or Tokenizer()
        self.size = len(texts)
        corpus = [self.tokenize(t) or [""] for t in texts]
        self._bm25 = bm25s.BM25(k1=k1, b=b, method="lucene")
        if self.size:
            self._bm25.index(corpus, show_progress=False)

    def scores(self, query: str) -> npt.NDArray[np.float32]:
        """One BM25 score per text (zeros when no query word is in the index)."""
        np = self._np
        tokens = (
            [t for t in self.tokenize(query) if t in self._bm25.vocab_dict] if self.size else []
        )
        if not tokens:
            return np.zeros(self.size, dtype=np.float32)  # type: ignore[no-any-return]
        return np.asarray(self._bm25.get_scores(tokens), dtype=np.float32)  # type: ignore[no-any-return]
