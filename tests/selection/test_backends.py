"""Embedding backends (shipped wordllama, model2vec built from it, a 127.0.0.1
``/embeddings`` server) and the on-disk index."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skillbook.selection import EmbeddingError
from skillbook.selection.embedders import Model2VecEmbedder, WordLlamaEmbedder
from skillbook.selection.http_embedder import HttpEmbedder
from skillbook.selection.index import BASE_NAME, MAX_SEGMENTS, EmbeddingIndex


@pytest.fixture(scope="module")
def wordllama() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


def test_wordllama_unit_vectors_and_no_root_logger_change(wordllama: WordLlamaEmbedder) -> None:
    before = list(logging.getLogger().handlers)
    WordLlamaEmbedder()
    assert logging.getLogger().handlers == before
    v = wordllama.embed(["merge two pdf files", "combine PDF documents", "weather in Paris"])
    assert v.shape == (3, 256) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]


def test_model2vec_model_from_disk(tmp_path: Path, wordllama: WordLlamaEmbedder) -> None:
    from model2vec import StaticModel

    inner: Any = wordllama
    table = np.asarray(inner._table, dtype=np.float32)
    StaticModel(table, inner._tokenizer, normalize=True).save_pretrained(str(tmp_path / "m"))
    m2v = Model2VecEmbedder(tmp_path / "m")
    v = m2v.embed(["merge two pdf files", "combine PDF documents", "weather in Paris"])
    assert v.shape == (3, 256) and v[0] @ v[1] > v[0] @ v[2]
    assert m2v.id.startswith("model2vec-") and "m-" in m2v.id


class _Embeddings:
    """A real HTTP server on 127.0.0.1 with OpenAI's ``/v1/embeddings`` shape."""

    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.bodies: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.bodies.append(body)
                owner.auth.append(self.headers.get("Authorization"))
                out: dict[str, Any]
                if owner.mode == "error":
                    out, status = {"error": {"message": "model not found"}}, 404
                elif owner.mode == "short":
                    out, status = {"data": []}, 200
                else:  # answers in reverse order: the client must sort by index
                    data = [
                        {"index": i, "embedding": [float(len(t)), 1.0, float(i)]}
                        for i, t in enumerate(body["input"])
                    ]
                    out, status = {"data": data[::-1]}, 200
                raw = json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def server() -> Iterator[_Embeddings]:
    s = _Embeddings()
    yield s
    s.stop()


def test_http_embedder_batches_orders_and_authenticates(server: _Embeddings) -> None:
    emb = HttpEmbedder(server.url, "text-embed", api_key="sk-test", batch=2)
    v = emb.embed(["a", "bbb", "cc"])
    assert [b["input"] for b in server.bodies] == [["a", "bbb"], ["cc"]]
    assert server.bodies[0]["model"] == "text-embed" and server.auth[0] == "Bearer sk-test"
    expected = np.array([[1, 1, 0], [3, 1, 1], [2, 1, 0]], dtype=np.float32)
    assert np.allclose(v, expected / np.linalg.norm(expected, axis=1, keepdims=True))
    emb.close()


@pytest.mark.parametrize(
    ("mode", "message"), [("error", "HTTP 404: model not found"), ("short", "asked for 1")]
)
def test_http_embedder_errors(mode: str, message: str) -> None:
    s = _Embeddings(mode)
    emb = HttpEmbedder(s.url, "m")
    try:
        with pytest.raises(EmbeddingError, match=message):
            emb.embed(["x"])
    finally:
        emb.close()
        s.stop()


def test_http_embedder_unreachable() -> None:
    emb = HttpEmbedder("http://127.0.0.1:9/v1", "m", timeout_s=2)
    with pytest.raises(EmbeddingError, match="ConnectError"):
        emb.embed(["x"])
    emb.close()


def _keys(texts: list[str]) -> list[str]:
    import hashlib

    return [hashlib.sha256(t.encode()).hexdigest() for t in texts]


def test_index_persists_reuses_and_updates_incrementally(
    tmp_path: Path, wordllama: WordLlamaEmbedder
) -> None:
    texts = ["merge pdf", "weather forecast", "trello cards"]
    first = EmbeddingIndex(wordllama, tmp_path)
    v1 = first.vectors(_keys(texts), texts)
    assert (first.computed, first.reused) == (3, 0)
    first.flush()
    again = EmbeddingIndex(wordllama, tmp_path)  # a new process: everything from disk
    v2 = again.vectors(_keys(texts), texts)
    assert (again.computed, again.reused) == (0, 3) and np.array_equal(v1, v2)
    changed = [*texts[:2], "trello boards and lists"]
    v3 = again.vectors(_keys(changed), changed)
    again.flush()
    assert (again.computed, again.reused) == (1, 2) and np.array_equal(v3[:2], v1[:2])
    assert not any(p.name.startswith(".tmp-") for p in again.folder.iterdir())  # type: ignore[union-attr]


def test_index_compacts_segments(tmp_path: Path, wordllama: WordLlamaEmbedder) -> None:
    index = EmbeddingIndex(wordllama, tmp_path)
    for i in range(MAX_SEGMENTS + 1):
        index.vectors(_keys([f"text {i}"]), [f"text {i}"])
    index.flush()
    assert index.folder is not None and (index.folder / BASE_NAME).is_file()
    assert len(list(index.folder.glob("seg-*.npz"))) == 0
    fresh = EmbeddingIndex(wordllama, tmp_path)
    assert len(fresh) == MAX_SEGMENTS + 1


def test_index_corrupt_file_is_reported_and_recomputed(
    tmp_path: Path, wordllama: WordLlamaEmbedder
) -> None:
    index = EmbeddingIndex(wordllama, tmp_path)
    index.vectors(_keys(["a b c"]), ["a b c"])
    index.flush()
    assert index.folder is not None
    for seg in index.folder.glob("seg-*.npz"):
        seg.write_bytes(b"not a zip file")
    broken = EmbeddingIndex(wordllama, tmp_path)
    assert [d.code for d in broken.diagnostics] == ["selection.index-error"]
    broken.vectors(_keys(["a b c"]), ["a b c"])
    assert broken.computed == 1
