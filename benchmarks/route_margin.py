"""The router's margin over both labelled selection sets (docs/selection.md, Routing).

python benchmarks/route_margin.py

For each split and margin: how many requests that expect a skill are routed
``direct``, ``ambiguous`` or ``nomatch``, and how often the routed skills include an
expected one, beside listing every selected skill (the router's upper bound).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus_skills import corpus_skills
from eval_sets import SETS

from skillbook.selection.embedders import Embedder, MultilingualEmbedder, WordLlamaEmbedder
from skillbook.selection.evaluate import load_queries
from skillbook.selection.router import route_selection
from skillbook.selection.selector import Selector, SelectorSettings

MARGINS = (0.0, 0.02, 0.05, 0.1, 0.2)


def main() -> None:
    embedders: dict[str, Embedder] = {
        "wordllama": WordLlamaEmbedder(),
        "multilingual": MultilingualEmbedder(),
    }
    with tempfile.TemporaryDirectory() as tmp:
        selector = Selector(
            corpus_skills(),
            settings=SelectorSettings(),
            embedders=embedders,
            index_dir=Path(tmp),
        )
        for name, split, path in SETS:
            runs = [
                (q, selector.select(q.query, recent=q.recent))
                for q in load_queries(path)
                if q.split == split and q.expected
            ]
            every = sum(1 for q, s in runs if set(s.names()) & set(q.expected)) / len(runs)
            for margin in MARGINS:
                counts = {"direct": 0, "ambiguous": 0, "nomatch": 0}
                hits = listed = 0
                for q, s in runs:
                    r = route_selection(s, margin=margin, formatter=lambda _skills: "")
                    counts[r.outcome] += 1
                    listed += len(r.candidates) if r.outcome == "ambiguous" else 0
                    hits += bool(set(r.names()) & set(q.expected))
                print(
                    f"{name:<11} {split:<7} n={len(runs):<4} margin={margin:<5} "
                    f"direct={counts['direct']:<4} ambiguous={counts['ambiguous']:<4} "
                    f"(avg {listed / max(1, counts['ambiguous']):.1f}) "
                    f"nomatch={counts['nomatch']:<4} routed={hits / len(runs):.3f} "
                    f"every selected={every:.3f}"
                )


if __name__ == "__main__":
    main()
