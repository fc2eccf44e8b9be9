"""Download one URL to a new file, through the network guard (spec §8.5 step 3).

Input: an http(s) URL, an open file to write to, a :class:`~skillbook.distribution.install.netguard.NetworkPolicy`,
a timeout for the whole download and a size cap. Output: the number of bytes and
their SHA-256, or an ``install.download-failed`` :class:`~skillbook.distribution.install.result.InstallError`
with the reason (OpenClaw's wording where it has one: ``Download failed (404 Not
Found)``, ``Too many redirects (limit: 3)``, ``Blocked hostname or
private/internal/special-use IP address``).

Every hop (the first request and each redirect) is checked by scheme (only http
and https: a redirect to ``file:`` or ``ftp:`` is refused) and by host, and
connects to the address the guard resolved (the host name still goes in the
``Host`` header and TLS SNI, so certificates are verified for the name). The
server's ``Content-Length`` is checked against the cap before reading, the body is
counted while streaming, and a body shorter than announced is an error. Proxy
variables are ignored (a proxy would resolve names behind the guard's back).
"""

from __future__ import annotations

import hashlib
import posixpath
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, Final

from skillbook import __version__
from skillbook.distribution.install import InstallError
from skillbook.distribution.install.netguard import NetworkPolicy, Resolver, resolve_pinned
from skillbook.distribution.install.progress import NoProgress, Progress

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_MAX_DOWNLOAD_BYTES", "MIN_TIMEOUT_MS", "Fetched", "fetch_to_file"]

#: The largest download accepted (the archive limit of §8.5).
DEFAULT_MAX_DOWNLOAD_BYTES: Final = 256 * 1024 * 1024
MIN_TIMEOUT_MS: Final = 1_000
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


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
                    "User-Agent": f"skillbook/{__version__}",
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
    digest = hashlib.sha256()
    size = 0
    name = posixpath.basename(response.url.path.rstrip("/")) or "download"
    report.start(f"Downloading {name}", announced)
    try:
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise _failed(f"Download refused: more than the limit of {max_bytes} bytes")
            digest.update(chunk)
            sink.write(chunk)
            report.advance(len(chunk))
            _remaining(deadline, budget_ms)
        sink.flush()
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
    return size, digest.hexdigest()
