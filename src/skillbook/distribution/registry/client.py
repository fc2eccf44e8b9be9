"""HTTP to a ClawHub-compatible registry: JSON requests and downloads, with retries.

Input: an :class:`~skillbook.distribution.registry.endpoint.Endpoint`, a route and query. Output:
the parsed JSON, or the downloaded bytes streamed into a file (with a progress
report); errors are :class:`~skillbook.distribution.registry.RegistryError` values with
OpenClaw's wording, naming the registry actually asked
(``/api/v1/search on https://hub.example.com failed (500): boom``, ``… on clawhub.ai
(default) …``; OpenClaw says ``ClawHub`` whichever registry it asked).

Retries are :mod:`skillbook.distribution.http`'s rule (clawhub-api.md §7, the
``clawhub`` CLI's): 429, any 5xx but 501, timeouts and connection errors are retried;
other 4xx fail at once; the wait is the server's ``Retry-After`` or rate-limit reset,
else an exponential backoff with jitter. Each wait is announced through ``on_wait`` (the CLI prints
it) with what the rate-limit headers said. A wait longer than ``max_wait`` is not
sat out: the error says when to try again. The token goes only to the registry's own
origin (a download URL elsewhere gets none); proxies come from the environment as
usual for httpx.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, Final
from urllib.parse import urlsplit

from skillbook.distribution.http import (
    RetryPolicy,
    backoff,
    header_float,
    new_http,
    rate_note,
    reason,
    retryable_error,
    retryable_status,
    server_wait,
    stream_capped,
)
from skillbook.distribution.progress import NoProgress, Progress
from skillbook.distribution.registry import RegistryError, RegistryNotFound, RegistryUnavailable
from skillbook.distribution.registry.endpoint import Endpoint

if TYPE_CHECKING:
    import httpx

__all__ = ["MAX_DOWNLOAD_BYTES", "MAX_JSON_BYTES", "Downloaded", "RegistryClient"]

MAX_JSON_BYTES: Final = 16 * 1024 * 1024
MAX_DOWNLOAD_BYTES: Final = 256 * 1024 * 1024
_SNIPPET: Final = 400


@dataclass(frozen=True, slots=True)
class Downloaded:
    size: int
    sha256: str
    url: str


class RegistryClient:
    """One registry's HTTP client; use as a context manager or call :meth:`close`."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        retry: RetryPolicy | None = None,
        on_wait: Callable[[str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.retry = retry or RetryPolicy()
        self._on_wait = on_wait
        self._sleep = sleep
        #: ``http``: a connection pool shared by the caller (and closed by it); making
        #: an ``httpx.Client`` costs about 30 ms (its TLS context).
        self._owned = http is None
        self._http = http if http is not None else new_http(transport)

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owned:
            self._http.close()

    def url(self, route: str) -> str:
        """The base with its path prefix kept, as OpenClaw 2026.9 and the CLI join them."""
        return f"{self.endpoint.base_url}/{route.lstrip('/')}"

    def _headers(self, url: str, accept: str | None, *, auth: bool = True) -> dict[str, str]:
        headers = {"Accept": accept} if accept else {}
        same = _origin(url) == _origin(self.endpoint.base_url)
        if self.endpoint.token and same and auth:
            headers["Authorization"] = f"Bearer {self.endpoint.token}"
        return headers

    def get_json(
        self,
        route: str,
        params: Mapping[str, str] | None = None,
        *,
        also: frozenset[int] = frozenset(),
    ) -> Any:
        """GET JSON; ``also``: error statuses whose JSON body is the answer (``/install``'s
        structured refusals)."""
        return self._json(route, params, None, also)

    def post_json(self, route: str, body: Any) -> Any:
        """POST a JSON body (retried like a GET: the routes skillbook posts to are reads)."""
        return self._json(route, None, body, frozenset())

    def _json(
        self, route: str, params: Mapping[str, str] | None, payload: Any, also: frozenset[int]
    ) -> Any:
        url = self.url(route)
        response = self._send(
            url, route, params, accept="application/json", payload=payload, also=also
        )
        try:
            body = response.read()
            if len(body) > MAX_JSON_BYTES:
                raise RegistryError(
                    "registry.bad-response", f"{self._on(route)} response too large"
                )
            return json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise RegistryError(
                "registry.bad-response", f"{self._on(route)} returned malformed JSON"
            ) from None
        finally:
            response.close()

    def download(
        self,
        url_or_route: str,
        params: Mapping[str, str] | None,
        sink: BinaryIO,
        *,
        label: str,
        max_bytes: int = MAX_DOWNLOAD_BYTES,
        progress: Progress | None = None,
        auth: bool = True,
    ) -> Downloaded:
        """Stream a body into ``sink`` (retried from the start on a retryable failure);
        ``auth=False``: never send the token (GitHub hand-offs)."""
        absolute = "://" in url_or_route
        url = url_or_route if absolute else self.url(url_or_route)
        route = urlsplit(url).path
        report = progress or NoProgress()

        def too_large() -> RegistryError:
            return RegistryError(
                "registry.download-too-large",
                f"Download refused: {label} is more than {max_bytes} bytes",
            )

        for attempt in range(1, self.retry.attempts + 1):
            response = self._send(url, route, params, accept=None, auth=auth)
            try:
                announced = header_float(response.headers, "content-length")
                if announced is not None and announced > max_bytes:
                    raise RegistryError(
                        "registry.download-too-large",
                        f"Download refused: {label} is {int(announced)} bytes, "
                        f"more than the limit of {max_bytes} bytes",
                    )
                sink.seek(0)
                sink.truncate()
                report.start(f"Downloading {label}", int(announced) if announced else None)
                try:
                    size, digest = stream_capped(
                        response.iter_bytes(),
                        sink,
                        max_bytes=max_bytes,
                        too_large=too_large,
                        progress=report,
                    )
                finally:
                    report.finish()
                return Downloaded(size, digest, str(response.url))
            except Exception as exc:
                if not retryable_error(exc):
                    raise
                if attempt == self.retry.attempts:
                    raise RegistryUnavailable(
                        "registry.unreachable", f"{self._on(route)} failed: {reason(exc)}"
                    ) from None
                self._wait(backoff(self.retry, attempt), f"{label}: {reason(exc)}", attempt)
            finally:
                response.close()
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(
        self,
        url: str,
        route: str,
        params: Mapping[str, str] | None,
        *,
        accept: str | None,
        payload: Any = None,
        also: frozenset[int] = frozenset(),
        auth: bool = True,
    ) -> httpx.Response:
        attempts = self.retry.attempts
        for attempt in range(1, attempts + 1):
            try:
                request = self._http.build_request(
                    "GET" if payload is None else "POST",
                    url,
                    params=dict(params) if params else None,
                    headers=self._headers(url, accept, auth=auth),
                    json=payload,
                    timeout=self.retry.timeout,
                )
                response = self._http.send(request, stream=True)
            except Exception as exc:
                if not retryable_error(exc):
                    raise
                if attempt == attempts:
                    raise RegistryUnavailable(
                        "registry.unreachable", f"{self._on(route)} failed: {reason(exc)}"
                    ) from None
                self._wait(backoff(self.retry, attempt), reason(exc), attempt)
                continue
            status = response.status_code
            if response.is_success or status in also:
                return response
            body = _snippet(response)
            response.close()
            wait = server_wait(status, response.headers)
            note = rate_note(response.headers)
            if retryable_status(status) and attempt < attempts:
                delay = wait if wait is not None else backoff(self.retry, attempt)
                if delay <= self.retry.max_wait:
                    what = "rate limited" if status == 429 else f"HTTP {status}"
                    self._wait(delay, f"{what}{f' ({note})' if note else ''}", attempt)
                    continue
            raise _status_error(self._on(route), status, body, wait, note)
        raise AssertionError("unreachable")  # pragma: no cover

    def _on(self, route: str) -> str:
        """``<route> on <registry>``: errors name the registry asked, never "ClawHub"."""
        return f"{route} on {self.endpoint.label}"

    def _wait(self, seconds: float, why: str, attempt: int) -> None:
        if self._on_wait is not None:
            host = urlsplit(self.endpoint.base_url).netloc
            self._on_wait(
                f"{host}: {why}; retrying in {seconds:.1f}s "
                f"(attempt {attempt + 1} of {self.retry.attempts})"
            )
        self._sleep(seconds)


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def _snippet(response: httpx.Response) -> str:
    try:
        raw = response.read()[: 8 * 1024]
    except Exception:  # a broken body must not hide the status
        return ""
    text = raw.decode("utf-8", "replace").strip()
    return text[:_SNIPPET] or response.reason_phrase


def _status_error(
    what: str, status: int, body: str, wait: float | None, note: str
) -> RegistryError:
    message = f"{what} failed ({status}): {body}"
    if status == 429:
        extra = ", ".join(b for b in (f"retry in {round(wait)}s" if wait else "", note) if b)
        message += f" ({extra})" if extra else ""
        return RegistryUnavailable(
            "registry.rate-limited", message, status=status, retry_after=wait
        )
    if status == 404:
        return RegistryNotFound("registry.not-found", message, status=status)
    if status >= 500:
        return RegistryUnavailable(
            "registry.server-error", message, status=status, retry_after=wait
        )
    return RegistryError("registry.http-error", message, status=status)
