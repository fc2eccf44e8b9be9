"""The embedding index: one vector per skill text, cached on disk by content hash.

Input: an :class:`~skillbook.selection.embedders.Embedder` and the texts to rank
(keyed by :attr:`SkillDocument.key <skillbook.selection.documents.SkillDocument.key>`,
the sha256 of the text). Output: the matrix of their vectors, in the order asked,
computing only the vectors of texts never seen before (with the embedder's
``embed_documents`` when it reads skill texts differently from requests).

On disk (``<dir>/<embedder id>/``) the index is a base file plus small segment
files, each an uncompressed ``.npz`` of ``keys`` (raw 32-byte digests) and
``vectors`` (float16: half the bytes, and cosines stay within 1e-3). New vectors
go to a new segment, so updating one skill writes a few kilobytes, not the whole
index; when segments pile up (:data:`MAX_SEGMENTS`) they are merged into a new base.
Every file is written to a temporary name, flushed and renamed into place, so a
``kill -9`` leaves the old state or the new one; a merge deletes only the segments it
read. A file that cannot be read is reported (``selection.index-error``) and its
vectors are computed again; nothing is ever lost but cache.

Writes run on one background thread per index, in order, so an update returns as
soon as its vectors are in memory; :meth:`EmbeddingIndex.flush` waits for them (the
thread is not a daemon: a normal exit also waits).

Without a directory the index lives in memory only.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from skillbook import diagnostics as diag
from skillbook.base.atomic import atomic_writer
from skillbook.diagnostics import Diagnostic
from skillbook.selection.embedders import DocumentEmbedder

if TYPE_CHECKING:
    from skillbook.selection.embedders import Embedder, Vectors

__all__ = ["MAX_SEGMENTS", "EmbeddingIndex"]

#: Segments kept before they are merged into the base file.
MAX_SEGMENTS: Final = 16
BASE_NAME: Final = "base.npz"
_SEGMENT_RE: Final = re.compile(r"^seg-[0-9a-f]{16}\.npz$")
_UNSAFE_RE: Final = re.compile(r"[^A-Za-z0-9._-]+")


def _digest(key: str) -> bytes:
    return bytes.fromhex(key)


class EmbeddingIndex:
    """Vectors of one embedder, in memory and (with ``directory``) on disk."""

    def __init__(self, embedder: Embedder, directory: Path | None = None) -> None:
        import numpy

        self._np = numpy
        self.embedder = embedder
        self.folder = (
            directory / _UNSAFE_RE.sub("_", embedder.id)[:150] if directory is not None else None
        )
        self._rows: dict[bytes, int] = {}
        self._chunks: list[Any] = []
        self._matrix: Any = None
        self._size = 0
        self.diagnostics: list[Diagnostic] = []
        #: What the last :meth:`vectors` call did: texts embedded now, and read from cache.
        self.computed = 0
        self.reused = 0
        self._segments_read: list[Path] = []
        self._writer: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None
        self._write_lock = threading.Lock()
        if self.folder is not None:
            self._load()

    # ------------------------------------------------------------------ reading

    def _load(self) -> None:
        assert self.folder is not None
        if not self.folder.is_dir():
            return
        files = [self.folder / BASE_NAME] if (self.folder / BASE_NAME).is_file() else []
        segments = sorted(p for p in self.folder.iterdir() if _SEGMENT_RE.match(p.name))
        for path in [*files, *segments]:
            loaded = self._read(path)
            if loaded is not None:
                self._add(*loaded)
                if path.name != BASE_NAME:
                    self._segments_read.append(path)

    def _read(self, path: Path) -> tuple[Any, Any] | None:
        np = self._np
        try:
            with np.load(path, allow_pickle=False) as data:
                keys, vectors = data["keys"], data["vectors"]
            if keys.ndim != 2 or keys.shape[1] != 32 or vectors.shape[0] != keys.shape[0]:
                raise ValueError(f"keys {keys.shape} and vectors {vectors.shape} do not match")
            return keys, vectors
        except (OSError, ValueError, KeyError, EOFError) as exc:
            self.diagnostics.append(
                diag.warning(
                    "selection.index-error",
                    f"The embedding index file cannot be read ({exc}); its vectors are "
                    "computed again. Delete the file if this repeats.",
                    path=path,
                )
            )
            return None

    def _add(self, keys: Any, vectors: Any) -> None:
        np = self._np
        with self._write_lock:  # the writer thread copies rows and chunks while merging
            if self._chunks and vectors.shape[1] != self._chunks[0].shape[1]:
                return  # a file from another model version under the same id: ignore it
            fresh = [i for i, k in enumerate(keys) if bytes(k) not in self._rows]
            if not fresh:
                return
            for offset, i in enumerate(fresh):
                self._rows[bytes(keys[i])] = self._size + offset
            self._chunks.append(np.asarray(vectors[fresh], dtype=np.float32))
            self._size += len(fresh)
            self._matrix = None

    def __len__(self) -> int:
        return self._size

    def _all(self) -> Any:
        with self._write_lock:
            if self._matrix is None:
                np = self._np
                self._matrix = np.concatenate(self._chunks) if self._chunks else None
                self._chunks = [self._matrix] if self._matrix is not None else []
            return self._matrix

    # ------------------------------------------------------------------ the API

    def vectors(self, keys: Sequence[str], texts: Sequence[str]) -> Vectors:
        """The vectors of ``texts`` (named by ``keys``), embedding only unseen ones."""
        np = self._np
        digests = [_digest(k) for k in keys]
        missing: dict[bytes, str] = {}
        for d, t in zip(digests, texts, strict=True):
            if d not in self._rows:
                missing.setdefault(d, t)
        self.computed, self.reused = len(missing), len(digests) - len(missing)
        if missing:
            # Rounded as stored, so a fresh run ranks exactly as a cached one.
            embed = (
                self.embedder.embed_documents
                if isinstance(self.embedder, DocumentEmbedder)
                else self.embedder.embed
            )
            new = embed(list(missing.values())).astype(np.float16)
            new_keys = np.frombuffer(b"".join(missing), dtype=np.uint8).reshape(-1, 32)
            self._add(new_keys, new)
            self._persist(new_keys, new)
            if len(missing) == len(digests) == len(set(digests)):
                # Only new texts (an incremental update): no need to touch the whole matrix.
                order = {d: i for i, d in enumerate(missing)}
                return np.ascontiguousarray(new[[order[d] for d in digests]], dtype=np.float32)  # type: ignore[no-any-return]
        matrix = self._all()
        if matrix is None:
            return np.zeros((0, 0), dtype=np.float32)  # type: ignore[no-any-return]
        return np.ascontiguousarray(matrix[[self._rows[d] for d in digests]])  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ writing

    def _persist(self, keys: Any, vectors: Any) -> None:
        if self.folder is None:
            return
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillbook-index")
        self._pending = self._writer.submit(self._write_segment, keys, vectors)

    def flush(self) -> None:
        """Wait until every vector computed so far is on disk."""
        pending = self._pending
        if pending is not None:
            pending.result()

    def _write_segment(self, keys: Any, vectors: Any) -> None:
        assert self.folder is not None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            name = f"seg-{os.urandom(8).hex()}.npz"
            self._write(self.folder / name, keys, vectors)
            with self._write_lock:
                self._segments_read.append(self.folder / name)
                merge = len(self._segments_read) > MAX_SEGMENTS
            if merge:
                self.compact()
        except OSError as exc:
            self.diagnostics.append(
                diag.warning(
                    "selection.index-error",
                    f"The embedding index cannot be written ({exc.strerror or exc}); "
                    "vectors are kept in memory for this run only.",
                    path=self.folder,
                )
            )

    def compact(self) -> None:
        """Merge every segment read or written into a new base file."""
        if self.folder is None or self._size == 0:
            return
        np = self._np
        with self._write_lock:
            rows = dict(self._rows)
            chunks = list(self._chunks)
            merged = list(self._segments_read)
        matrix = np.concatenate(chunks) if len(chunks) > 1 else chunks[0]
        keys = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(-1, 32)
        self._write(self.folder / BASE_NAME, keys, matrix[list(rows.values())])
        for path in merged:
            path.unlink(missing_ok=True)
        with self._write_lock:
            self._segments_read = [p for p in self._segments_read if p not in merged]

    def _write(self, path: Path, keys: Any, vectors: Any) -> None:
        np = self._np
        with atomic_writer(path, mode=0o600, prefix=".tmp-", suffix=".npz", fsync=True) as fh:
            np.savez(fh, keys=keys, vectors=np.asarray(vectors, dtype=np.float16))
