"""How the selector's mix weights, threshold and null skill were chosen (tuning parts only).

Computes each channel's scores (BM25, wordllama, multilingual) once per tuning
query over the corpus — the first set's training split and the user-voice set's
tuning file, requests corrected by the speller as the selector does — then
grid-searches the ``mix`` weights (fixed, and ``adaptive``: the English channels
weighted by the request's coverage), BM25's squash constant and the threshold,
scoring each setting by recall@1, recall@3 and the balance between abstaining on
no-fit requests and selecting on the others. Then, for the default hybrid weights,
the null skill (``NULL_RULE``): the threshold, weight and margin with the highest
selected recall among those that abstain on at least 90 % of the no-fit requests.
The held-out parts (``test``, ``user-voice-report.jsonl``) are never read here:
``eval_sets.py`` and ``bench_select.py`` report them.

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

from skillbook.selection.anchors import NULL_ANCHORS
from skillbook.selection.embedders import MultilingualEmbedder, WordLlamaEmbedder
from skillbook.selection.evaluate import load_queries
from skillbook.selection.fusion import MixWeights, mix
from skillbook.selection.selector import DEFAULT_WEIGHTS, Selector, SelectorSettings

DATA = Path(__file__).parent / "data" / "selection" / "queries.jsonl"
USER_VOICE = Path(__file__).parent / "data" / "selection" / "user-voice-tune.jsonl"


def main() -> None:
    skills = corpus_skills()
    names = [s.name for s in skills]
    # The tuning parts of both sets: the first set's training split and the
    # user-voice set's tuning file (their test and report parts are never read here).
    queries = [q for q in load_queries(DATA) if q.split == "train"] + load_queries(USER_VOICE)
    sel = Selector(
        skills,
        settings=SelectorSettings(backend="hybrid"),
        embedders={"wordllama": WordLlamaEmbedder(), "multilingual": MultilingualEmbedder()},
    )
    t = time.perf_counter()
    texts = [sel.corrected(q.query) for q in queries]
    chans = [sel.channel_scores(t) for t in texts]
    # The share of each request's words the catalog knows: the adaptive mix's input.
    coverage = [sel.coverage(t) for t in texts]
    multilingual = sel._indexes["multilingual"].embedder
    anchors = multilingual.embed(list(NULL_ANCHORS))
    null_cos = [
        float((anchors @ multilingual.embed([sel.corrected(q.query)])[0]).max()) for q in queries
    ]
    print(f"{len(queries)} training queries scored in {time.perf_counter() - t:.1f} s")
    gold = [
        np.array([n in set(q.expected) for n in names], dtype=bool) if q.expected else None
        for q in queries
    ]
    grids = {
        "hybrid": itertools.product(
            (6.0, 10.0), (0.2, 0.3, 0.4), (0.2, 0.3, 0.4), (0.1, 0.2, 0.3), (0.3, 0.5, 0.7)
        ),
        # hybrid with ``adaptive``: the English channels by coverage, the rest to
        # multilingual (the default since issue 21).
        "hybrid-adaptive": itertools.product(
            (10.0,), (0.2, 0.3, 0.4), (0.2, 0.3, 0.4), (0.1, 0.2, 0.3), (0.3, 0.5, 0.7)
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
            w = MixWeights(
                bm25_k=k,
                weights={"bm25": wb, "bm25Body": wbody, "wordllama": ww, "multilingual": wm},
                adaptive=backend == "hybrid-adaptive",
            )
            fused = [mix(c, w, cov) for c, cov in zip(chans, coverage, strict=True)]
            best.extend(_scored(fused, gold, f"k={k} bm25={wb} body={wbody} wl={ww} ml={wm}"))
        best.sort(reverse=True)
        print(f"--- {backend}: best 5 of {len(best)} settings")
        for score, text in best[:5]:
            print(f"{score:.4f} {text}")
    _null_rule(chans, coverage, gold, null_cos, names)


def _null_rule(
    chans: list[dict[str, np.ndarray]],
    coverage: list[float],
    gold: list[np.ndarray | None],
    null_cos: list[float],
    names: list[str],
) -> None:
    """Threshold, weight and margin of the null skill for the default hybrid mix."""
    weights = DEFAULT_WEIGHTS["hybrid"]
    fused = [mix(c, weights, cov) for c, cov in zip(chans, coverage, strict=True)]
    top5 = [np.argsort(-f)[:5] for f in fused]
    pos = [i for i, g in enumerate(gold) if g is not None]
    neg = [i for i, g in enumerate(gold) if g is None]
    found: list[tuple[float, float, float, float, float]] = []
    for thr in np.arange(0.15, 0.5, 0.01):
        for weight in np.arange(0.0, 2.01, 0.1):
            for margin in np.arange(-0.6, 0.31, 0.02):
                floor = [max(thr, margin + weight * a) for a in null_cos]
                ab = sum(1 for i in neg if fused[i].max() < floor[i]) / len(neg)
                sel_ok = 0
                for i in pos:
                    g = gold[i]
                    assert g is not None
                    sel_ok += any(g[j] and fused[i][j] >= floor[i] for j in top5[i])
                found.append((sel_ok / len(pos), ab, float(thr), float(weight), float(margin)))
    ok = [f for f in found if f[1] >= 0.9]
    # Ties (common: a step of the grid often changes no request) go to the lowest
    # threshold, then the lowest weight and margin: the least the rule can add.
    sel_ok, ab, thr, weight, margin = max(ok, key=lambda f: (f[0], f[1], -f[2], -f[3], -f[4]))
    print(
        f"--- null skill (hybrid, {len(names)} skills): thr={thr:.2f} weight={weight:.1f} "
        f"margin={margin:.2f}: abstention={ab:.3f} selected={sel_ok:.3f}"
    )


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
