"""A saved selector ranked without numpy: the fast path of a fresh ``skillbook select``.

Input: a selector file :mod:`skillbook.selection.saved` wrote (its header and the
mapped file) and a request. Output: the same ranking a restored
:class:`~skillbook.selection.selector.Selector` gives (the same skills in the same
order, scores equal to the printed precision), as :class:`Selection` and
:class:`Candidate` objects that print as the selector's do.

Why a second implementation: importing numpy was half of a fresh ``select``'s CPU,
more than the ranking itself. Everything here is the selector's arithmetic written
again over plain values, driven by the same saved parameters (the mix weights and
threshold the selector computed, the learned ranker's ``ranker.json``):

- BM25: the saved postings summed word by word in float32 (``array('f')`` rounds
  each sum as numpy's ``np.add.at`` does), so its scores are the same floats;
- wordllama: the request's token rows (float16, mapped) summed in float32 in token
  order and divided by their count, as the selector does;
- the multilingual encoder: its layers for one request, the products in numpy's own
  OpenBLAS (:mod:`skillbook.selection._cblas`), the elementwise steps in Python;
- the cosines: one ``sgemv`` per channel over the saved float32 vectors (the product
  numpy calls for ``matrix @ query``);
- the ``mix`` fusion in float32 (each step rounded as numpy rounds it), the trigger
  boost, the learned ranker's 30 features and probabilities over its candidates
  (float64, as in :mod:`skillbook.selection.ranker`).

What is not the same floats: the multilingual vector and the sums over the whole
catalog in the ranker's features (numpy adds them in another order) differ in the
last bits. Orders are decided on the values, ties by position (the lower first, as
numpy's stable sorts do), so only skills whose scores differ by float32 rounding
noise can swap; tests/selection/test_plain.py holds the two paths together.

:func:`load` returns None for anything it does not reproduce (another fusion,
backend or embedding model, a request the token tables do not settle, no usable
BLAS): the caller then ranks with numpy, as before.
"""

from __future__ import annotations

import math
import mmap
import re
import struct
from array import array
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence

from skillbook.base.surrogates import without_surrogates
from skillbook.errors import SkillbookError
from skillbook.selection.phrases import match_phrases, words
from skillbook.selection.speller import Speller

# Neither `typing` nor the selection modules at run time (dataclasses, inspect,
# importlib.resources, the skill model): their imports cost more CPU than a ranking.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = ["PLAIN_MAX", "Candidate", "PlainSelector", "Selection", "Unsupported", "load"]

#: Skills up to which a fresh process ranks without numpy (above, numpy's import is
#: the smaller cost: see docs/selection.md, "A fresh skillbook select process").
PLAIN_MAX: Final = 5_000
#: Request pieces (multilingual tokenizer) up to which the encoder runs here: its
#: layers cost about 2 ms of CPU per piece in Python (at load 20), so a pasted
#: document is encoded faster by numpy, import included.
PLAIN_PIECES: Final = 128

#: As :data:`skillbook.selection.selector.DEFAULT_DEPTH`, ``TRIGGER_BOOST``.
DEFAULT_DEPTH: Final = 20
TRIGGER_BOOST: Final = 0.15
#: The ranker's channels (:data:`skillbook.selection.ranker.CHANNELS`).
RANKER_CHANNELS: Final = ("bm25", "bm25Body", "wordllama", "multilingual")
_MULTI_DIM: Final = 512
_CNN: Final = 256
_CHUNKS: Final = 17
_ORDERS: Final = ((2, 0), (3, 1), (5, 2))
_BOS: Final = 1
_EOS: Final = 2
_UNK: Final = 0


class Unsupported(SkillbookError):
    """Something this module does not reproduce: rank with numpy instead (never
    reaches the user: :mod:`skillbook.cli.select_fast` catches it)."""


# --------------------------------------------------------------------------- results


class Candidate:
    """One skill's place in a ranking (prints as the selector's ``Candidate``)."""

    __slots__ = ("parts", "rank", "score", "skill", "triggers")

    def __init__(
        self,
        skill: Any,
        rank: int,
        score: float,
        parts: dict[str, float],
        triggers: tuple[str, ...],
    ) -> None:
        self.skill = skill
        self.rank = rank
        self.score = score
        self.parts = parts
        self.triggers = triggers

    @property
    def name(self) -> str:
        return str(self.skill.name)

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


class Selection:
    """The ranking of one request (prints as the selector's ``Selection``)."""

    __slots__ = ("backend", "floor", "query", "ranked", "selected", "threshold", "vetoed")

    def __init__(
        self,
        query: str,
        backend: str,
        threshold: float,
        ranked: tuple[Candidate, ...],
        selected: tuple[Candidate, ...],
        vetoed: tuple[str, ...],
        floor: float | None,
    ) -> None:
        self.query = query
        self.backend = backend
        self.threshold = threshold
        self.ranked = ranked
        self.selected = selected
        self.vetoed = vetoed
        self.floor = floor

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


