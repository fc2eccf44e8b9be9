"""The wire side of skillbook's MCP client for the Skills extension (SEP-2640).

Input: an :class:`McpServerSpec` (a host-assigned label plus a stdio command or a
streamable HTTP URL). Output: an open :class:`SkillsClient` on a server that declared
the extension, which pages through ``skills/list`` and reads resources as raw bytes
(capped at what the manifest declares). Failures are :class:`ClientError` values
carrying a stable diagnostic code; validating entries and checking bytes against them
is :mod:`skillbook.mcp._entries`, and :mod:`skillbook.mcp.remote_source` turns it all
into diagnostics, caches and :class:`~skillbook.model.Skill` values.

The ``mcp`` SDK is imported only inside :func:`open_client`, so the spec and entry
types stay importable without it. Server specs are config values (``skills.mcp.servers``).
"""

from __future__ import annotations

import base64
import binascii
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from skillbook.config.file import Config
from skillbook.config.source_sections import McpServerConfig
from skillbook.errors import SourceError
from skillbook.mcp import _skillformat as fmt

if TYPE_CHECKING:
    from mcp import Client

    from skillbook.mcp._capped import ResponseCaps

DEFAULT_TIMEOUT_S = 30.0
#: A server that never stops paging is cut off here (each page is one round trip).
DEFAULT_MAX_PAGES = 100
#: How much of a stdio server's stderr a diagnostic quotes.
STDERR_TAIL_CHARS = 600


#: A failure talking to one server, with the diagnostic code it maps to.
ClientError = SourceError


# --------------------------------------------------------------------------- server specs

#: A configured server: the config schema (:mod:`skillbook.config.file`) validates and owns it.
McpServerSpec = McpServerConfig


def parse_server_specs(raw: Any) -> tuple[McpServerSpec, ...]:
    """``skills.mcp.servers`` given in code, validated as the config file's would be."""
    return Config.from_mapping({"skills": {"mcp": {"servers": raw}}}).skills.mcp_servers


# --------------------------------------------------------------------------- the connection


class SkillsClient:
    """An open connection to one server that declared the extension."""

    def __init__(
        self,
        client: Client,
        spec: McpServerSpec,
        settings: Mapping[str, Any],
        caps: ResponseCaps | None = None,
    ) -> None:
        from skillbook.mcp._capped import ResponseCaps

        self._client = client
        self.spec = spec
        self.settings = settings
        self.protocol_version = client.protocol_version
        #: The byte caps the transport enforces while answers arrive.
        self.caps = caps if caps is not None else ResponseCaps()
        #: ``resources/read`` requests sent (tests assert cache hits with it).
        self.reads = 0

    async def list_entries(self, *, max_pages: int = DEFAULT_MAX_PAGES) -> list[Any]:
        """Every raw entry of ``skills/list``, following ``nextCursor``."""
        entries: list[Any] = []
        cursor: str | None = None
        for _ in range(max_pages):
            page = await self._request("skills/list", {"cursor": cursor} if cursor else None)
            skills = page.get("skills")
            if not isinstance(skills, list):
                raise ClientError("mcp.invalid-response", "skills/list result has no `skills` list")
            entries.extend(skills)
            nxt = page.get("nextCursor")
            if nxt is None:
                return entries
            if not isinstance(nxt, str) or nxt == cursor:
                raise ClientError("mcp.invalid-response", f"skills/list gave a bad cursor {nxt!r}")
            cursor = nxt
        raise ClientError(
            "mcp.invalid-response", f"skills/list did not end within {max_pages} pages"
        )

    async def read(self, uri: str, *, size: int | None = None) -> bytes:
        """The raw bytes of one resource: UTF-8 of ``text`` or the decoded ``blob``.

        With ``size`` (the manifest's), an answer larger than any honest encoding of
        that many bytes is cut off as it arrives and refused (``mcp.digest-mismatch``).
        """
        from mcp import MCPError
        from mcp_types import BlobResourceContents

        self.reads += 1
        if size is not None:
            self.caps.expect(uri, size)
        failure: ClientError | None = None
        try:
            # The SDK's response cache is bypassed: the disk cache is ours and verified.
            result = await self._client.read_resource(uri, cache_mode="bypass")
        except Exception as exc:
            # A cut-off answer surfaces as whatever the SDK makes of a failed stream.
            failure = self._cut_off(uri, size)
            if failure is None and not isinstance(exc, MCPError):
                raise
            failure = failure or ClientError("mcp.invalid-response", f"resources/read {uri}: {exc}")
        finally:
            self.caps.forget(uri)
        if failure is not None:
            raise failure
        match = [c for c in result.contents if c.uri == uri]
        if len(match) != 1:
            raise ClientError(
                "mcp.invalid-response", f"resources/read {uri}: the answer is for another URI"
            )
        content = match[0]
        if isinstance(content, BlobResourceContents):
            try:
                return base64.b64decode(content.blob, validate=True)
            except (binascii.Error, ValueError):
                raise ClientError(
                    "mcp.invalid-response", f"resources/read {uri}: the blob is not base64"
                ) from None
        return content.text.encode("utf-8", "surrogatepass")

    def _cut_off(self, uri: str, size: int | None) -> ClientError | None:
        seen = self.caps.tripped.pop(uri, None)
        if seen is None:
            return None
        arrived = f" ({seen} bytes had arrived)" if seen else ""
        return ClientError(
            "mcp.digest-mismatch",
            f"{uri}: the server sent more than any encoding of the {size} bytes the manifest "
            f"declares{arrived}; refused before it was read in full",
        )

    async def _request(self, method: str, params: dict[str, Any] | None) -> Mapping[str, Any]:
        from mcp import MCPError
        from mcp_types import Request, RequestParams
        from pydantic import ConfigDict, TypeAdapter

        class _Params(RequestParams):
            model_config = ConfigDict(extra="allow")

        class _Request(Request[_Params | None, str]):
            method: str
            params: _Params | None = None

        request = _Request(method=method, params=_Params(**params) if params else None)
        try:
            # The SDK takes a TypeAdapter at run time (raw wire dict); its stub wants a model.
            result = await self._client.session.send_request(
                request,
                TypeAdapter(dict[str, Any]),  # type: ignore[type-var]
            )
        except MCPError as exc:
            raise ClientError("mcp.invalid-response", f"{method}: {exc}") from None
        except ValueError as exc:  # pydantic: not a JSON object
            raise ClientError("mcp.invalid-response", f"{method}: {exc}") from None
        return result


