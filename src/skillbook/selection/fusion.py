"""Hybrid ranking: how the lexical and embedding scores of each skill become one.

Input: one score array per channel (``bm25`` raw scores, and the cosine of each
embedding model), all over the same skills. Output: the fused score per skill.

Two fusions:

- ``mix`` (default): a weighted sum of calibrated scores. BM25 is squashed to
  ``s / (s + k)`` so that it is comparable across requests (a max-normalised score
  would give the best skill 1.0 even for "hello"), cosines are used as they are.
  Because the result is absolute, one threshold (``minScore``) separates "this fits"
  from "nothing fits". The weights were tuned on the training part of the labelled
  set (``benchmarks/data/selection``) and are documented in docs/selection.md.
  With ``MixWeights.adaptive`` the English-only channels (BM25, wordllama) count in
  proportion to the request's *coverage*, the share of its words the catalog's
  vocabulary knows, and the weight they lose goes to the multilingual channel: for
  "¿va a llover mañana?" BM25 and wordllama match noise, the multilingual encoder does
  not, and the sum keeps its scale so one threshold still serves every language.
- ``rrf``: reciprocal rank fusion, ``Σ 1 / (60 + rank)``; it needs no calibration
  but says nothing about absolute fit, so abstention still uses the ``mix`` score.

Pure: numpy arithmetic only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Scores = npt.NDArray[np.float32]

__all__ = ["ENGLISH_CHANNELS", "RRF_K", "MixWeights", "channel_weights", "mix", "rrf", "squash"]

RRF_K: Final = 60


@dataclass(frozen=True, slots=True)
class MixWeights:
    """Weights of the ``mix`` fusion; channels without a weight count 0."""

    #: BM25 channels are squashed with ``s / (s + bm25_k)`` before weighting.
    bm25_k: float = 6.0
    weights: Mapping[str, float] = field(default_factory=dict)
    #: Scale ``bm25*`` and ``wordllama`` by the request's coverage, the rest to
    #: ``multilingual`` (only when that channel has a weight).
    adaptive: bool = False


#: The channels ``adaptive`` scales: they only know the catalog's (English) words.
ENGLISH_CHANNELS: Final = ("bm25", "bm25Body", "wordllama")


#: float32 values of the weights and constants the fusions multiply by (a float32 made
#: from a Python float cost about as much as the multiplication by it, twice per channel).
_F32: dict[float, Any] = {}
#: Values :data:`_F32` holds at most: weights adapted to a request's coverage vary.
_F32_LIMIT: Final = 256
#: ``np.float32(0.0)`` once made (0.0 and -0.0 share a key of :data:`_F32`).
_ZERO: list[Any] = []


def _f32(value: float) -> Any:
    """``np.float32(value)``, the same scalar, kept for the next request."""
    known = _F32.get(value)
    if known is None:
        import numpy as np

        known = np.float32(value)
        if value == 0:
            return known  # 0.0 and -0.0 are one key: never kept
        if len(_F32) >= _F32_LIMIT:
            _F32.clear()
        _F32[value] = known
    return known


def squash(scores: Any, k: float) -> Scores:
    """``s / (s + k)``: 0 for no match, towards 1 for strong ones, same for every request."""
    import numpy as np

    if not _ZERO:
        _ZERO.append(np.float32(0.0))
    # float32 zero: what 0.0 becomes against a float32 array, without converting it.
    s = np.maximum(np.asarray(scores, dtype=np.float32), _ZERO[0])
    return np.asarray(s / (s + _f32(k)), dtype=np.float32)


def channel_weights(
    weights: MixWeights, channels: Iterable[str], coverage: float = 1.0
) -> dict[str, float]:
    """The weight of each of ``channels`` for a request with this ``coverage`` (0–1)."""
    names = list(channels)
    out = {name: weights.weights.get(name, 0.0) for name in names}
    if not weights.adaptive or not out.get("multilingual"):
        return out
    share = min(1.0, max(0.0, coverage))
    for name in ENGLISH_CHANNELS:
        if out.get(name):
            lost = out[name] * (1.0 - share)
            out[name] -= lost
            out["multilingual"] += lost
    return out


def mix(channels: Mapping[str, Any], weights: MixWeights, coverage: float = 1.0) -> Scores:
    """The weighted sum of the channels (the ``bm25*`` ones squashed first).

    ``coverage`` is the share of the request's words the catalog knows; it only
    matters for ``adaptive`` weights (see :func:`channel_weights`).
    """
    import numpy as np

    per = channel_weights(weights, channels, coverage)
    total: Any = None
    for name, scores in channels.items():
        w = per[name]
        if not w:
            continue
        lexical = name.startswith("bm25")
        part = squash(scores, weights.bm25_k) if lexical else np.asarray(scores)
        total = part * _f32(w) if total is None else total + part * _f32(w)
    if total is None:
        size = len(next(iter(channels.values()))) if channels else 0
        return np.zeros(size, dtype=np.float32)
    return np.asarray(total, dtype=np.float32)


def rrf(channels: Mapping[str, Any], k: int = RRF_K) -> Scores:
    """Reciprocal rank fusion over the channels (ties share the better rank)."""
    import numpy as np

    total: Any = None
    for scores in channels.values():
        s = np.asarray(scores, dtype=np.float32)
        order = np.argsort(-s, kind="stable")
        ranks = np.empty(len(s), dtype=np.float32)
        ranks[order] = np.arange(1, len(s) + 1, dtype=np.float32)
        part = 1.0 / (k + ranks)
        part[s <= 0] = 0.0  # a channel that found nothing votes for nothing
        total = part if total is None else total + part
    size = len(next(iter(channels.values()))) if channels else 0
    return np.asarray(total if total is not None else np.zeros(size), dtype=np.float32)
