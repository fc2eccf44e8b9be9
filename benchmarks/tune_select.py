"""How the selector's mix weights and threshold were chosen (training split only).

Computes each channel's scores (BM25, wordllama, multilingual) once per training
query over the corpus, then grid-searches the ``mix`` weights, BM25's squash
constant and the threshold, scoring each setting by recall@1, recall@3 and the
balance between abstaining on no-fit requests and selecting on the others. The
held-out split is never looked at here: ``bench_select.py`` reports it.

    python benchmarks/tune_select.py
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from corpus_skills import corpus_skills

from skillbook.selection.embedders import MultilingualEmbedder, WordLlamaEmbedder
from skillbook.selection.evaluate import load_queries
from skillbook.selection.fusion import squash
from skillbook.selection.selector import Selector, SelectorSettings

DATA = Path(__file__).parent / "data" / "selection" / "queries.jsonl"


def main() -> None:
    skills = corpus_skills()
    names = [s.name for s in skills]
    queries = [q for q in load_queries(DATA) if q.split == "train"]
    sel = Selector(
        skills,
        settings=SelectorSettings(backend="hybrid"),
        embedders={"wordllama": WordLlamaEmbedder(), "multilingual": MultilingualEmbedder()},
    )
    t = time.perf_counter()
    chans = [sel.channel_scores(q.query) for q in queries]
    print(f"{len(queries)} training queries scored in {time.perf_counter() - t:.1f} s")
    gold = [
        np.array([n in set(q.expected) for n in names], dtype=bool) if q.expected else None
        for q in queries
    ]
    grids = {
        "hybrid": itertools.product(
            (6.0, 10.0), (0.2, 0.3, 0.4), (0.2, 0.3, 0.4), (0.1, 0.2, 0.3), (0.3, 0.5, 0.7)
        ),
        # skills.selection.embedding.multilingual: false
        "hybrid-monolingual": itertools.product(
            (6.0, 10.0), (0.2, 0.3, 0.5), (0.2, 0.3, 0.5), (0.1, 0.2, 0.3, 0.5), (0,)
        ),
        "bm25": itertools.product((4.0, 6.0, 10.0), (0.5,), (0.2, 0.3, 0.5, 0.7), (0,), (0,)),
        "embedding": itertools.product((10.0,), (0,), (0,), (0.1, 0.2, 0.3, 0.5), (0.5, 0.7, 1.0)),
    }
    for backend, grid in grids.items():
        best: list[tuple[float, str]] = []
        for k, wb, wbody, ww, wm in grid:
            fused = [
                wb * squash(c["bm25"], k)
                + wbody * squash(c["bm25Body"], k)
                + ww * c["wordllama"]
                + wm * c["multilingual"]
                for c in chans
            ]
            best.extend(_scored(fused, gold, f"k={k} bm25={wb} body={wbody} wl={ww} ml={wm}"))
        best.sort(reverse=True)
        print(f"--- {backend}: best 5 of {len(best)} settings")
        for score, text in best[:5]:
            print(f"{score:.4f} {text}")


def _scored(
    fused: list[np.ndarray], gold: list[np.ndarray | None], label: str
) -> list[tuple[float, str]]:
    tops = [float(f.max()) for f in fused]
    pos = [i for i, g in enumerate(gold) if g is not None]
    neg = [i for i, g in enumerate(gold) if g is None]
    r1 = r3 = 0
    for i in pos:
        g = gold[i]
        assert g is not None
        order = np.argsort(-fused[i])[:3]
        r1 += bool(g[order[0]])
        r3 += bool(g[order].any())
    out = []
    for thr in np.arange(0.1, 0.8, 0.01):
        ab = sum(1 for i in neg if tops[i] < thr) / len(neg)
        sel_ok = sum(1 for i in pos if tops[i] >= thr) / len(pos)
        score = 0.35 * r1 / len(pos) + 0.25 * r3 / len(pos) + 0.2 * ab + 0.2 * sel_ok
        out.append(
            (
                score,
                f"{label} thr={thr:.2f}: r@1={r1 / len(pos):.3f} r@3={r3 / len(pos):.3f} "
                f"abstention={ab:.3f} selected={sel_ok:.3f}",
            )
        )
    return out


if __name__ == "__main__":
    main()
