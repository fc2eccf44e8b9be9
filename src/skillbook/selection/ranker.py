"""The learned ranker: the ``mix``'s best skills put in a better order.

Input: one request's :class:`~skillbook.selection.selector.Signals` (each channel's
score for every skill, the fused ``mix`` score, the request's coverage and its cosine
to the null skill) and the positions of the ``mix``'s best few skills. Output: for
each of them a score to order them by (the probability, under the model, that the
request needs that skill).

Why: the fixed ``mix`` adds four channels with one set of weights. How much a
channel's score means depends on the request: a cosine is worth more when it stands
out from the rest of the catalog than when a long request lifts every cosine, a BM25
hit counts when the catalog knows the request's words, a request in another language
is only read by the multilingual channel. A linear model over per-channel *features*
(the score, its gap to the channel's best, its rank, how far it stands out from the
catalog, the skill's name words in the request, the coverage, the null-skill cosine,
a few interactions with the coverage) learns those from labelled requests.

It only orders: which skills are *selected* is still decided by the ``mix`` score
against ``minScore`` and the null-skill floor, so thresholds, ``routeMargin`` and
``eval select``'s curve keep their meaning (cross-validated on the tuning parts, the
model's own probability abstained no better than the calibrated ``mix`` score).

The coefficients are data (``ranker.json`` beside this module), fitted by
``benchmarks/learn_select.py`` on the tuning parts of the labelled sets only, with
k-fold cross-validation to choose; nothing here needs more than numpy, and scoring
30 candidates costs about 1 ms of CPU at 10,000 skills (most of it ranking each
channel's scores over the whole catalog).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["CHANNELS", "FEATURES", "LearnedRanker", "default_ranker", "features", "name_hits"]

#: The channels the features read, in order (the default hybrid profile's).
CHANNELS: Final = ("bm25", "bm25Body", "wordllama", "multilingual")
_SHORT: Final = {"bm25": "bm25", "bm25Body": "body", "wordllama": "wl", "multilingual": "ml"}
#: Feature names, in the order :func:`features` returns them (``ranker.json`` names them
#: too, so a file fitted for other features is refused rather than misread).
FEATURES: Final = (
    *(f"{_SHORT[c]}" for c in CHANNELS),
    *(f"{_SHORT[c]}Gap" for c in CHANNELS),
    *(f"{_SHORT[c]}Rank" for c in CHANNELS),
    *(f"{_SHORT[c]}Z" for c in CHANNELS),
    "mix",
    "mixGap",
    "mixRank",
    "mixLead",
    "trigger",
    "coverage",
    "null",
    "mlOverNull",
    "words",
    "nameHit",
    "cov*bm25",
    "cov*body",
    "cov*wl",
    "uncov*ml",
)
_NAME_SPLIT: Final = re.compile(r"[^\w]+|_", re.UNICODE)
#: Name parts too short or too common to say anything when a request uses them.
_MIN_NAME_PART: Final = 3


def name_hits(names: Sequence[str], tokens: Sequence[str]) -> list[float]:
    """The share of each name's words (3 letters or more) that the request's ``tokens`` hold."""
    have = set(tokens)
    out: list[float] = []
    for name in names:
        parts = [p for p in _NAME_SPLIT.split(name.casefold()) if len(p) >= _MIN_NAME_PART]
        out.append(sum(p in have for p in parts) / len(parts) if parts else 0.0)
    return out


def features(
    channels: Mapping[str, Any],
    fused: Any,
    boost: Any,
    candidates: Any,
    *,
    coverage: float,
    null_cosine: float | None,
    words: int,
    name_hit: Sequence[float],
    bm25_k: float,
) -> npt.NDArray[np.float64]:
    """The feature matrix (one row per candidate position in ``candidates``)."""
    import numpy as np

    idx = np.asarray(candidates, dtype=np.int64)
    if not len(idx):  # an empty catalog: nothing to describe (and no maximum to take)
        return np.zeros((0, len(FEATURES)))
    cols: list[Any] = []
    vals: dict[str, Any] = {}
    for name in CHANNELS:
        raw = np.asarray(channels[name], dtype=np.float64)
        full = raw / (raw + bm25_k) if name.startswith("bm25") else raw
        if name.startswith("bm25"):
            full = np.maximum(full, 0.0)
        vals[name] = full
    for name in CHANNELS:
        cols.append(vals[name][idx])
    for name in CHANNELS:
        cols.append(vals[name][idx] - vals[name].max())
    for name in CHANNELS:
        # On the channel's own scores: squashing keeps the order, and sorting the
        # float32 scores as given costs a fraction of sorting a float64 copy.
        cols.append(np.log1p(_ranks(np.asarray(channels[name]), idx)))
    for name in CHANNELS:
        # How far the skill stands out from the whole catalog for this request: a
        # long request lifts every cosine, a common word every BM25 score.
        full = vals[name]
        cols.append((full[idx] - full.mean()) / (full.std() + 1e-6))
    mix = np.asarray(fused, dtype=np.float64)
    cand = mix[idx]
    ranks = np.log1p(_ranks(np.asarray(fused), idx))
    cols += [cand, cand - mix.max(), ranks, cand - _best_other(mix, idx)]
    cols.append(np.asarray(boost, dtype=np.float64)[idx])
    null = 0.0 if null_cosine is None else null_cosine
    n = len(idx)
    cols += [
        np.full(n, coverage),
        np.full(n, null),
        vals["multilingual"][idx] - null,
        np.full(n, math.log1p(words)),
        np.asarray(name_hit, dtype=np.float64),
        coverage * vals["bm25"][idx],
        coverage * vals["bm25Body"][idx],
        coverage * vals["wordllama"][idx],
        (1.0 - coverage) * vals["multilingual"][idx],
    ]
    return np.stack(cols, axis=1)


def _ranks(scores: Any, idx: Any) -> Any:
    """Each candidate's rank (0 = best) among all skills: how many score higher.

    By binary search in the sorted scores: comparing 30 candidates with 10,000 skills
    one by one cost six times as much.
    """
    import numpy as np

    above = len(scores) - np.searchsorted(np.sort(scores), scores[idx], side="right")
    return above.astype(np.float64)


def _best_other(scores: Any, idx: Any) -> Any:
    """For each candidate, the best score of any other skill."""
    import numpy as np

    if len(scores) == 1:
        return np.zeros(len(idx))
    # The two best by partition (a full sort of 10,000 scores cost over a millisecond);
    # on a tie for the best both are the same value, whichever index comes first.
    two = np.argpartition(-scores, 1)[:2]
    first, second = (two[0], two[1]) if scores[two[0]] >= scores[two[1]] else (two[1], two[0])
    return np.where(idx == first, scores[second], scores[first])


@dataclass(frozen=True, slots=True)
class LearnedRanker:
    """A fitted logistic model over :data:`FEATURES` (see the module docstring)."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    #: How many of the ``mix``'s best skills are re-ranked.
    depth: int
    #: The ``bm25_k`` of the squashed BM25 features.
    bm25_k: float

    @classmethod
    def from_json(cls, data: Any) -> LearnedRanker:
        """The model of a parsed ``ranker.json``; ValueError names what is wrong."""
        if not isinstance(data, Mapping):
            raise ValueError("ranker: expected a JSON object")
        names = data.get("features")
        if not isinstance(names, list) or tuple(names) != FEATURES:
            raise ValueError(f"ranker features {names!r} are not this version's {FEATURES!r}")
        try:
            vectors = [tuple(float(v) for v in data[k]) for k in ("mean", "scale", "coef")]
            intercept, bm25_k = float(data["intercept"]), float(data["bm25K"])
            depth = data["depth"]
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"ranker: a missing or non-numeric value ({exc})") from None
        if any(len(v) != len(FEATURES) for v in vectors):
            raise ValueError(f"ranker vectors must have {len(FEATURES)} values")
        if not all(map(math.isfinite, (*vectors[0], *vectors[1], *vectors[2], intercept))):
            raise ValueError("ranker: every value must be finite")
        if any(v <= 0 for v in vectors[1]) or bm25_k <= 0:
            raise ValueError("ranker: scales and bm25K must be positive")
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ValueError("ranker: depth must be a positive integer")
        return cls(vectors[0], vectors[1], vectors[2], intercept, depth, bm25_k)

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "depth": self.depth,
            "bm25K": self.bm25_k,
        }

    def logits(self, x: Any) -> npt.NDArray[np.float64]:
        import numpy as np

        z = (np.asarray(x, dtype=np.float64) - np.asarray(self.mean)) / np.asarray(self.scale)
        return np.asarray(z @ np.asarray(self.coef) + self.intercept, dtype=np.float64)

    def probabilities(self, x: Any) -> npt.NDArray[np.float64]:
        import numpy as np

        return np.asarray(1.0 / (1.0 + np.exp(-self.logits(x))), dtype=np.float64)


@lru_cache(maxsize=1)
def default_ranker() -> LearnedRanker:
    """The shipped model (``ranker.json``, package data)."""
    text = resources.files("skillbook.selection").joinpath("ranker.json").read_text("utf-8")
    return LearnedRanker.from_json(json.loads(text))