# --------------------------------------------------------------------------- float32


def f32(values: Any) -> array[float]:
    """``values`` rounded to float32 (one rounding per value, as a numpy float32 op)."""
    return array("f", values)


def _f32(x: float) -> float:
    return array("f", (x,))[0]


# --------------------------------------------------------------------------- the file


class _File:
    """Arrays of a saved selector file, by their header index."""

    def __init__(self, header: Mapping[str, Any], data: Any, start: int) -> None:
        self._layout = header["arrays"]
        self.data = data
        self.start = start

    def where(self, at: int) -> tuple[str, tuple[int, ...], int]:
        dtype, shape, offset = self._layout[at]
        return str(dtype), tuple(int(n) for n in shape), self.start + int(offset)

    def view(self, at: int) -> memoryview:
        """The array as a typed memoryview (float32, int32/int64, bytes)."""
        dtype, shape, offset = self.where(at)
        codes = {"<f4": "f", "<i4": "i", "<i8": "q", "<u4": "I", "<u8": "Q", "|u1": "B"}
        code = codes.get(dtype)
        if code is None:
            raise Unsupported(f"array type {dtype}")
        count = 1
        for n in shape:
            count *= n
        size = count * struct.calcsize(code)
        view: memoryview = memoryview(self.data)[offset : offset + size].cast(code)  # type: ignore[call-overload]
        return view


# --------------------------------------------------------------------------- BM25


class _Bm25:
    """bm25s's scores from its saved sparse arrays, as :class:`~skillbook.selection.saved`
    computes them: each query word's postings added in float32, word by word."""

    def __init__(self, entry: Mapping[str, Any], file: _File) -> None:
        self.size = int(entry["size"])
        self.vocab: Mapping[str, int] = entry.get("vocab", {}) if self.size else {}
        if self.size:
            self._docs = int(entry["num_docs"])
            self._data = file.view(entry["data"])
            self._indices = file.view(entry["indices"])
            self._indptr = file.view(entry["indptr"])

    def scores(self, tokens: Sequence[str]) -> array[float]:
        vocab = self.vocab
        ids = [vocab[t] for t in tokens if t in vocab] if self.size else []
        if not ids:
            return array("f", bytes(4 * self.size))
        indptr, indices, data = self._indptr, self._indices, self._data
        if max(ids) >= len(indptr) - 1:
            raise Unsupported("a query word is not in the saved BM25 index")
        out = array("f", bytes(4 * self._docs))
        for word in ids:
            for j in range(indptr[word], indptr[word + 1]):
                out[indices[j]] += data[j]  # stored as float32: numpy's float32 sum
        return out


class _Tokenizer:
    """:class:`skillbook.selection.lexical.Tokenizer` over the saved stop words."""

    def __init__(self, stop: frozenset[str], stem: Callable[[list[str]], list[str]] | None) -> None:
        self.stop = stop
        self.stem = stem
        self._memo: dict[str, str | None] = {}

    def __call__(self, text: str) -> list[str]:
        found = _TOKEN_RE.findall(text.casefold())
        memo = self._memo
        new = [w for w in set(found) if w not in memo]
        if new:
            kept = [w for w in new if w not in self.stop]
            memo.update(dict.fromkeys(new))
            memo.update(zip(kept, self.stem(kept) if self.stem is not None else kept, strict=True))
        return [s for w in found if (s := memo[w]) is not None]


_TOKEN_RE: Final = re.compile(r"(?u)\b\w\w+\b")


def _stemmer() -> Callable[[list[str]], list[str]] | None:
    try:
        import Stemmer
    except ImportError:
        return None
    stem: Callable[[list[str]], list[str]] = Stemmer.Stemmer("english").stemWords
    return stem


class _Lexical:
    """The two BM25 channels, the coverage and the speller of a saved selector."""

    def __init__(self, entry: Mapping[str, Any], file: _File) -> None:
        stem = _stemmer() if entry["stem"] else None
        if entry["stem"] and stem is None:
            raise Unsupported("the saved index was stemmed and PyStemmer is gone")
        self.tokenize = _Tokenizer(frozenset(entry["stop"]), stem)
        self.lexical, self.body = (_Bm25(e, file) for e in entry["indexes"])
        self._speller = Speller(dict(entry["speller"]), lazy=True)

    def corrections(self, text: str, is_word: Callable[[str], bool]) -> list[str]:
        vocab = self.lexical.vocab

        def known_stem(word: str) -> bool:
            stems = self.tokenize(word)
            return bool(stems) and stems[0] in vocab

        return self._speller.corrections(text, is_word, known_stem)

    def coverage(self, text: str) -> float:
        tokens = self.tokenize(text)
        if not tokens:
            return 0.0
        vocab = self.lexical.vocab
        return sum(1 for t in tokens if t in vocab) / len(tokens)

    def scores(self, text: str) -> dict[str, array[float]]:
        tokens = self.tokenize(text)
        return {"bm25": self.lexical.scores(tokens), "bm25Body": self.body.scores(tokens)}


