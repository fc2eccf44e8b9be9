"""Query vectors of concurrent searches made in one model call (hub/batching.py)."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from skillbook.distribution.hub.batching import BatchingEmbedder
from skillbook.selection.embedders import DocumentEmbedder, Embedder


class StandIn:
    """A deterministic model that records its calls; the first call may be held."""

    id = "stand-in/1"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.hold = threading.Event()
        self.hold.set()
        self.entered = threading.Event()
        self.fail = False

    def embed(self, texts: Sequence[str]) -> Any:
        self.calls.append(list(texts))
        self.entered.set()
        self.hold.wait()
        if self.fail:
            raise RuntimeError("model down")
        return np.array(
            [[zlib.crc32(t.encode()) % 97, len(t), 1.0] for t in texts], dtype=np.float32
        )

    def embed_documents(self, texts: Sequence[str]) -> Any:
        return self.embed(texts)


def _queued(batcher: BatchingEmbedder, n: int) -> None:
    """Wait until ``n`` texts wait behind the running call (a condition, not a delay)."""
    with batcher._cond:
        batcher._cond.wait_for(lambda: len(batcher._waiting) >= n, timeout=60)
    assert len(batcher._waiting) >= n


def test_a_lone_query_is_embedded_at_once_and_not_again() -> None:
    model = StandIn()
    batcher = BatchingEmbedder(model)
    batcher.prepare("merge pdf")
    assert model.calls == [["merge pdf"]]
    vector = batcher.embed(["merge pdf"])
    assert model.calls == [["merge pdf"]]  # the selector's call is answered from it
    assert np.array_equal(vector, StandIn().embed(["merge pdf"]))
    # Anything else goes to the model as it is.
    batcher.embed(["a", "b"])
    assert model.calls[-1] == ["a", "b"]


def test_queries_that_arrive_while_the_model_runs_share_its_next_call() -> None:
    model = StandIn()
    batcher = BatchingEmbedder(model, max_batch=16)
    model.hold.clear()
    texts = [f"query {i}" for i in range(6)]
    first = threading.Thread(target=batcher.prepare, args=(texts[0],))
    first.start()
    assert model.entered.wait(60)
    others = [threading.Thread(target=batcher.prepare, args=(t,)) for t in texts[1:]]
    for t in others:
        t.start()
    # Each waits behind the running call (the condition's lock is released meanwhile).
    with batcher._cond:
        batcher._cond.wait_for(lambda: len(batcher._waiting) == 5, timeout=60)
    model.hold.set()
    for t in [first, *others]:
        t.join(60)
    assert model.calls[0] == [texts[0]]
    assert sorted(model.calls[1]) == sorted(texts[1:]) and len(model.calls) == 2
    assert batcher.calls == 2 and batcher.texts == 6
    lone = StandIn()
    for text in texts:
        assert np.array_equal(batcher.embed([text]), lone.embed([text]))
    assert len(model.calls) == 2


def test_a_failed_call_leaves_each_query_to_the_selectors_own_call() -> None:
    model = StandIn()
    batcher = BatchingEmbedder(model)
    model.hold.clear()
    model.fail = True
    first = threading.Thread(target=batcher.prepare, args=("one",))
    first.start()
    assert model.entered.wait(60)
    waiter = threading.Thread(target=batcher.prepare, args=("two",))
    waiter.start()
    _queued(batcher, 1)
    model.hold.set()
    # Both return (the second's own batch fails too); nothing was kept.
    first.join(60)
    waiter.join(60)
    assert not first.is_alive() and not waiter.is_alive()
    assert batcher.calls == 0 and len(model.calls) == 2
    # The selector's call meets the error itself, and succeeds once the model is back.
    with pytest.raises(RuntimeError, match="model down"):
        batcher.embed(["two"])
    model.fail = False
    assert np.array_equal(batcher.embed(["two"]), StandIn().embed(["two"]))


def test_it_stands_in_for_the_model_where_the_selector_asks() -> None:
    model = StandIn()
    batcher = BatchingEmbedder(model)
    assert isinstance(batcher, Embedder) and isinstance(batcher, DocumentEmbedder)
    assert batcher.id == "stand-in/1"
    assert np.array_equal(batcher.embed_documents(["x"]), model.embed(["x"]))
    with pytest.raises(AttributeError):
        _ = batcher.no_such_capability
