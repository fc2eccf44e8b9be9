"""The labelled selection sets, every split: the figures benchmarks/README.md records.

The first set (train/test), the user-voice set (tune/report) and the fresh held-out
set (``fresh-heldout.jsonl``, never tuned on). ``--no-learned`` ranks by the ``mix``
score alone (the state before the learned ranker).

python benchmarks/eval_sets.py [--backend hybrid] [--kinds] [--curve] [--no-learned]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus_skills import corpus_skills

from skillbook.selection.embedders import Embedder, MultilingualEmbedder, WordLlamaEmbedder
from skillbook.selection.evaluate import LabelledQuery, evaluate, load_queries, metrics
from skillbook.selection.selector import Selector, SelectorSettings

DATA = Path(__file__).parent / "data" / "selection"
#: (set, split label in the file, file): the first set's splits are train/test.
SETS = (
    ("original", "train", DATA / "queries.jsonl"),
    ("original", "test", DATA / "queries.jsonl"),
    ("user-voice", "tune", DATA / "user-voice-tune.jsonl"),
    ("user-voice", "report", DATA / "user-voice-report.jsonl"),
    ("fresh", "heldout", DATA / "fresh-heldout.jsonl"),
)
#: The splits never tuned on.
HELD_OUT = {"test", "report", "heldout"}
#: The fresh set's indirect requests are labelled ``paraphrase`` too.
PARAPHRASE = {"paraphrase"}


def _row(name: str, split: str, results: list) -> str:  # type: ignore[type-arg]
    m = metrics(results)
    para = metrics([r for r in results if r.query.kind in PARAPHRASE])
    return (
        f"{name:<15} {split:<7} n={m.queries:<4} r@1={_f(m.recall[1])} r@3={_f(m.recall[3])} "
        f"para r@3={_f(para.recall[3])} abstention={_f(m.abstention)} "
        f"selected={_f(m.selected_recall)}"
    )


def _f(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="hybrid")
    parser.add_argument("--kinds", action="store_true", help="per kind too")
    parser.add_argument(
        "--curve", action="store_true", help="the threshold curve of the held-out parts too"
    )
    parser.add_argument(
        "--no-learned", action="store_true", help="order by the mix score (no learned ranker)"
    )
    args = parser.parse_args()
    skills = corpus_skills()
    embedders: dict[str, Embedder] = {
        "wordllama": WordLlamaEmbedder(),
        "multilingual": MultilingualEmbedder(),
    }
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        selector = Selector(
            skills,
            settings=SelectorSettings(backend=args.backend, learned=not args.no_learned),
            embedders=embedders,
            index_dir=Path(tmp),
        )
        print(
            f"{len(skills)} skills, backend {args.backend}, learned ranker "
            f"{'off' if args.no_learned else 'on'}, built in {time.perf_counter() - t:.1f} s"
        )
        for name, split, path in SETS:
            queries: list[LabelledQuery] = [q for q in load_queries(path) if q.split == split]
            report = evaluate(selector, queries)
            print(_row(name, split, list(report.results)))
            if args.kinds:
                for kind, _m in report.by_kind.items():
                    rs = [r for r in report.results if r.query.kind == kind]
                    print("   " + _row(kind, "", rs))
            if args.curve and split in HELD_OUT:
                print(f"   threshold curve ({name} {split}; * = applied):")
                print("   threshold  precision  recall  abstention")
                for p in report.curve():
                    mark = "*" if report.threshold == p.threshold else " "
                    print(
                        f"   {p.threshold:>8.3f}{mark}  {_f(p.precision):>9}  {_f(p.recall):>6}"
                        f"  {_f(p.abstention):>10}"
                    )


if __name__ == "__main__":
    main()