# --------------------------------------------------------------------------- triggers


class _Match:
    """As :class:`skillbook.selection.triggers.TriggerMatch`."""

    __slots__ = ("boosted", "reasons", "vetoed")

    def __init__(self, boosted: bool, vetoed: bool, reasons: tuple[str, ...]) -> None:
        self.boosted, self.vetoed, self.reasons = boosted, vetoed, reasons


def _match(triggers: Sequence[Sequence[Sequence[str]]], request: Sequence[str]) -> _Match:
    """As :func:`skillbook.selection.triggers.match_triggers` on saved ``(any, all, none)``."""
    any_, all_, none = triggers
    return _Match(*match_phrases(any_, all_, none, request))


# --------------------------------------------------------------------------- models


def _map(path: str) -> Any:
    """A file mapped copy-on-write: writable for ``ctypes`` (nothing writes), shared pages."""
    with open(path, "rb") as fh:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)


class _WordLlama:
    """wordllama's request vector: the mean of its tokens' rows, as
    :meth:`~skillbook.selection.embedders.WordLlamaEmbedder._pooled` computes it."""

    def __init__(self, spec: Mapping[str, Any], tables: Any) -> None:
        from skillbook.selection.query_tokens import BpeTokens

        if tables is None:
            raise Unsupported("no saved token tables")
        self._tokens = BpeTokens(tables)
        self._data = _map(spec["file"])
        self._rows, self._stride = int(spec["rows"]), int(spec["cols"])
        self.dim = int(spec["dim"])
        code = {"F16": "e", "F32": "f"}.get(spec["dtype"])
        if code is None:
            raise Unsupported("wordllama weights type")
        self._width = 2 if code == "e" else 4
        self._offset = int(spec["offset"])
        if self._offset + self._rows * self._stride * self._width > len(self._data):
            raise Unsupported("the wordllama weights file is cut short")
        # memoryview has no float16 format; struct has ("e"): one row per unpack.
        self._row = struct.Struct(f"<{self.dim}{code}")

    def embed(self, text: str, blas: Any) -> array[float]:
        ids = self._tokens.encode(text)
        if ids is None:
            raise Unsupported("the request needs the tokenizer library")
        dim, last, unpack = self.dim, self._rows - 1, self._row.unpack_from
        row_bytes, data, offset = self._stride * self._width, self._data, self._offset
        total = array("f", bytes(4 * dim))
        for t in ids:
            row = unpack(data, offset + min(max(t, 0), last) * row_bytes)
            # float32 + float32 rounded to float32 at each step, in token order.
            total = array("f", map(float.__add__, total, row))
        count = _f32(max(float(len(ids)), 1.0))
        return _unit(f32([v / count for v in total]))


