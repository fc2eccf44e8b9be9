"""The selector: which eligible skills fit a request, best first, with scores.

Input: the eligible skills (``SkillBook.eligible``) and :class:`SelectorSettings`;
then requests (the user's message, optionally the recent turns). Output: a
:class:`Selection` — every skill ranked with its fused score and the part each
channel (BM25, each embedding model, trigger hints) contributed, and ``selected``:
at most ``top_k`` skills whose score reaches the threshold. Small talk and questions
no skill serves select nothing.

Building is incremental (:meth:`Selector.update`): unchanged skills keep their
documents, and vectors come from the on-disk index by content hash, so after the
watcher reports one changed skill only that skill is embedded again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from skillbook.base.surrogates import without_surrogates
from skillbook.diagnostics import Diagnostic
from skillbook.model import Skill
from skillbook.selection._blas import one_blas_thread
from skillbook.selection.anchors import NULL_ANCHORS
from skillbook.selection.documents import SkillDocument, document_for
from skillbook.selection.fusion import MixWeights, mix, rrf, squash
from skillbook.selection.index import EmbeddingIndex
from skillbook.selection.lexical import LexicalChannels
from skillbook.selection.phrases import words
from skillbook.selection.ranker import CHANNELS as RANKER_CHANNELS
from skillbook.selection.ranker import LearnedRanker, default_ranker, name_hits
from skillbook.selection.ranker import features as ranker_features
from skillbook.selection.triggers import TriggerMatch, match_triggers

if TYPE_CHECKING:
    from skillbook.selection.embedders import Embedder

__all__ = [
    "DEFAULT_TOP_K",
    "NULL_RULE",
    "Candidate",
    "Ranking",
    "Selection",
    "Selector",
    "SelectorSettings",
    "Signals",
    "UpdateReport",
]

DEFAULT_TOP_K: Final = 5
#: How many skills a :class:`Selection` ranks in full (the rest are not materialised).
DEFAULT_DEPTH: Final = 20
#: Skills above which a full build tokenizes for BM25 while the embeddings compute.
OVERLAP_MIN: Final = 1000
#: How much the recent turns count next to the current message.
RECENT_WEIGHT: Final = 0.35
#: Added to the fused score of a skill whose ``any``/``all`` trigger hint matched.
TRIGGER_BOOST: Final = 0.15
#: The tuned mix per backend (``benchmarks/tune_select.py``, training split only).
#: ``embedding`` is the channel of a user-chosen model (model2vec, fastembed,
#: ``/embeddings``): it takes wordllama's place and weight.
DEFAULT_WEIGHTS: Final = {
    # ``adaptive``: a request in another language than the catalog's moves the
    # English channels' weight to the multilingual one (fusion.channel_weights).
    "hybrid": MixWeights(
        bm25_k=10.0,
        weights={
            "bm25": 0.2,
            "bm25Body": 0.3,
            "wordllama": 0.2,
            "embedding": 0.2,
            "multilingual": 0.3,
        },
        adaptive=True,
    ),
    # hybrid with ``embedding.multilingual: false``: calibrated without that channel.
    "hybrid-monolingual": MixWeights(
        bm25_k=10.0,
        weights={"bm25": 0.3, "bm25Body": 0.5, "wordllama": 0.3, "embedding": 0.3},
    ),
    "bm25": MixWeights(bm25_k=10.0, weights={"bm25": 0.5, "bm25Body": 0.7}),
    "embedding": MixWeights(
        bm25_k=10.0, weights={"wordllama": 0.1, "embedding": 0.1, "multilingual": 1.0}
    ),
}
#: Thresholds on the fused score, per backend, tuned with the weights above.
DEFAULT_MIN_SCORE: Final = {
    "hybrid": 0.18,
    "hybrid-monolingual": 0.28,
    "bm25": 0.32,
    "embedding": 0.31,
}
#: The "null skill" (:mod:`~skillbook.selection.anchors`), per profile with the
#: multilingual channel: ``(weight, margin)``. A request whose multilingual cosine to
#: the nearest no-skill sentence is ``a`` selects only skills scoring at least
#: ``margin + weight * a`` (and the threshold): "what is a blockchain?" shares words
#: with crypto skills but is closer still to "explain how this works". Tuned on the
#: tuning parts of both labelled sets with the threshold above (the highest selected
#: recall with correct abstention >= 0.9 there).
NULL_RULE: Final = {"hybrid": (1.4, -0.06)}


@dataclass(frozen=True, slots=True)
class SelectorSettings:
    """How the selector ranks: ``skills.selection`` with defaults applied."""

    backend: str = "hybrid"
    fusion: str = "mix"
    top_k: int = DEFAULT_TOP_K
    min_score: float | None = None
    pinned: tuple[str, ...] = ()
    #: None: the tuned weights of ``backend``.
    weights: MixWeights | None = None
    #: Re-rank and score with the learned ranker where it applies (:attr:`Selector.ranker`).
    learned: bool = True
    #: Apply the null skill's floor where the profile has one (``nullSkill``); False
    #: selects by ``minScore`` alone.
    null_skill: bool = True

    def mix_weights(self, profile: str | None = None) -> MixWeights:
        """The given weights, else the tuned ones of ``profile`` (default: the backend)."""
        if self.weights is not None:
            return self.weights
        return DEFAULT_WEIGHTS.get(profile or self.backend, DEFAULT_WEIGHTS["hybrid"])

    def threshold(self, profile: str | None = None) -> float:
        """``min_score``, else the tuned threshold of ``profile`` (default: the backend)."""
        if self.min_score is not None:
            return self.min_score
        return DEFAULT_MIN_SCORE.get(profile or self.backend, DEFAULT_MIN_SCORE["hybrid"])


@dataclass(frozen=True, slots=True)
class Candidate:
    """One skill's place in a ranking."""

    skill: Skill
    rank: int
    #: The fused score ``minScore`` is compared with.
    score: float
    #: What each channel gave: ``bm25`` (raw BM25), ``bm25Squashed``, one cosine per
    #: embedding channel, ``rrf`` when that fusion ranked, ``trigger`` (the boost).
    parts: Mapping[str, float] = field(default_factory=dict)
    triggers: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.skill.name

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "rank": self.rank,
            "score": round(self.score, 4),
            "parts": {k: round(v, 4) for k, v in self.parts.items()},
        }
        if self.triggers:
            out["triggers"] = list(self.triggers)
        return out