def auth_headers(spec: McpServerSpec, env: Mapping[str, str] | None) -> dict[str, str]:
    """``Authorization: Bearer <token>`` for a server with ``tokenEnv`` (read from ``env``,
    None: ``os.environ``), else nothing; raises :class:`ClientError` (``mcp.token-missing``)
    when the variable is unset or empty, rather than connecting without the token."""
    if spec.token_env is None:
        return {}
    import os

    token = (os.environ if env is None else env).get(spec.token_env, "").strip()
    if not token:
        raise ClientError(
            "mcp.token-missing",
            f"MCP server {spec.name!r} at {spec.target}: its tokenEnv names "
            f"${spec.token_env}, which is not set or empty; not connecting without its token",
        )
    return {"Authorization": f"Bearer {token}"}


@asynccontextmanager
async def open_client(
    spec: McpServerSpec,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[SkillsClient]:
    """Connect (``server/discover``, falling back to ``initialize``) and check the
    server declared the extension; raises :class:`ClientError` otherwise. A server with
    ``tokenEnv`` gets that variable of ``env`` (None: ``os.environ``) as a bearer token."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from skillbook.mcp._capped import ResponseCaps, capped_http_client, capped_stdio_client

    caps = ResponseCaps()
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        server: Any
        http = None
        if spec.url is not None:
            http = capped_http_client(caps, headers=auth_headers(spec, env))
            server = streamable_http_client(spec.url, http_client=http)
        else:
            server = capped_stdio_client(
                spec.command, env=spec.env, cwd=spec.cwd, errlog=errlog, caps=caps
            )
        client = Client(server, read_timeout_seconds=timeout_s)
        try:
            entered = await client.__aenter__()
        except Exception as exc:
            if http is not None:
                await http.aclose()
            if not _only(exc, _connect_errors()):
                raise  # not the server's doing: the caller logs it with its traceback
            if caps.auth_refused is not None:
                raise ClientError(
                    "mcp.unauthorized", _unauthorized(spec, caps.auth_refused)
                ) from None
            raise ClientError(
                "mcp.server-unreachable", _unreachable(spec, exc, _tail(errlog))
            ) from None
        try:
            declared = (entered.server_capabilities.extensions or {}).get(fmt.EXTENSION_ID)
            if not isinstance(declared, Mapping):
                raise ClientError(
                    "mcp.no-skills-capability",
                    f"server {spec.name!r} does not declare the {fmt.EXTENSION_ID} extension "
                    f"(protocol {entered.protocol_version}); its skill:// resources, if any, "
                    "are not loaded as skills",
                )
            yield SkillsClient(entered, spec, declared, caps)
        finally:
            try:
                await client.__aexit__(None, None, None)
            finally:
                if http is not None:
                    await http.aclose()


def _connect_errors() -> tuple[type[BaseException], ...]:
    """What the SDK and its transports raise when a server cannot be started or reached,
    refuses the handshake or hangs up during it (imported here: ``mcp`` loads lazily)."""
    import anyio
    import httpx2
    from mcp import MCPError

    return (
        OSError,  # a stdio command that cannot start; sockets
        TimeoutError,
        httpx2.HTTPError,  # connect, read and protocol errors, HTTP status errors
        httpx2.StreamError,  # includes an answer cut off at its cap
        MCPError,  # an error answer, or the SDK's "Connection closed"
        anyio.BrokenResourceError,
        anyio.ClosedResourceError,
        anyio.EndOfStream,
    )


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


def _only(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    """Whether ``exc`` (or every exception in its groups) is one of ``kinds``."""
    return all(isinstance(leaf, kinds) for leaf in _leaves(exc))


def _unauthorized(spec: McpServerSpec, status: int) -> str:
    head = f"MCP server {spec.name!r} at {spec.target} refused the connection (HTTP {status})"
    if spec.token_env is None:
        return (
            f"{head}: it wants a bearer token; set `tokenEnv` on this server to the name of "
            "the environment variable that holds it"
        )
    return f"{head}: the bearer token in ${spec.token_env} was not accepted"


def _tail(errlog: Any) -> str:
    try:
        errlog.seek(0)
        text: str = errlog.read()
    except (OSError, ValueError):
        return ""
    return text.strip()[-STDERR_TAIL_CHARS:]


def _unreachable(spec: McpServerSpec, exc: BaseException, stderr: str) -> str:
    leaves = _leaves(exc)
    why = "; ".join(dict.fromkeys(f"{type(e).__name__}: {e}".rstrip(": ") for e in leaves))
    text = f"cannot reach MCP server {spec.name!r} at {spec.target}: {why}"
    return f"{text} (server stderr: {stderr})" if stderr else text