class _Multilingual:
    """The multilingual encoder's vector for one request (see
    :class:`~skillbook.selection.multilingual.MultilingualEncoder`: the same layers,
    for one sentence, with no batching)."""

    def __init__(self, spec: Mapping[str, Any], tables: Any) -> None:
        import marshal

        from skillbook.selection.query_tokens import UnigramTokens

        if tables is None:
            raise Unsupported("no saved token tables")
        self._tokens = UnigramTokens(tables)
        self._data = data = _map(spec["file"])
        size = int.from_bytes(data[:8], "little")
        header = marshal.loads(data[8 : 8 + size])
        if header.get("layout") != spec["layout"] or header.get("size") != len(data):
            raise Unsupported("the mapped weights are not the saved layout")
        self.eps = float(header["eps"])
        self._arrays: dict[str, tuple[str, tuple[int, ...], int]] = header["arrays"]
        self._address: dict[str, int] = {}
        self._lists: dict[str, list[float]] = {}

    def is_word(self, word: str) -> bool:
        return self._tokens.piece_id("\u2581" + word) != self._tokens.unk

    def _at(self, name: str) -> int:
        """The address of a float32 array of the weights."""
        found = self._address.get(name)
        if found is None:
            from skillbook.selection._cblas import address

            dtype, _, offset = self._arrays[name]
            if dtype != "<f4":
                raise Unsupported(f"weights {name} of type {dtype}")
            found = self._address[name] = address(self._data, offset)
        return found

    def _list(self, name: str) -> list[float]:
        """A small float32 array of the weights as Python floats (cached)."""
        found = self._lists.get(name)
        if found is None:
            _dtype, shape, offset = self._arrays[name]
            count = 1
            for n in shape:
                count *= n
            view = memoryview(self._data)[offset : offset + 4 * count].cast("f")
            found = self._lists[name] = [float(v) for v in view.tolist()]
        return found

    def embed(self, text: str, blas: Any) -> array[float]:
        pieces = self._tokens.encode(text)
        if pieces is None:
            raise Unsupported("the request needs the sentencepiece library")
        if len(pieces) > PLAIN_PIECES:
            raise Unsupported("a long request: numpy encodes it faster")
        tokens = [_BOS, *pieces, _EOS] if pieces else [_BOS, _UNK, _EOS]
        return _unit(self._forward(tokens, blas))

    def _forward(self, tokens: list[int], blas: Any) -> array[float]:
        eps = self.eps
        ids = sorted(set(tokens))
        n, length = len(ids), len(tokens)
        row = {t: r for r, t in enumerate(ids)}
        # Per distinct id: the dequantized embedding, its projection and layer norm.
        table_dtype, table_shape, table_at = self._arrays["table"]
        if table_dtype != "|u1" or table_shape[1] != 512:
            raise Unsupported("the embedding table's layout")
        scale, lo = self._list("scale"), self._list("lo")
        emb: list[array[float]] = []
        for t in ids:
            if not 0 <= t < table_shape[0]:
                raise Unsupported("a token id outside the table")
            raw = self._data[table_at + 512 * t : table_at + 512 * (t + 1)]
            c = t % _CHUNKS
            s, b = scale[c], lo[c]
            emb.append(f32([v + b for v in f32([q * s for q in raw])]))
        flat = array("f")
        for e in emb:
            flat.extend(e)
        x = blas.matmul(flat, n, 512, self._at("proj_W"), 768)
        proj_b, ln_g, ln_b = self._list("proj_b"), self._list("ln_g_all"), self._list("ln_b_all")
        xs: list[list[float]] = []
        for r in range(n):
            v = [a + c for a, c in zip(x[768 * r : 768 * (r + 1)], proj_b, strict=True)]
            mean = math.fsum(v) / 768
            v = [a - mean for a in v]
            inv = 1.0 / math.sqrt(math.fsum(a * a for a in v) / 768 + eps)
            xs.append([a * inv * g + c for a, g, c in zip(v, ln_g, ln_b, strict=True)])
        zero = [0.0] * _CNN
        branches: list[list[list[float]]] = []
        for i, (order, left) in enumerate(_ORDERS):
            width = order * _CNN
            part = f32(a for r in range(n) for a in xs[r][i * _CNN : (i + 1) * _CNN])
            p = blas.matmul(part, n, _CNN, self._at(f"w1s.{i}"), width)
            b1, b2 = self._list(f"b1.{i}"), self._list(f"b2.{i}")

            def share(tok_at: int, k: int, p: array[float] = p, width: int = width) -> Any:
                if not 0 <= tok_at < length:
                    return zero
                r = row[tokens[tok_at]]
                return p[r * width + k * _CNN : r * width + (k + 1) * _CNN]

            h = array("f")
            hs: list[list[float]] = []
            for t in range(length):
                acc = list(b1)
                for k in range(order):
                    acc = [a + c for a, c in zip(acc, share(t - left + k, k), strict=True)]
                centre = xs[row[tokens[t]]][i * _CNN : (i + 1) * _CNN]
                v = [(a if a > 0.0 else 0.0) + c for a, c in zip(acc, centre, strict=True)]
                hs.append(v)
                h.extend(v)
            q = blas.matmul(h, length, _CNN, self._at(f"w2s.{i}"), width)
            out: list[list[float]] = []
            for t in range(length):
                acc = list(b2)
                for k in range(order):
                    at = t - left + k
                    if 0 <= at < length:
                        sl = q[at * width + k * _CNN : at * width + (k + 1) * _CNN]
                        acc = [a + c for a, c in zip(acc, sl, strict=True)]
                out.append([(a if a > 0.0 else 0.0) + c for a, c in zip(acc, hs[t], strict=True)])
            branches.append(out)
        # The sentence: each position's features layer-normed, summed over positions.
        summed = [0.0] * 1280
        for t in range(length):
            f = [*emb[row[tokens[t]]], *branches[0][t], *branches[1][t], *branches[2][t]]
            mean = math.fsum(f) / 1280
            f = [a - mean for a in f]
            inv = 1.0 / math.sqrt(math.fsum(a * a for a in f) / 1280 + eps)
            summed = [s + a * inv for s, a in zip(summed, f, strict=True)]
        gamma, beta = self._list("ln_g"), self._list("ln_b")
        summed32 = f32(s * gg + length * bb for s, gg, bb in zip(summed, gamma, beta, strict=True))
        mean_v = blas.vecmat(summed32, self._at("cnn_W"), 1280, 512)
        root = 1.0 / math.sqrt(length)
        cnn_b = self._list("cnn_b")
        mean32 = f32((a + length * c) * root for a, c in zip(mean_v, cnn_b, strict=True))
        y0 = f32(_relu(blas.vecmat(mean32, self._at("d0"), 512, 320)))
        y1 = blas.vecmat(mean32, self._at("p1"), 512, 320)
        y1b = blas.vecmat(y0, self._at("d1"), 320, 320)
        y1 = f32(_relu(a + c for a, c in zip(y1, y1b, strict=True)))
        y2 = f32(_relu(blas.vecmat(y1, self._at("d2"), 320, 512)))
        z = blas.vecmat(y1, self._at("p3"), 320, 512)
        z2 = blas.vecmat(y2, self._at("d3"), 512, 512)
        zs = [math.tanh(a + c) for a, c in zip(z, z2, strict=True)]
        inv = 1.0 / math.sqrt(max(math.fsum(a * a for a in zs), eps))
        return f32(a * inv for a in zs)


