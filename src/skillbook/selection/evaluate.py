"""Offline evaluation of selection: labelled requests in, recall and abstention out.

Input: a JSON Lines file, one request per line::

    {"id": "kw001", "query": "merge two PDFs", "expected": ["PDF Merge & Split"],
     "kind": "keyword", "split": "test"}

``expected: []`` means no skill should be selected; ``kind`` and ``split`` are
optional labels that the report groups by; ``recent`` (a list of earlier turns) is
passed to the selector as context. Output: one :class:`QueryResult` per line and
:class:`Metrics` overall, per kind and per split — recall@1/@3/@5 and MRR over the
requests that expect a skill (any listed skill counts: ambiguous requests list
several), and for the others the rate of correct abstention (nothing selected) —
and the :func:`threshold_curve`: what each threshold would select, so a user can
pick ``skills.selection.minScore`` from their own requests.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from skillbook.selection import QueryFileError
from skillbook.selection.selector import Selection, Selector

__all__ = [
    "CurvePoint",
    "EvalReport",
    "LabelledQuery",
    "Metrics",
    "QueryResult",
    "evaluate",
    "load_queries",
    "metrics",
    "parse_queries",
    "threshold_curve",
]

RECALL_AT: Final = (1, 3, 5)


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    id: str
    query: str
    expected: tuple[str, ...]
    kind: str | None = None
    split: str | None = None
    recent: tuple[str, ...] = ()


def parse_queries(lines: Iterable[str], *, where: str = "queries") -> list[LabelledQuery]:
    """Parse JSON Lines (blank lines and ``//`` comments are skipped)."""
    out: list[LabelledQuery] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("//"):
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise QueryFileError(f"{where}:{number}: not JSON ({exc.msg})") from None
        out.append(_query(obj, f"{where}:{number}"))
        if out[-1].id in seen:
            raise QueryFileError(f"{where}:{number}: id {out[-1].id!r} appears twice")
        seen.add(out[-1].id)
    return out


def _query(obj: Any, where: str) -> LabelledQuery:
    if not isinstance(obj, dict):
        raise QueryFileError(f"{where}: expected an object with id, query and expected")
    qid, query, expected = obj.get("id"), obj.get("query"), obj.get("expected")
    if not isinstance(qid, str | int) or isinstance(qid, bool):
        raise QueryFileError(f"{where}: 'id' must be a string")
    if not isinstance(query, str) or not query.strip():
        raise QueryFileError(f"{where}: 'query' must be a non-empty string")
    if not isinstance(expected, list) or not all(isinstance(e, str) for e in expected):
        raise QueryFileError(f"{where}: 'expected' must be a list of skill names ([] = none)")
    labels: dict[str, str | None] = {}
    for key in ("kind", "split"):
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            raise QueryFileError(f"{where}: {key!r} must be a string")
        labels[key] = value
    recent = obj.get("recent", [])
    if not isinstance(recent, list) or not all(isinstance(r, str) for r in recent):
        raise QueryFileError(f"{where}: 'recent' must be a list of strings")
    return LabelledQuery(
        str(qid), query, tuple(expected), labels["kind"], labels["split"], tuple(recent)
    )


def load_queries(path: str | Path) -> list[LabelledQuery]:
    """Read a labelled query file; raises :class:`QueryFileError` (or ``OSError``)."""
    file = Path(path)
    with file.open(encoding="utf-8") as fh:
        return parse_queries(fh, where=str(file))


@dataclass(frozen=True, slots=True)
class QueryResult:
    query: LabelledQuery
    ranked: tuple[str, ...]
    selected: tuple[str, ...]
    #: The score of each ranked skill (what the threshold is compared with).
    scores: tuple[float, ...] = ()
    #: The null skill's floor for this request (see ``Selection.floor``).
    floor: float | None = None

    @property
    def positive(self) -> bool:
        return bool(self.query.expected)

    @property
    def hit_rank(self) -> int | None:
        """The 1-based rank of the best-placed expected skill, or None."""
        wanted = set(self.query.expected)
        return next((i for i, n in enumerate(self.ranked, start=1) if n in wanted), None)

    @property
    def abstained(self) -> bool:
        return not self.selected

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.query.id,
            "ranked": list(self.ranked),
            "selected": list(self.selected),
        }
        if self.query.kind is not None:
            out["kind"] = self.query.kind
        return out


@dataclass(frozen=True, slots=True)
class Metrics:
    queries: int
    positives: int
    negatives: int
    recall: dict[int, float | None]
    mrr: float | None
    #: Positives with an expected skill among the selected ones (above the threshold).
    selected_recall: float | None
    #: Negatives where nothing was selected.
    abstention: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "queries": self.queries,
            "positives": self.positives,
            "negatives": self.negatives,
            **{f"recall@{k}": _round(v) for k, v in self.recall.items()},
            "mrr": _round(self.mrr),
            "selectedRecall": _round(self.selected_recall),
            "abstention": _round(self.abstention),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def metrics(results: Sequence[QueryResult]) -> Metrics:
    pos = [r for r in results if r.positive]
    neg = [r for r in results if not r.positive]
    ranks = [r.hit_rank for r in pos]

    def share(hits: int, total: int) -> float | None:
        return hits / total if total else None

    return Metrics(
        queries=len(results),
        positives=len(pos),
        negatives=len(neg),
        recall={
            k: share(sum(1 for x in ranks if x is not None and x <= k), len(pos)) for k in RECALL_AT
        },
        mrr=share_sum([1.0 / x for x in ranks if x is not None], len(pos)),
        selected_recall=share(
            sum(1 for r in pos if set(r.selected) & set(r.query.expected)), len(pos)
        ),
        abstention=share(sum(1 for r in neg if r.abstained), len(neg)),
    )


