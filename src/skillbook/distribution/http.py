"""HTTP for distribution: one client set-up, one retry rule, one capped stream, one
guarded download. The registry client, the publisher and the download installer use it.

**Client.** :func:`new_http`: redirects followed, skillbook's ``User-Agent``
(:data:`USER_AGENT`), proxies from the environment as usual for httpx.

**Retries** (clawhub-api.md §7, the ``clawhub`` CLI's rules, which are kinder to a busy
server than OpenClaw's): 429, any 5xx but 501 (:func:`retryable_status`), timeouts and
connection errors (:func:`retryable_error`) are retried; other 4xx fail at once. The
wait (:func:`server_wait`) is the server's ``Retry-After`` (seconds or an HTTP date; a
number beyond a year is read as epoch seconds), else on a 429 its
``RateLimit-Reset``/``X-RateLimit-Reset``, else an exponential backoff
(:func:`backoff`: 0.3 s doubling, at most 5 s) with jitter. :class:`RetryPolicy` holds
the numbers (3 attempts; a server wait beyond ``max_wait`` is not sat out).

**Capped streams.** :func:`stream_capped` copies a response body into a file, hashing
and counting it, and stops at a size cap (the ``Content-Length`` is checked first).

**Guarded download** (spec §8.5 step 3, the download installer): :func:`fetch_to_file`
downloads one http(s) URL through the network guard
(:class:`~skillbook.distribution.netguard.NetworkPolicy`) within a timeout for the
whole download. Output: the number of bytes and their SHA-256, or an
``install.download-failed`` :class:`~skillbook.distribution.InstallError` with the reason
(OpenClaw's wording where it has one: ``Download failed (404 Not Found)``, ``Too many
redirects (limit: 3)``, ``Blocked hostname or private/internal/special-use IP
address``). Every hop (the first request and each redirect) is checked by scheme (only
http and https: a redirect to ``file:`` or ``ftp:`` is refused) and by host, and
connects to the address the guard resolved (the host name still goes in the ``Host``
header and TLS SNI, so certificates are verified for the name). A body shorter than
announced is an error. Proxy variables are ignored (a proxy would resolve names behind
the guard's back). It does not retry, as OpenClaw's installer does not.
"""

from __future__ import annotations

import email.utils
import hashlib
import posixpath
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, Final

from skillbook.distribution import InstallError
from skillbook.distribution.netguard import NetworkPolicy, Resolver, resolve_pinned
from skillbook.distribution.progress import NoProgress, Progress
from skillbook.version import __version__

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DEFAULT_MAX_DOWNLOAD_BYTES",
    "MIN_TIMEOUT_MS",
    "USER_AGENT",
    "Fetched",
    "RetryPolicy",
    "backoff",
    "fetch_to_file",
    "header_float",
    "new_http",
    "rate_note",
    "rate_reset",
    "reason",
    "retry_after",
    "retryable_error",
    "retryable_status",
    "server_wait",
    "stream_capped",
]

#: The largest download accepted (the archive limit of §8.5).
DEFAULT_MAX_DOWNLOAD_BYTES: Final = 256 * 1024 * 1024
MIN_TIMEOUT_MS: Final = 1_000
USER_AGENT: Final = f"skillbook/{__version__}"
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_EPOCH_THRESHOLD: Final = 31_536_000