def _relu(values: Any) -> list[float]:
    return [v if v > 0.0 else 0.0 for v in values]


def _unit(vector: array[float]) -> array[float]:
    """``vector`` scaled to length 1 as :func:`~skillbook.selection.embedders.unit_rows`
    scales it (a zero vector stays zero): the float32 squares summed in numpy's
    pairwise order, the square root and the quotients rounded to float32."""
    norm = _f32(math.sqrt(_pairwise(f32([v * v for v in vector]))))
    if not norm > 0:
        return vector
    return f32([v / norm for v in vector])


def _pairwise(a: Sequence[float]) -> float:
    """numpy's float32 sum of a contiguous array (``np.add.reduce``): eight running
    sums over blocks of up to 128 values, halves above, each addition rounded."""
    n = len(a)
    if n < 8:
        total = 0.0
        for v in a:
            total = _f32(total + v)
        return total
    if n <= 128:
        r = f32(a[:8])
        tail = n - n % 8
        for i in range(8, tail, 8):
            r = f32(map(float.__add__, r, a[i : i + 8]))
        total = _f32(
            _f32(_f32(r[0] + r[1]) + _f32(r[2] + r[3]))
            + _f32(_f32(r[4] + r[5]) + _f32(r[6] + r[7]))
        )
        for i in range(tail, n):
            total = _f32(total + a[i])
        return total
    half = n // 2
    half -= half % 8
    return _f32(_pairwise(a[:half]) + _pairwise(a[half:]))


# --------------------------------------------------------------------------- the selector


class _Weights:
    """The ``mix`` weights the selector used (``Selector._weights()``, saved)."""

    def __init__(self, saved: Sequence[Any]) -> None:
        bm25_k, weights, adaptive = saved
        self.bm25_k = float(bm25_k)
        self.weights: dict[str, float] = {str(k): float(v) for k, v in weights.items()}
        self.adaptive = bool(adaptive)

    def per_channel(self, channels: Sequence[str], coverage: float) -> dict[str, float]:
        """As :func:`skillbook.selection.fusion.channel_weights`."""
        out = {name: self.weights.get(name, 0.0) for name in channels}
        if not self.adaptive or not out.get("multilingual"):
            return out
        share = min(1.0, max(0.0, coverage))
        for name in ("bm25", "bm25Body", "wordllama"):
            if out.get(name):
                lost = out[name] * (1.0 - share)
                out[name] -= lost
                out["multilingual"] += lost
        return out


def _squash(scores: Sequence[float], k: float) -> array[float]:
    """``s / (s + k)`` in float32, as :func:`skillbook.selection.fusion.squash`."""
    s = f32([v if v > 0.0 else 0.0 for v in scores])
    k32 = _f32(k)
    den = f32([v + k32 for v in s])
    return f32(map(float.__truediv__, s, den))


