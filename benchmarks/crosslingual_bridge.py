"""Issue 21, fifth pass: a cross-lingual word bridge through the multilingual encoder.

The multilingual encoder (USE v3) places single words of its 16 languages near their
English translations ("rappel" → reminders, "录音" → recording, "Rechnung" → billing).
The candidate: each request word the catalog's summary index does not know (and
each SentencePiece piece of a CJK word) brings its ``k`` nearest catalog words (the
6,000 commonest of the summaries, at cosine ≥ ``cos``) into the request, so that BM25
can match a request in another language. Two ways in:

- ``everywhere``: the bridged words join the request every channel reads, and the
  coverage (so the English channels regain the weight a foreign request moves to the
  multilingual one);
- ``lexical``: only the two BM25 channels read them; coverage and the embedding
  channels see the request as before.

``maxcov`` bridges only requests whose coverage is below it (1.01: every request).
Measured on the tuning parts only (the first set's ``train``, ``user-voice-tune``);
the held-out parts are run only for a candidate that gains there.

python benchmarks/crosslingual_bridge.py
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import numpy as np
import sentencepiece
from corpus_skills import corpus_skills

from skillbook.selection import multilingual
from skillbook.selection.embedders import MultilingualEmbedder, WordLlamaEmbedder
from skillbook.selection.evaluate import QueryResult, evaluate, load_queries, metrics
from skillbook.selection.lexical import catalog_words
from skillbook.selection.selector import Selector, SelectorSettings

DATA = Path(__file__).parent / "data" / "selection"
TUNING = ((DATA / "user-voice-tune.jsonl", "tune"), (DATA / "queries.jsonl", "train"))
#: (way in, k, cos, maxcov)
CANDIDATES = (
    ("everywhere", 2, 0.60, 1.01),
    ("everywhere", 2, 0.60, 0.5),
    ("everywhere", 3, 0.55, 0.5),
    ("everywhere", 2, 0.65, 1.01),
    ("everywhere", 1, 0.60, 0.5),
    ("lexical", 2, 0.60, 1.01),
    ("lexical", 2, 0.60, 0.5),
    ("lexical", 3, 0.55, 0.5),
    ("lexical", 2, 0.65, 1.01),
    ("lexical", 1, 0.60, 0.5),
)
VOCABULARY = 6000
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_WORD = re.compile(r"[^\W\d_]{2,}")
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "from",
        "that",
        "this",
        "your",
        "you",
        "are",
        "can",
        "use",
        "when",
        "into",
        "via",
        "any",
        "all",
        "not",
        "but",
        "have",
        "has",
        "more",
        "what",
        "how",
        "its",
        "out",
        "new",
        "get",
        "set",
        "run",
        "also",
        "one",
        "two",
        "their",
        "them",
        "they",
        "which",
        "will",
        "than",
        "then",
        "only",
        "each",
        "such",
        "may",
        "our",
        "etc",
    ]
)


class Bridge:
    """The catalog's commonest words and their multilingual vectors."""

    def __init__(self, selector: Selector, embedder: MultilingualEmbedder) -> None:
        lexical = selector._lexical
        assert lexical is not None
        self.lexical = lexical
        counts: Counter[str] = Counter()
        for d in selector.documents:
            counts.update(
                w
                for w in catalog_words(d.lexical)
                if w.isalpha() and len(w) >= 3 and w not in _STOP
            )
        self.words = [w for w, _ in counts.most_common(VOCABULARY)]
        self.embedder = embedder
        self.vectors = np.asarray(embedder.embed(self.words))
        model = multilingual._resources() / "sp.model"
        self.pieces = sentencepiece.SentencePieceProcessor(model_file=str(model))

    def unknown_words(self, text: str) -> list[str]:
        known = self.lexical._live.lexical.vocab  # private: a measurement reaches inside
        out: list[str] = []
        for word in _WORD.findall(text):
            if _CJK.search(word):
                pieces = self.pieces.encode(word, out_type=str)
                out += [p.lstrip("\u2581") for p in pieces if len(p.lstrip("\u2581")) >= 2]
                continue
            stems = self.lexical.tokenize(word)
            if len(word) >= 3 and stems and stems[0] not in known:
                out.append(word)
        return list(dict.fromkeys(out))[:12]

    def bridged(self, text: str, k: int, cos: float, maxcov: float) -> str:
        if self.lexical.coverage(text) >= maxcov:
            return text
        unknown = self.unknown_words(text)
        if not unknown:
            return text
        sims = np.asarray(self.embedder.embed(unknown)) @ self.vectors.T
        added = [self.words[j] for row in sims for j in np.argsort(-row)[:k] if row[j] >= cos]
        return " ".join([text, *added]) if added else text


def _report(tag: str, selector: Selector) -> None:
    every: list[QueryResult] = []
    for path, split in TUNING:
        queries = [q for q in load_queries(path) if q.split == split]
        results = list(evaluate(selector, queries).results)
        every += results
        m = metrics(results)
        foreign = metrics([r for r in results if r.query.kind == "multilingual"])
        para = metrics([r for r in results if r.query.kind == "paraphrase"])
        print(
            f"{tag:<28} {split:<6} r@1 {m.recall[1]:.3f}  r@3 {m.recall[3]:.3f}  "
            f"para r@3 {para.recall[3]:.3f}  multilingual r@1 {foreign.recall[1]:.3f} "
            f"r@3 {foreign.recall[3]:.3f}  abstention {m.abstention:.3f}  "
            f"selected {m.selected_recall:.3f}",
            flush=True,
        )
    m = metrics(every)
    print(
        f"{tag:<28} both   r@1 {m.recall[1]:.3f}  r@3 {m.recall[3]:.3f}  "
        f"abstention {m.abstention:.3f}  selected {m.selected_recall:.3f}",
        flush=True,
    )


def main() -> None:
    embedder = MultilingualEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        selector = Selector(
            corpus_skills(),
            settings=SelectorSettings(backend="hybrid"),
            embedders={"wordllama": WordLlamaEmbedder(), "multilingual": embedder},
            index_dir=Path(tmp),
        )
        bridge = Bridge(selector, embedder)
        _report("as shipped", selector)
        corrected: Callable[[str], str] = selector.corrected
        scores: Callable[[str], dict[str, Any]] = bridge.lexical.scores
        for way, k, cos, maxcov in CANDIDATES:
            tag = f"{way} k={k} cos≥{cos} cov<{maxcov}"
            if way == "everywhere":
                selector.corrected = lambda r, k=k, c=cos, m=maxcov: bridge.bridged(  # type: ignore[method-assign]
                    corrected(r), k, c, m
                )
                bridge.lexical.scores = scores  # type: ignore[method-assign]
            else:
                selector.corrected = corrected  # type: ignore[method-assign]
                bridge.lexical.scores = lambda t, k=k, c=cos, m=maxcov: scores(  # type: ignore[method-assign]
                    bridge.bridged(t, k, c, m)
                )
            _report(tag, selector)


if __name__ == "__main__":
    main()