def new_http(
    transport: httpx.BaseTransport | None = None, *, timeout: float | None = None
) -> httpx.Client:
    """The HTTP client registry requests go through (redirects followed, skillbook's
    User-Agent); proxies come from the environment as usual for httpx. ``timeout``:
    the client's default per request (the registry client passes its own each time;
    the publisher's uploads need longer than httpx's 5 s)."""
    import httpx

    return httpx.Client(
        follow_redirects=True,
        headers={"User-Agent": USER_AGENT},
        transport=transport,
        timeout=httpx.Timeout(5.0 if timeout is None else timeout),  # 5 s: httpx's default
    )


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry (defaults: the ``clawhub`` CLI's 3 attempts)."""

    attempts: int = 3
    #: The longest server-requested wait sat out; longer ones fail with the time to wait.
    max_wait: float = 60.0
    base_delay: float = 0.3
    max_delay: float = 5.0
    #: Seconds per request (connect, each read); OpenClaw uses 30.
    timeout: float = 30.0


def retryable_status(status: int) -> bool:
    """429 and 5xx but 501 (the server does not serve the route; asking again will not
    change that)."""
    return status == 429 or (status >= 500 and status != 501)


def retryable_error(exc: BaseException) -> bool:
    """A timeout or a connection error (httpx's), worth asking again."""
    import httpx

    return isinstance(exc, (httpx.TimeoutException, httpx.TransportError))


def backoff(policy: RetryPolicy, attempt: int) -> float:
    """The wait after failed attempt ``attempt`` (1-based) when the server named none."""
    delay = min(policy.max_delay, policy.base_delay * 2 ** (attempt - 1))
    return float(delay) + random.uniform(0, 0.3)


def reason(exc: BaseException) -> str:
    """A failed request's cause in a few words (``timed out``, the transport's message)."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    return str(exc) or type(exc).__name__


def header_float(headers: httpx.Headers, name: str) -> float | None:
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        return float(raw.strip())
    except ValueError:
        return None


def retry_after(headers: httpx.Headers, *, now: float | None = None) -> float | None:
    """Seconds to wait from ``Retry-After`` (delta, epoch seconds or HTTP date)."""
    raw = headers.get("retry-after")
    if raw is None:
        return None
    clock = time.time() if now is None else now
    value = raw.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(1.0, when.timestamp() - clock)
    if seconds > _EPOCH_THRESHOLD:
        seconds -= clock
    return max(1.0, seconds)


def rate_reset(headers: httpx.Headers, *, now: float | None = None) -> float | None:
    """Seconds until the rate-limit window resets (``RateLimit-Reset`` is a delta,
    the legacy ``X-RateLimit-Reset`` epoch seconds)."""
    delta = header_float(headers, "ratelimit-reset")
    if delta is not None:
        return max(0.0, delta)
    epoch = header_float(headers, "x-ratelimit-reset")
    if epoch is not None:
        clock = time.time() if now is None else now
        return max(0.0, epoch - clock if epoch > _EPOCH_THRESHOLD else epoch)
    return None


def server_wait(status: int, headers: httpx.Headers) -> float | None:
    """The wait the server asked for: ``Retry-After``, else a 429's rate-limit reset."""
    wait = retry_after(headers)
    if wait is None and status == 429:
        wait = rate_reset(headers)
    return wait


def rate_note(headers: httpx.Headers) -> str:
    """``remaining: r/l, reset in Ns`` from whichever rate-limit headers were sent."""
    bits = []
    remaining = headers.get("ratelimit-remaining") or headers.get("x-ratelimit-remaining")
    limit = headers.get("ratelimit-limit") or headers.get("x-ratelimit-limit")
    if remaining is not None and limit is not None:
        bits.append(f"remaining: {remaining.strip()}/{limit.strip()}")
    reset = rate_reset(headers)
    if reset is not None:
        bits.append(f"reset in {round(reset)}s")
    return ", ".join(bits)


def stream_capped(
    chunks: Iterable[bytes],
    sink: BinaryIO,
    *,
    max_bytes: int,
    too_large: Callable[[], Exception],
    progress: Progress,
    each: Callable[[], object] | None = None,
) -> tuple[int, str]:
    """Copy ``chunks`` into ``sink``; ``(size, sha256 hex)``. Raises ``too_large()`` as
    soon as more than ``max_bytes`` arrived; ``each`` runs after every chunk (a
    deadline check). The caller starts and finishes ``progress``."""
    digest = hashlib.sha256()
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > max_bytes:
            raise too_large()
        digest.update(chunk)
        sink.write(chunk)
        progress.advance(len(chunk))
        if each is not None:
            each()
    sink.flush()
    return size, digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Fetched:
    size: int
    sha256: str
    #: The URL the body finally came from (after redirects).
    url: str


def _failed(message: str) -> InstallError:
    return InstallError("install.download-failed", message)


def fetch_to_file(
    url: str,
    sink: BinaryIO,
    *,
    policy: NetworkPolicy,
    timeout_ms: int,
    max_bytes: int = DEFAULT_MAX_DOWNLOAD_BYTES,
    progress: Progress | None = None,
    resolver: Resolver | None = None,
) -> Fetched:
    """Stream ``url`` into ``sink`` (an open, empty binary file)."""
    import httpx  # lazily: only downloads need it

    budget_ms = max(MIN_TIMEOUT_MS, timeout_ms)
    deadline = time.monotonic() + budget_ms / 1000
    visited = {url}
    current = url
    redirects = 0
    with httpx.Client(trust_env=False, follow_redirects=False) as client:
        while True:
            try:
                parsed = httpx.URL(current)
            except httpx.InvalidURL:
                raise _failed("Invalid URL: must be http or https") from None
            if parsed.scheme not in _DEFAULT_PORTS or not parsed.host:
                raise _failed("Invalid URL: must be http or https")
            port = parsed.port or _DEFAULT_PORTS[parsed.scheme]
            addresses = resolve_pinned(parsed.host, port, policy, resolver=resolver)
            request = client.build_request(
                "GET",
                parsed.copy_with(host=addresses[0]),
                headers={
                    "Host": parsed.netloc.decode("ascii"),
                    "User-Agent": USER_AGENT,
                },
                extensions={"sni_hostname": parsed.host} if parsed.scheme == "https" else {},
                timeout=httpx.Timeout(_remaining(deadline, budget_ms)),
            )
            try:
                response = client.send(request, stream=True)
            except httpx.TimeoutException:
                raise _failed(f"Download timed out after {budget_ms} ms") from None
            except httpx.HTTPError as exc:
                raise _failed(f"Download failed: {exc}") from None
            try:
                if response.status_code in _REDIRECTS:
                    location = response.headers.get("location")
                    if not location:
                        raise _failed(f"Redirect missing location header ({response.status_code})")
                    redirects += 1
                    if redirects > policy.max_redirects:
                        raise _failed(f"Too many redirects (limit: {policy.max_redirects})")
                    current = str(parsed.join(location))
                    if current in visited:
                        raise _failed("Redirect loop detected")
                    visited.add(current)
                    continue
                if not response.is_success:
                    raise _failed(
                        f"Download failed ({response.status_code} {response.reason_phrase})"
                    )
                size, digest = _stream_body(
                    response, sink, deadline, budget_ms, max_bytes, progress
                )
                return Fetched(size=size, sha256=digest, url=current)
            finally:
                response.close()


def _remaining(deadline: float, budget_ms: int) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _failed(f"Download timed out after {budget_ms} ms")
    return left


def _announced(response: httpx.Response) -> int | None:
    raw = response.headers.get("content-length")
    if raw is None or not raw.strip().isdigit():
        return None
    return int(raw)


def _stream_body(
    response: httpx.Response,
    sink: BinaryIO,
    deadline: float,
    budget_ms: int,
    max_bytes: int,
    progress: Progress | None,
) -> tuple[int, str]:
    import httpx

    announced = _announced(response)
    if announced is not None and announced > max_bytes:
        raise _failed(
            f"Download refused: the server announces {announced} bytes, "
            f"more than the limit of {max_bytes} bytes"
        )
    report = progress or NoProgress()
    name = posixpath.basename(response.url.path.rstrip("/")) or "download"
    report.start(f"Downloading {name}", announced)
    try:
        size, digest = stream_capped(
            response.iter_bytes(),
            sink,
            max_bytes=max_bytes,
            too_large=lambda: _failed(
                f"Download refused: more than the limit of {max_bytes} bytes"
            ),
            progress=report,
            each=lambda: _remaining(deadline, budget_ms),
        )
    except httpx.TimeoutException:
        raise _failed(f"Download timed out after {budget_ms} ms") from None
    except httpx.HTTPError as exc:
        raise _failed(f"Download failed: {exc}") from None
    finally:
        report.finish()
    if announced is not None and response.num_bytes_downloaded != announced:
        raise _failed(
            f"Download failed: received {response.num_bytes_downloaded} of {announced} announced bytes"
        )
    return size, digest