class PlainSelector:
    """A saved selector's ranking, computed without numpy (see the module docstring)."""

    def __init__(
        self,
        entry: Mapping[str, Any],
        skills: Sequence[Any],
        file: _File,
        models: Mapping[str, Any],
        ranker: Any,
    ) -> None:
        backend, fusion, top_k, _min_score, _pinned = entry["settings"]
        plain = entry.get("plain")
        if plain is None or fusion != "mix" or backend != "hybrid":
            raise Unsupported("only the default hybrid mix is ranked without numpy")
        self.backend, self.top_k = str(backend), int(top_k)
        self.skills = tuple(skills[i] for i in entry["skills"])
        self._triggered = {int(i): tuple(t) for i, t in entry["triggered"].items()}
        self.diagnostics = entry["diagnostics"]
        self._models = {name: models[ident] for name, ident in entry["embedders"].items()}
        if set(self._models) != {"wordllama", "multilingual"}:
            raise Unsupported("another set of embedding channels")
        self._vectors: dict[str, tuple[int, int, int]] = {}
        for name, at in entry["vectors"].items():
            dtype, shape, offset = file.where(at)
            if dtype != "<f4" or len(shape) != 2:
                raise Unsupported("vectors not saved as float32")
            from skillbook.selection._cblas import address

            self._vectors[name] = (address(file.data, offset), shape[0], shape[1])
        self._null: tuple[int, int, int] | None = None
        if entry["null"] is not None:
            dtype, shape, offset = file.where(entry["null"])
            if dtype != "<f4" or len(shape) != 2:
                raise Unsupported("null vectors not float32")
            from skillbook.selection._cblas import address

            self._null = (address(file.data, offset), shape[0], shape[1])
        rule = entry["null_rule"]
        self._null_rule = None if rule is None else (float(rule[0]), float(rule[1]))
        if entry["lexical"] is None:
            raise Unsupported("no lexical channels")
        self._lexical = _Lexical(entry["lexical"], file)
        self._weights = _Weights(plain["weights"])
        self._threshold = float(plain["threshold"])
        self._ranker = ranker if plain["learned"] else None
        self.channels: tuple[str, ...] = ("bm25", "bm25Body", *self._models)
        self._last: tuple[str, dict[str, Any]] | None = None

    # ------------------------------------------------------------------ signals

    def _request_vectors(self, text: str, blas: Any) -> dict[str, Any]:
        """Each model's vector for ``text`` (kept for the next selector of the process)."""
        out: dict[str, Any] = {}
        for name, model in self._models.items():
            memo = model.__dict__.setdefault("_memo", {})
            found = memo.get(text)
            if found is None:
                found = memo[text] = model.embed(text, blas)
            out[name] = found
        return out

    def select(self, request: str, *, top_k: int | None = None) -> Selection:
        """As :meth:`skillbook.selection.selector.Selector.select` without recent turns."""
        from skillbook.selection._cblas import blas as load_blas

        blas = load_blas()
        if blas is None:
            raise Unsupported("numpy's BLAS library was not found")
        lexical = self._lexical
        # As the selector does: lone surrogates reach no tokenizer.
        request = without_surrogates(request)
        fixes = lexical.corrections(request, self._models["multilingual"].is_word)
        text = " ".join([request, *fixes]) if fixes else request
        channels: dict[str, Sequence[float]] = dict(lexical.scores(text))
        vectors = self._request_vectors(text, blas)
        size = len(self.skills)
        for name in self._models:
            at, rows, cols = self._vectors[name]
            if rows != size or cols != len(vectors[name]):
                raise Unsupported("the saved vectors do not match the model")
            channels[name] = blas.matvec(at, rows, cols, vectors[name])
        null_cosine: float | None = None
        if self._null is not None:
            at, rows, cols = self._null
            null_cosine = max(blas.matvec(at, rows, cols, vectors["multilingual"]))
        coverage = lexical.coverage(text)
        weights = self._weights
        fused = self._mix(channels, coverage)
        tokens = words(request + " ")
        matches = {i: _match(t, tokens) for i, t in self._triggered.items()}
        boost = array("f", bytes(4 * size))
        boost32 = _f32(TRIGGER_BOOST)
        for i, m in matches.items():
            if m.boosted:
                boost[i] = boost32
        fused = f32(map(float.__add__, fused, boost))
        vetoed = {i for i, m in matches.items() if m.vetoed}
        limit = self.top_k if top_k is None else top_k
        depth = max(DEFAULT_DEPTH, limit)
        learned: dict[int, float] = {}
        if self._ranker is not None:
            order, learned = self._learned(
                channels, fused, boost, vetoed, depth, coverage, null_cosine, text, tokens
            )
        else:
            order = _top(fused, depth, vetoed)
        ranked = tuple(
            self._candidate(i, rank, fused, channels, matches.get(i), learned)
            for rank, i in enumerate(order, start=1)
        )
        floor = None
        if null_cosine is not None and self._null_rule is not None:
            weight, margin = self._null_rule
            floor = margin + weight * null_cosine
        threshold = self._threshold if floor is None else max(self._threshold, floor)
        del weights
        return Selection(
            query=request,
            backend=self.backend,
            threshold=threshold,
            ranked=ranked,
            selected=tuple(c for c in ranked[:limit] if c.score >= threshold),
            vetoed=tuple(self.skills[i].name for i in sorted(vetoed)),
            floor=floor,
        )

    def _mix(self, channels: Mapping[str, Sequence[float]], coverage: float) -> array[float]:
        """As :func:`skillbook.selection.fusion.mix`, every step rounded to float32."""
        per = self._weights.per_channel(list(channels), coverage)
        total: array[float] | None = None
        for name, scores in channels.items():
            w = per[name]
            if not w:
                continue
            part = _squash(scores, self._weights.bm25_k) if name.startswith("bm25") else scores
            w32 = _f32(w)
            weighted = f32([v * w32 for v in part])
            total = weighted if total is None else f32(map(float.__add__, total, weighted))
        return total if total is not None else array("f", bytes(4 * len(self.skills)))

    def _learned(
        self,
        channels: Mapping[str, Sequence[float]],
        fused: array[float],
        boost: array[float],
        vetoed: set[int],
        size: int,
        coverage: float,
        null_cosine: float | None,
        text: str,
        tokens: tuple[str, ...],
    ) -> tuple[list[int], dict[int, float]]:
        ranker = self._ranker
        assert ranker is not None  # only called with one
        n = max(ranker.depth, size)
        cand = _top(fused, n, vetoed)
        request_words = set((*words(text), *tokens))
        x = _features(
            channels,
            fused,
            boost,
            cand,
            coverage=coverage,
            null_cosine=null_cosine,
            words=len(tokens),
            name_hit=_name_hits([self.skills[i].name for i in cand], request_words),
            bm25_k=ranker.bm25_k,
        )
        p = [ranker.probability(row) for row in x]
        order = sorted(range(len(cand)), key=lambda j: -p[j])  # stable: ties keep mix order
        return [cand[j] for j in order][:size], dict(zip(cand, p, strict=True))

    def _candidate(
        self,
        i: int,
        rank: int,
        fused: array[float],
        channels: Mapping[str, Sequence[float]],
        m: Any,
        learned: Mapping[int, float],
    ) -> Candidate:
        parts: dict[str, float] = {}
        for name, scores in channels.items():
            parts[name] = float(scores[i])
            if name.startswith("bm25"):
                parts[name + "Squashed"] = _squash([scores[i]], self._weights.bm25_k)[0]
        if m is not None and m.boosted:
            parts["trigger"] = TRIGGER_BOOST
        if i in learned:
            parts["learned"] = learned[i]
        return Candidate(
            self.skills[i],
            rank,
            float(fused[i]),
            parts,
            m.reasons if m is not None else (),
        )