@dataclass(frozen=True, slots=True)
class Selection:
    """The ranking of one request; ``selected`` is what reaches the model."""

    query: str
    backend: str
    #: The score a skill needed to be selected for this request: the configured
    #: threshold, or the null skill's floor when that is higher.
    threshold: float
    ranked: tuple[Candidate, ...]
    selected: tuple[Candidate, ...]
    #: Skills a ``none`` trigger hint removed from the ranking.
    vetoed: tuple[str, ...] = ()
    #: ``margin + weight * cosine`` to the nearest no-skill sentence (None: no null skill).
    floor: float | None = None

    def names(self) -> list[str]:
        return [c.name for c in self.selected]

    def to_json(self, *, top: int | None = None) -> dict[str, Any]:
        shown = self.ranked if top is None else self.ranked[:top]
        return {
            "query": self.query,
            "backend": self.backend,
            "threshold": self.threshold,
            "nullFloor": None if self.floor is None else round(self.floor, 4),
            "selected": self.names(),
            "ranked": [c.to_json() for c in shown],
            "vetoed": list(self.vetoed),
        }


@dataclass(frozen=True, slots=True)
class Signals:
    """One request's scores before ranking: each channel's, fused, and about the request."""

    #: The request with the speller's corrections appended (what the channels read).
    text: str
    #: Word tokens of the request and the recent turns (what triggers match).
    tokens: tuple[str, ...]
    #: Each channel's raw score per skill (the recent turns' added, weighted down).
    channels: dict[str, Any]
    weights: MixWeights
    #: The share of the request's content words the catalog knows.
    coverage: float
    #: Cosine to the nearest no-skill sentence in the multilingual channel (or None).
    null_cosine: float | None
    #: The trigger boost per skill, and the trigger matches by skill position.
    boost: Any
    matches: dict[int, TriggerMatch]
    #: The ``mix`` score per skill, the boost included.
    fused: Any


