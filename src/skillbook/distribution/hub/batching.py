"""Query vectors of concurrent searches, made by one call of the embedding model.

Input: an :class:`~skillbook.selection.embedders.Embedder` and the query texts that
searches running at the same time are about to rank. Output: the same embedder for
the selector (:class:`BatchingEmbedder` stands in for it), whose ``embed([text])``
answers from the vectors made in one batch when :meth:`BatchingEmbedder.prepare`
made them.

A model call has a fixed cost well above its cost per text: the multilingual model
took 6.3 ms of CPU for one query and 1.7 ms per query in a batch of 8 on the 2-core
development machine. The registry ranks one query at a time (the selector is not
shared between rankings), so each search first asks for its query's vector here,
outside that lock: the first caller runs the model for every text waiting at that
moment and the others wait for it; whoever arrives while it runs is in the next
batch. A lone query is embedded at once, as before: there is no time window to wait
out, only the queue that forms while the model runs. A batch of one is the very call
the selector would have made; in a larger batch a vector may differ from its lone
value in the last bits of a float32 (the models pool padded batches).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Final

__all__ = ["MAX_BATCH", "BatchingEmbedder"]

#: Texts per model call at most (the multilingual model gains little beyond 16).
MAX_BATCH: Final = 16
#: Vectors kept for the selector's call (made moments before it; a bound, not a cache).
KEEP: Final = 256


class BatchingEmbedder:
    """An embedder whose query vectors can be made in batches ahead of the selector's call."""

    def __init__(self, inner: Any, *, max_batch: int = MAX_BATCH, keep: int = KEEP) -> None:
        self.inner = inner
        self._max_batch = max(1, max_batch)
        self._keep = max(1, keep)
        self._cond = threading.Condition()
        self._waiting: list[str] = []
        #: The texts of the batch being embedded now.
        self._running: frozenset[str] | None = None
        self._ready: OrderedDict[str, Any] = OrderedDict()
        #: Model calls made by :meth:`prepare`, and the texts they embedded (for tests).
        self.calls = 0
        self.texts = 0

    def __getattr__(self, name: str) -> Any:
        # The selector and the index ask for optional capabilities (``is_word``,
        # ``embed_documents``, ``query_tables``) by name: the inner model's answer.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def id(self) -> str:
        return str(self.inner.id)

    def embed(self, texts: Sequence[str]) -> Any:
        """The inner model's vectors; a query :meth:`prepare` made is not made again."""
        if len(texts) == 1:
            with self._cond:
                row = self._ready.get(texts[0])
            if row is not None:
                return row[None, :]
        return self.inner.embed(texts)

    def prepare(self, text: str) -> None:
        """Make ``text``'s vector, in one model call with the texts others are preparing.

        Returns when the vector is ready, or when the call that was to make it failed:
        never raises (the selector's own call then meets the error and reports it).
        """
        queued = False
        while True:
            with self._cond:
                while True:
                    if text in self._ready:
                        return
                    running = self._running
                    if (
                        queued
                        and text not in self._waiting
                        and (running is None or text not in running)
                    ):
                        return  # its batch failed
                    if not queued:
                        queued = True
                        if text not in self._waiting and (running is None or text not in running):
                            self._waiting.append(text)
                    if running is None:
                        batch = list(dict.fromkeys(self._waiting[: self._max_batch]))
                        del self._waiting[: self._max_batch]
                        self._running = frozenset(batch)
                        break
                    self._cond.wait()
            vectors = None
            try:
                vectors = self.inner.embed(batch)
            except Exception:
                # Only ahead of time: each query's own call meets the error and reports it.
                pass
            finally:
                with self._cond:
                    if vectors is not None:
                        self.calls += 1
                        self.texts += len(batch)
                        for one, vector in zip(batch, vectors, strict=True):
                            self._ready[one] = vector.copy()
                            self._ready.move_to_end(one)
                        while len(self._ready) > self._keep:
                            self._ready.popitem(last=False)
                    self._running = None
                    self._cond.notify_all()