def _top(scores: Sequence[float], n: int, vetoed: set[int]) -> list[int]:
    """The ``n`` best positions not ``vetoed``, best first, ties by lower position
    (numpy's stable sort of the negated scores)."""
    import heapq

    best = heapq.nsmallest(n + len(vetoed), range(len(scores)), key=lambda i: (-scores[i], i))
    return [i for i in best if i not in vetoed][:n]


_NAME_SPLIT: Final = re.compile(r"[^\w]+|_", re.UNICODE)


def _name_hits(names: Sequence[str], have: set[str]) -> list[float]:
    """As :func:`skillbook.selection.ranker.name_hits`."""
    out: list[float] = []
    for name in names:
        parts = [p for p in _NAME_SPLIT.split(name.casefold()) if len(p) >= 3]
        out.append(sum(p in have for p in parts) / len(parts) if parts else 0.0)
    return out


def _above(sorted_scores: list[float], value: float) -> float:
    return float(len(sorted_scores) - bisect_right(sorted_scores, value))


def _stats(values: Sequence[float]) -> tuple[float, float, float]:
    """max, mean and (population) standard deviation, as numpy's in float64."""
    count = len(values)
    mean = math.fsum(values) / count
    var = math.fsum((v - mean) ** 2 for v in values) / count
    return max(values), mean, math.sqrt(var)


def _features(
    channels: Mapping[str, Sequence[float]],
    fused: Sequence[float],
    boost: Sequence[float],
    cand: list[int],
    *,
    coverage: float,
    null_cosine: float | None,
    words: int,
    name_hit: Sequence[float],
    bm25_k: float,
) -> list[list[float]]:
    """As :func:`skillbook.selection.ranker.features`, one list per candidate."""
    if not cand:
        return []
    vals: dict[str, list[float]] = {}
    for name in RANKER_CHANNELS:
        raw = channels[name]
        if name.startswith("bm25"):
            vals[name] = [max(v / (v + bm25_k), 0.0) for v in raw]
        else:
            vals[name] = [float(v) for v in raw]
    stats = {name: _stats(vals[name]) for name in RANKER_CHANNELS}
    ordered = {name: sorted(channels[name]) for name in RANKER_CHANNELS}
    mix = [float(v) for v in fused]
    mix_sorted = sorted(fused)
    best_mix = max(mix)
    first = min(range(len(mix)), key=lambda i: (-mix[i], i))
    second_val = max((mix[i] for i in range(len(mix)) if i != first), default=0.0)
    null = 0.0 if null_cosine is None else null_cosine
    log_words = math.log1p(words)
    rows: list[list[float]] = []
    for j, i in enumerate(cand):
        row = [vals[name][i] for name in RANKER_CHANNELS]
        row += [vals[name][i] - stats[name][0] for name in RANKER_CHANNELS]
        row += [math.log1p(_above(ordered[name], channels[name][i])) for name in RANKER_CHANNELS]
        row += [
            (vals[name][i] - stats[name][1]) / (stats[name][2] + 1e-6) for name in RANKER_CHANNELS
        ]
        c = mix[i]
        other = (second_val if i == first else best_mix) if len(mix) > 1 else 0.0
        row += [c, c - best_mix, math.log1p(_above(mix_sorted, fused[i])), c - other]
        row += [
            float(boost[i]),
            coverage,
            null,
            vals["multilingual"][i] - null,
            log_words,
            name_hit[j],
            coverage * vals["bm25"][i],
            coverage * vals["bm25Body"][i],
            coverage * vals["wordllama"][i],
            (1.0 - coverage) * vals["multilingual"][i],
        ]
        rows.append(row)
    return rows