@dataclass(frozen=True, slots=True)
class UpdateReport:
    """What :meth:`Selector.update` had to redo."""

    skills: int
    documents_rebuilt: int
    vectors_computed: int
    vectors_reused: int


class Selector:
    """Ranks a fixed set of skills for requests; :meth:`update` follows changes."""

    def __init__(
        self,
        skills: Sequence[Skill],
        *,
        settings: SelectorSettings | None = None,
        embedders: Mapping[str, Embedder] | None = None,
        index_dir: Path | None = None,
        ranker: LearnedRanker | None = None,
    ) -> None:
        self.settings = settings or SelectorSettings()
        #: A model in place of the shipped ``ranker.json`` (fitting, tests).
        self._ranker = ranker
        use_embeddings = self.settings.backend != "bm25"
        self._indexes: dict[str, EmbeddingIndex] = {
            name: EmbeddingIndex(e, index_dir)
            for name, e in (embedders or {}).items()
            if use_embeddings
        }
        self._docs: dict[int, tuple[Skill, SkillDocument]] = {}
        self.skills: tuple[Skill, ...] = ()
        self.documents: tuple[SkillDocument, ...] = ()
        self._vectors: dict[str, Any] = {}
        self._keys: list[str] = []
        self._lexical = LexicalChannels() if self.settings.backend != "embedding" else None
        self._one_blas_thread = one_blas_thread()
        #: The mix weights and the settings they were made for (see :meth:`_weights`).
        self._mixed: tuple[SelectorSettings, MixWeights] | None = None
        #: Real words for the speller: the multilingual encoder's vocabulary, if loaded.
        self._lexicon: Callable[[str], bool] | None = next(
            (
                getattr(i.embedder, "is_word")  # noqa: B009 - an optional capability
                for i in self._indexes.values()
                if callable(getattr(i.embedder, "is_word", None))
            ),
            None,
        )
        #: The no-skill sentences in the multilingual channel (None: no null skill).
        self._null: Any = None
        null_rule = (
            NULL_RULE.get(self.profile)
            if self.settings.weights is None and self.settings.null_skill
            else None
        )
        if null_rule is not None and "multilingual" in self._indexes:
            embedder = self._indexes["multilingual"].embedder
            with self._one_blas_thread():
                self._null = embedder.embed(list(NULL_ANCHORS))
        self._null_rule = null_rule
        self.update(skills)

    @classmethod
    def restore(
        cls,
        *,
        settings: SelectorSettings,
        indexes: Mapping[str, EmbeddingIndex],
        skills: Sequence[Skill],
        documents: Sequence[SkillDocument],
        vectors: Mapping[str, Any],
        lexical: LexicalChannels | None,
        null: Any,
        null_rule: tuple[float, float] | None,
    ) -> Selector:
        """A selector from the parts of a built one (:mod:`skillbook.selection.saved`):
        it ranks as that one did, and computes nothing on the way."""
        self = cls.__new__(cls)
        self.settings = settings
        self._ranker = None  # the shipped model, read on the first request as a built one
        self._indexes = dict(indexes)
        self._docs = {}
        self.skills = tuple(skills)
        self.documents = tuple(documents)
        self._triggered = tuple(i for i, d in enumerate(self.documents) if d.triggers)
        self._vectors = dict(vectors)
        self._keys = []
        self._lexical = lexical
        self._one_blas_thread = one_blas_thread()
        self._mixed = None
        self._lexicon = next(
            (
                getattr(i.embedder, "is_word")  # noqa: B009 - an optional capability
                for i in self._indexes.values()
                if callable(getattr(i.embedder, "is_word", None))
            ),
            None,
        )
        self._null = null
        self._null_rule = null_rule
        return self

    @property
    def embedders(self) -> dict[str, Embedder]:
        """The embedding models by channel (to build another selector without reloading)."""
        return {name: index.embedder for name, index in self._indexes.items()}

    @property
    def channels(self) -> tuple[str, ...]:
        lexical = ("bm25", "bm25Body") if self.settings.backend != "embedding" else ()
        return (*lexical, *self._indexes)

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        found: list[Diagnostic] = [d for doc in self.documents for d in doc.diagnostics]
        for index in self._indexes.values():
            found.extend(index.diagnostics)
        return tuple(found)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background BM25 rebuild (large catalogs); True when current."""
        return self._lexical.wait(timeout) if self._lexical is not None else True

    def flush(self) -> None:
        """Wait until every new vector is written to the on-disk index."""
        for index in self._indexes.values():
            index.flush()

    def update(self, skills: Sequence[Skill]) -> UpdateReport:
        """Rank ``skills`` from now on, redoing only what changed."""
        previous = self._docs
        docs: dict[int, tuple[Skill, SkillDocument]] = {}
        rebuilt = 0
        for skill in skills:
            kept = previous.get(id(skill))
            if kept is not None and kept[0] is skill:
                docs[id(skill)] = kept
            else:
                docs[id(skill)] = (skill, document_for(skill))
                rebuilt += 1
        self._docs = docs
        self.skills = tuple(skills)
        self.documents = tuple(docs[id(s)][1] for s in self.skills)
        self._triggered = tuple(i for i, d in enumerate(self.documents) if d.triggers)
        computed = reused = 0
        keys = [d.key for d in self.documents]
        texts = [d.semantic for d in self.documents]
        old_keys, self._keys = self._keys, keys
        changed: list[int] | None = None
        if len(old_keys) == len(keys) and self._vectors:
            changed = [i for i, (a, b) in enumerate(zip(old_keys, keys, strict=True)) if a != b]
            if len(changed) > len(keys) // 4:
                changed = None  # many changes: gathering all rows again is as cheap
        # A full build: BM25 tokenizing (Python, holding the interpreter lock) runs
        # beside the embedding models (numpy kernels, releasing it) instead of after.
        lexical = self._lexical
        beside = (
            _start(lexical.update, self.documents)
            if lexical is not None and changed is None and len(keys) > OVERLAP_MIN
            else None
        )
        for name, index in self._indexes.items():
            if changed is None:
                self._vectors[name] = index.vectors(keys, texts)
                computed += index.computed
                reused += index.reused
                continue
            if changed:
                # Rows are replaced in place: copying a 10,000-skill matrix per edit
                # cost more than the rest of the update (first-touch page faults). A
                # request ranked meanwhile may see the edited skill's old or new vector.
                fresh = index.vectors([keys[i] for i in changed], [texts[i] for i in changed])
                self._vectors[name][changed] = fresh
            computed += index.computed if changed else 0
            reused += len(keys) - (len(changed) if changed else 0)
        if beside is not None:
            beside.result()
        elif lexical is not None:
            # Last: a background rebuild competes for the interpreter lock.
            lexical.update(self.documents)
        return UpdateReport(len(self.skills), rebuilt, computed, reused)

    # ------------------------------------------------------------------ ranking

    def channel_scores(self, text: str) -> dict[str, Any]:
        """Each channel's raw score for every skill (BM25 scores, cosines)."""
        return self._channels(text)[0]

    def _channels(self, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The channel scores and the request's vector in each embedding channel."""
        out: dict[str, Any] = {}
        vectors: dict[str, Any] = {}
        if self._lexical is not None:
            out.update(self._lexical.scores(text))
        if not self._indexes:
            # BM25 alone multiplies no matrices: limiting BLAS (threadpoolctl finding its
            # libraries and setting their threads) was a tenth of a registry's new query.
            return out, vectors
        with self._one_blas_thread():
            for name, index in self._indexes.items():
                matrix = self._vectors[name]
                query = vectors[name] = index.embedder.embed([text])[0]
                out[name] = matrix @ query if len(matrix) else matrix[:, :0].sum(axis=1)
        return out, vectors

    def null_cosine(self, vectors: Mapping[str, Any]) -> float | None:
        """The request's multilingual cosine to the nearest no-skill sentence (None: none)."""
        if self._null is None or "multilingual" not in vectors:
            return None
        return float((self._null @ vectors["multilingual"]).max())

    def null_floor(self, vectors: Mapping[str, Any]) -> float | None:
        """The null skill's floor for a request with these channel vectors."""
        return self.null_floor_of(self.null_cosine(vectors))

    def null_floor_of(self, null_cosine: float | None) -> float | None:
        """``margin + weight * null_cosine`` (None without a null rule)."""
        if null_cosine is None or self._null_rule is None:
            return None
        weight, margin = self._null_rule
        return margin + weight * null_cosine

    def coverage(self, request: str) -> float:
        """The share of the request's content words the catalog uses (1.0 without BM25).

        Pass the :meth:`corrected` request: a typo's correction is a catalog word, so a
        misspelled English request still counts as English.
        """
        if self._lexical is None:
            return 1.0
        return self._lexical.coverage(request)

    def corrected(self, request: str) -> str:
        """``request`` with the catalog words one edit from its typos appended.

        A typo is a word that is no word of any language the lexicon knows; the
        misspelled word stays (it may be a name). No lexicon, no corrections.
        """
        lexicon = self._lexicon
        if self._lexical is None or lexicon is None:
            return request
        fixes = self._lexical.corrections(request, lexicon)
        return " ".join([request, *fixes]) if fixes else request

    def signals(self, request: str, *, recent: Sequence[str] = ()) -> Signals:
        """What every ranking of ``request`` starts from (see :class:`Signals`)."""
        import numpy as np

        # Lone surrogates (bytes that are not UTF-8 in argv) stopped the tokenizers.
        request = without_surrogates(request)
        recent = [without_surrogates(t) for t in recent]
        text = self.corrected(request)
        channels, vectors = self._channels(text)
        null_cosine = self.null_cosine(vectors)
        context = " ".join(t for t in recent if t.strip())
        if context:
            for name, scores in self.channel_scores(context).items():
                channels[name] = channels[name] + np.float32(RECENT_WEIGHT) * scores
        weights = self._weights()
        coverage = self.coverage(text)
        fused = mix(channels, weights, coverage)
        tokens = words(" ".join([request, context]))
        matches: dict[int, TriggerMatch] = {}
        boost = np.zeros(len(self.documents), dtype=np.float32)
        for i in self._triggered:
            m = matches[i] = match_triggers(self.documents[i].triggers, tokens)
            if m.boosted:
                boost[i] = TRIGGER_BOOST
        return Signals(
            text=text,
            tokens=tokens,
            channels=channels,
            weights=weights,
            coverage=coverage,
            null_cosine=null_cosine,
            boost=boost,
            matches=matches,
            fused=fused + boost,
        )

    def select(
        self,
        request: str,
        *,
        recent: Sequence[str] = (),
        top_k: int | None = None,
        depth: int = DEFAULT_DEPTH,
    ) -> Selection:
        """Rank every skill for ``request`` (and, weighted down, the ``recent`` turns).

        ``ranked`` holds the best ``depth`` skills (at least ``top_k``).
        """
        import numpy as np

        settings = self.settings
        sig = self.signals(request, recent=recent)
        channels, fused, boost, matches, weights = (
            sig.channels,
            sig.fused,
            sig.boost,
            sig.matches,
            sig.weights,
        )
        vetoed = {i for i, m in matches.items() if m.vetoed}
        order_by = rrf(channels) + boost if settings.fusion == "rrf" else fused.copy()
        if vetoed:
            order_by[list(vetoed)] = -np.inf
        limit = settings.top_k if top_k is None else top_k
        size = max(depth, limit)
        ranker = self.ranker
        learned: dict[int, float] = {}
        if ranker is not None:
            order, learned = self._learned(ranker, sig, order_by, vetoed, size)
        else:
            order = [i for i in _top(order_by, size + len(vetoed)) if i not in vetoed][:size]
        ranked = tuple(
            self._candidate(i, rank, fused, channels, weights, matches.get(i), order_by, learned)
            for rank, i in enumerate(order, start=1)
        )
        floor = self.null_floor_of(sig.null_cosine)
        threshold = settings.threshold(self.profile)
        if floor is not None:
            threshold = max(threshold, floor)
        selected = tuple(c for c in ranked[:limit] if c.score >= threshold)
        return Selection(
            query=request,
            backend=settings.backend,
            threshold=threshold,
            ranked=ranked,
            selected=selected,
            vetoed=tuple(self.skills[i].name for i in sorted(vetoed)),
            floor=floor,
        )

    @property
    def ranker(self) -> LearnedRanker | None:
        """The learned ranker, when it applies: the default hybrid mix with all four channels.

        It was fitted on those channels' scores; other backends, your own ``weights``,
        ``rrf`` or ``SelectorSettings(learned=False)`` order by the ``mix`` score alone.
        """
        settings = self.settings
        if (
            not settings.learned
            or settings.weights is not None
            or settings.fusion != "mix"
            or self.profile != "hybrid"
            or any(c not in self.channels for c in RANKER_CHANNELS)
        ):
            return None
        return self._ranker if self._ranker is not None else default_ranker()

    def _learned(
        self, ranker: LearnedRanker, sig: Signals, order_by: Any, vetoed: set[int], size: int
    ) -> tuple[list[int], dict[int, float]]:
        """The ``mix``'s best skills re-ranked by the model, and each one's probability."""
        import numpy as np

        n = max(ranker.depth, size)
        cand = [i for i in _top(order_by, n + len(vetoed)) if i not in vetoed][:n]
        request_words = (*words(sig.text), *sig.tokens)
        x = ranker_features(
            sig.channels,
            sig.fused,
            sig.boost,
            cand,
            coverage=sig.coverage,
            null_cosine=sig.null_cosine,
            words=len(sig.tokens),
            name_hit=name_hits([self.skills[i].name for i in cand], request_words),
            bm25_k=ranker.bm25_k,
        )
        p = ranker.probabilities(x)
        order = [cand[j] for j in np.argsort(-p, kind="stable")][:size]
        return order, {i: float(v) for i, v in zip(cand, p, strict=True)}

    @property
    def profile(self) -> str:
        """Which tuned weights apply: the backend, ``hybrid-monolingual`` without that channel."""
        backend = self.settings.backend
        if backend == "hybrid" and "multilingual" not in self._indexes:
            return "hybrid-monolingual"
        return backend

    def _weights(self) -> MixWeights:
        # Kept: they follow from the settings and channels, fixed for a selector's life.
        known = self._mixed
        if known is not None and known[0] is self.settings:
            return known[1]
        made = self._weights_made()
        self._mixed = (self.settings, made)
        return made

    def _weights_made(self) -> MixWeights:
        w = self.settings.mix_weights(self.profile)
        active = {k: v for k, v in w.weights.items() if k in self.channels}
        if not active:  # one channel alone: it gets the whole weight
            active = dict.fromkeys(self.channels, 1.0 / max(1, len(self.channels)))
        return MixWeights(bm25_k=w.bm25_k, weights=active, adaptive=w.adaptive)

    def _candidate(
        self,
        i: int,
        rank: int,
        fused: Any,
        channels: Mapping[str, Any],
        weights: MixWeights,
        m: TriggerMatch | None,
        order_by: Any,
        learned: Mapping[int, float],
    ) -> Candidate:
        parts: dict[str, float] = {}
        for name, scores in channels.items():
            parts[name] = float(scores[i])
            if name.startswith("bm25"):
                parts[name + "Squashed"] = float(squash(scores[i : i + 1], weights.bm25_k)[0])
        if m is not None and m.boosted:
            parts["trigger"] = TRIGGER_BOOST
        if self.settings.fusion == "rrf":
            parts["rrf"] = float(order_by[i])
        if i in learned:
            parts["learned"] = learned[i]
        return Candidate(
            skill=self.skills[i],
            rank=rank,
            score=float(fused[i]),
            parts=parts,
            triggers=m.reasons if m is not None else (),
        )

    def rank(self, request: str, *, depth: int = DEFAULT_DEPTH) -> Ranking:
        """:meth:`select`'s order, scores and threshold, without a :class:`Candidate` each.

        For a caller that shows many rankings and reads only these (the registry's
        search): building each candidate's ``parts`` was about two thirds of a
        300-skill BM25 ``select``. The same steps as :meth:`select` without recent
        turns; tests/distribution/hub/test_search_same.py holds the two together.
        """
        import numpy as np

        if not self._indexes and self.ranker is None:
            return self._rank_lexical(request, depth)
        sig = self.signals(request)
        vetoed = {i for i, m in sig.matches.items() if m.vetoed}
        order_by = (
            rrf(sig.channels) + sig.boost if self.settings.fusion == "rrf" else sig.fused.copy()
        )
        if vetoed:
            order_by[list(vetoed)] = -np.inf
        ranker = self.ranker
        if ranker is not None:
            order, _ = self._learned(ranker, sig, order_by, vetoed, depth)
        else:
            order = [i for i in _top(order_by, depth + len(vetoed)) if i not in vetoed][:depth]
        floor = self.null_floor_of(sig.null_cosine)
        threshold = self.settings.threshold(self.profile)
        if floor is not None:
            threshold = max(threshold, floor)
        return Ranking(self.skills, tuple(order), sig.fused, sig.channels, threshold)

    def _rank_lexical(self, request: str, depth: int) -> Ranking:
        """:meth:`rank` of a selector without embedding channels or learned ranker.

        The steps of :meth:`signals` such a ranking reads, in the same order and the
        same float32 arithmetic, without the rest: no null skill, coverage only for
        adaptive weights, the request's words only when a skill has trigger hints
        (each was a tenth of a registry's new BM25 query).
        """
        import numpy as np

        text = self.corrected(request)
        channels = self._lexical.scores(text) if self._lexical is not None else {}
        weights = self._weights()
        coverage = self.coverage(text) if weights.adaptive else 1.0
        fused = mix(channels, weights, coverage)
        vetoed: list[int] = []
        # No hints: every boost is +0.0, and adding it still turns -0.0 into 0.0.
        boost: Any = np.float32(0.0)
        if self._triggered:
            boost = np.zeros(len(self.documents), dtype=np.float32)
            tokens = words(request)
            for i in self._triggered:
                m = match_triggers(self.documents[i].triggers, tokens)
                if m.boosted:
                    boost[i] = TRIGGER_BOOST
                if m.vetoed:
                    vetoed.append(i)
        fused = fused + boost  # as signals() adds it
        if self.settings.fusion == "rrf":
            order_by = rrf(channels) + boost
        else:
            order_by = fused.copy() if vetoed else fused  # a copy only to write in
        if vetoed:
            order_by[vetoed] = -np.inf
        skip = set(vetoed)
        order = [i for i in _top(order_by, depth + len(vetoed)) if i not in skip][:depth]
        return Ranking(
            self.skills, tuple(order), fused, channels, self.settings.threshold(self.profile)
        )


@dataclass(frozen=True, slots=True)
class Ranking:
    """What :meth:`Selector.rank` returns: skill positions best first, and their scores."""

    #: The skills ranked (the selector's at the time: an update may replace them).
    skills: tuple[Skill, ...]
    #: Positions in ``skills``, best first (at most ``depth``).
    order: tuple[int, ...]
    #: The fused score per skill (``Candidate.score`` is ``float(fused[i])``).
    fused: Any
    #: Each channel's raw score per skill (``Candidate.parts`` holds ``float(...[i])``).
    channels: Mapping[str, Any]
    #: As :attr:`Selection.threshold`.
    threshold: float


def _start(job: Callable[[Any], None], arg: Any) -> Future[None]:
    """Run ``job(arg)`` on a thread of its own; the future re-raises what it raised."""
    done: Future[None] = Future()

    def run() -> None:
        try:
            job(arg)
        except BaseException as exc:
            done.set_exception(exc)
        else:
            done.set_result(None)

    threading.Thread(target=run, name="skillbook-bm25-build", daemon=True).start()
    return done


def _top(scores: Any, n: int) -> list[int]:
    """Indices of the ``n`` highest scores, best first (ties: lower index first)."""
    import numpy as np

    if n >= len(scores):
        return np.argsort(-scores, kind="stable").tolist()  # type: ignore[no-any-return]
    # The methods, not numpy's module functions: the same work without their wrapping.
    part = (-scores).argpartition(n)[:n]
    return part[np.lexsort((part, -scores[part]))].tolist()  # type: ignore[no-any-return]
