"""An OpenAI-compatible ``/embeddings`` endpoint as an embedding backend.

Input: the endpoint (``https://host/v1`` or the full ``…/embeddings`` URL), a model
name and optionally a key. Output: unit vectors, in the order of the texts (the
response's ``index`` fields are honoured, whatever order the server answers in).
Texts go in batches of :data:`DEFAULT_BATCH`. A refused or malformed answer raises
:class:`EmbeddingError` with the server's own message, never a half-filled matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from skillbook.selection import EmbeddingError
from skillbook.selection._deps import require
from skillbook.selection.embedders import unit_rows

if TYPE_CHECKING:
    from skillbook.selection.embedders import Vectors

__all__ = ["DEFAULT_BATCH", "HttpEmbedder"]

DEFAULT_BATCH: Final = 128
DEFAULT_TIMEOUT_S: Final = 30.0


def embeddings_url(url: str) -> str:
    """``https://host/v1`` → ``https://host/v1/embeddings``; a full URL is kept."""
    base = url.rstrip("/")
    return base if base.endswith("/embeddings") else base + "/embeddings"


class HttpEmbedder:
    """``POST {url}/embeddings`` with ``{"model", "input"}`` (the OpenAI API shape)."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        batch: int = DEFAULT_BATCH,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        require("httpx", "The OpenAI-compatible embedding backend")
        import httpx

        self.url = embeddings_url(url)
        self.model = model
        self.batch = max(1, batch)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout_s)

    @property
    def id(self) -> str:
        return f"openai-embeddings-{self.url}-{self.model}"

    def close(self) -> None:
        self._client.close()

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch):
            rows.extend(self._call(list(texts[start : start + self.batch])))
        if not rows:
            return unit_rows([[0.0]])[:0]
        return unit_rows(rows)

    def _call(self, chunk: list[str]) -> list[list[float]]:
        import httpx

        try:
            reply = self._client.post(self.url, json={"model": self.model, "input": chunk})
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"{self.url}: {type(exc).__name__}: {exc}") from exc
        if reply.status_code != 200:
            raise EmbeddingError(f"{self.url}: HTTP {reply.status_code}: {_message(reply)}")
        try:
            data = reply.json()["data"]
            ordered = sorted(data, key=lambda item: int(item.get("index", 0)))
            vectors = [[float(x) for x in item["embedding"]] for item in ordered]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbeddingError(f"{self.url}: not an embeddings response ({exc})") from exc
        if len(vectors) != len(chunk) or len({len(v) for v in vectors}) > 1:
            raise EmbeddingError(
                f"{self.url}: asked for {len(chunk)} embeddings, got {len(vectors)} "
                "(or rows of different lengths)"
            )
        return vectors


def _message(reply: Any) -> str:
    try:
        body = reply.json()
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])[:300]
    except ValueError:
        pass
    return str(reply.text)[:300]