def share_sum(values: Sequence[float], total: int) -> float | None:
    return sum(values) / total if total else None


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """What one threshold would select over the labelled requests."""

    threshold: float
    #: Selected skills that were expected, over all selected skills (None: none selected).
    precision: float | None
    #: Requests that expect a skill and get one of theirs selected.
    recall: float | None
    #: Requests that expect none and get nothing selected.
    abstention: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "threshold": round(self.threshold, 4),
            "precision": _round(self.precision),
            "recall": _round(self.recall),
            "abstention": _round(self.abstention),
        }


#: Rows of the curve when no thresholds are given: this many steps over the scores seen.
CURVE_STEPS: Final = 12


def threshold_curve(
    results: Sequence[QueryResult],
    top_k: int,
    thresholds: Sequence[float] | None = None,
) -> list[CurvePoint]:
    """Precision, recall and abstention of the selected set at each threshold.

    A skill is selected when it is among the ``top_k`` best and its score
    reaches the threshold and the request's null-skill floor, as
    :meth:`Selector.select` does. Without ``thresholds``,
    :data:`CURVE_STEPS` even steps from the lowest to the highest best score seen,
    rounded to 0.01.
    """
    if thresholds is None:
        best = [max(r.scores[:top_k]) for r in results if r.scores]
        if not best:
            return []
        low, high = min(best), max(best)
        step = (high - low) / CURVE_STEPS
        thresholds = sorted({round(low + i * step, 2) for i in range(CURVE_STEPS + 1)})
    out = []
    for t in thresholds:
        picked = [
            [
                n
                for n, s in zip(r.ranked[:top_k], r.scores[:top_k], strict=False)
                if s >= t and (r.floor is None or s >= r.floor)
            ]
            for r in results
        ]
        chosen = sum(len(p) for p in picked)
        right = sum(
            len(set(p) & set(r.query.expected)) for p, r in zip(picked, results, strict=True)
        )
        pos = [
            bool(set(p) & set(r.query.expected))
            for p, r in zip(picked, results, strict=True)
            if r.positive
        ]
        neg = [not p for p, r in zip(picked, results, strict=True) if not r.positive]
        out.append(
            CurvePoint(
                threshold=t,
                precision=right / chosen if chosen else None,
                recall=sum(pos) / len(pos) if pos else None,
                abstention=sum(neg) / len(neg) if neg else None,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class EvalReport:
    backend: str
    results: tuple[QueryResult, ...]
    overall: Metrics
    by_kind: dict[str, Metrics]
    by_split: dict[str, Metrics]
    #: Expected skill names that are not among the ranked skills at all.
    unknown: tuple[str, ...] = ()
    #: The threshold the selector applied and how many skills it selects at most.
    threshold: float | None = None
    top_k: int = 5

    def curve(self, thresholds: Sequence[float] | None = None) -> list[CurvePoint]:
        """:func:`threshold_curve` of these results, the applied threshold included."""
        if thresholds is None and self.threshold is not None:
            auto = [p.threshold for p in threshold_curve(self.results, self.top_k)]
            thresholds = sorted({*auto, round(self.threshold, 4)})
        return threshold_curve(self.results, self.top_k, thresholds)

    def to_json(self, *, with_results: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "backend": self.backend,
            "metrics": self.overall.to_json(),
            "byKind": {k: m.to_json() for k, m in self.by_kind.items()},
            "bySplit": {k: m.to_json() for k, m in self.by_split.items()},
            "unknownExpected": list(self.unknown),
            "threshold": self.threshold,
            "curve": [p.to_json() for p in self.curve()],
        }
        if with_results:
            out["results"] = [r.to_json() for r in self.results]
        return out


def _group(results: Sequence[QueryResult], label: str) -> dict[str, Metrics]:
    keys = sorted({getattr(r.query, label) for r in results if getattr(r.query, label)})
    return {k: metrics([r for r in results if getattr(r.query, label) == k]) for k in keys}


def report(
    backend: str,
    results: Sequence[QueryResult],
    known: Iterable[str],
    *,
    threshold: float | None = None,
    top_k: int = 5,
) -> EvalReport:
    names = set(known)
    unknown = sorted({e for r in results for e in r.query.expected if e not in names})
    return EvalReport(
        backend=backend,
        results=tuple(results),
        overall=metrics(results),
        by_kind=_group(results, "kind"),
        by_split=_group(results, "split"),
        unknown=tuple(unknown),
        threshold=threshold,
        top_k=top_k,
    )


def result_of(query: LabelledQuery, selection: Selection, depth: int) -> QueryResult:
    return QueryResult(
        query,
        tuple(c.name for c in selection.ranked[:depth]),
        tuple(selection.names()),
        tuple(c.score for c in selection.ranked[:depth]),
        selection.floor,
    )


def evaluate(
    selector: Selector,
    queries: Sequence[LabelledQuery],
    *,
    top_k: int | None = None,
    depth: int = 10,
) -> EvalReport:
    """Run every query through ``selector``; ``depth`` ranked names are kept per query."""
    limit = selector.settings.top_k if top_k is None else top_k
    depth = max(depth, limit)
    results = [
        result_of(q, selector.select(q.query, recent=q.recent, top_k=top_k, depth=depth), depth)
        for q in queries
    ]
    return report(
        selector.settings.backend,
        results,
        (s.name for s in selector.skills),
        threshold=selector.settings.threshold(selector.profile),
        top_k=limit,
    )