#: The learned ranker's features, in order (:data:`skillbook.selection.ranker.FEATURES`;
#: a ``ranker.json`` fitted for others is not ranked here).
FEATURES: Final = (
    "bm25", "body", "wl", "ml", "bm25Gap", "bodyGap", "wlGap", "mlGap",
    "bm25Rank", "bodyRank", "wlRank", "mlRank", "bm25Z", "bodyZ", "wlZ", "mlZ",
    "mix", "mixGap", "mixRank", "mixLead", "trigger", "coverage", "null", "mlOverNull",
    "words", "nameHit", "cov*bm25", "cov*body", "cov*wl", "uncov*ml",
)  # fmt: skip


class _Ranker:
    """The learned ranker's parameters: the shipped ``ranker.json``, as
    :func:`skillbook.selection.ranker.default_ranker` reads it."""

    def __init__(self) -> None:
        import json
        import os

        with open(os.path.join(os.path.dirname(__file__), "ranker.json"), "rb") as fh:
            data = json.load(fh)
        if tuple(data.get("features", ())) != FEATURES:
            raise Unsupported("ranker.json has other features than the plain path computes")
        self.mean = tuple(float(v) for v in data["mean"])
        self.scale = tuple(float(v) for v in data["scale"])
        self.coef = tuple(float(v) for v in data["coef"])
        if not len(self.mean) == len(self.scale) == len(self.coef) == len(FEATURES):
            raise Unsupported("ranker.json's vectors")
        self.intercept, self.bm25_k = float(data["intercept"]), float(data["bm25K"])
        self.depth = int(data["depth"])

    def probability(self, row: Sequence[float]) -> float:
        z = math.fsum(
            (x - m) / s * c
            for x, m, s, c in zip(row, self.mean, self.scale, self.coef, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-(z + self.intercept)))


# --------------------------------------------------------------------------- loading


class Loaded:
    """A saved file read back for plain ranking: selectors by role, extra values."""

    def __init__(
        self,
        selectors: Mapping[str, PlainSelector],
        extra: Mapping[str, Any],
        groups: Mapping[str, tuple[Any, ...]],
    ) -> None:
        self.selectors = selectors
        self.extra = extra
        self.groups = groups


def load(header: Mapping[str, Any], data: Any, start: int) -> Loaded | None:
    """Plain selectors from a header :func:`skillbook.selection.saved.read_header`
    gave; None when anything is not reproduced here (rank with numpy then)."""
    try:
        return _load(header, data, start)
    except (Unsupported, ValueError, TypeError, KeyError, IndexError, AttributeError, OSError):
        # json's and marshal's errors are ValueErrors; a missing file an OSError.
        return None


def _load(header: Mapping[str, Any], data: Any, start: int) -> Loaded:
    from skillbook.selection._cblas import blas
    from skillbook.selection.saved import SavedSkill

    if blas() is None:
        raise Unsupported("numpy's BLAS library was not found")
    if not header.get("plain"):
        raise Unsupported("saved without the plain path's parameters")
    file = _File(header, data, start)
    skills = tuple(SavedSkill(str(n)) for n in header["names"])
    tables = {}
    for ident, at in header.get("tables", {}).items():
        dtype, shape, offset = file.where(at)
        if dtype != "|u1" or len(shape) != 1:
            raise Unsupported("not a byte array")
        tables[ident] = memoryview(data)[offset : offset + shape[0]]
    models: dict[str, Any] = {}
    for ident, spec in header["plain"].items():
        kind = spec["kind"]
        if kind == "wordllama":
            models[ident] = _WordLlama(spec, tables.get(ident))
        elif kind == "multilingual":
            models[ident] = _Multilingual(spec, tables.get(ident))
        else:
            raise Unsupported(f"model {kind}")
    ranker = _Ranker()
    selectors = {
        role: PlainSelector(entry, skills, file, models, ranker)
        for role, entry in header["roles"].items()
    }
    groups = {
        name: tuple(skills[int(i)] for i in positions)
        for name, positions in header["groups"].items()
    }
    return Loaded(selectors, header["extra"], groups)
