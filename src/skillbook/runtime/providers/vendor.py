"""What the OpenAI and Anthropic models share: the vendor's SDK, its client, its errors, the stream.

A vendor module (:mod:`~skillbook.runtime.providers.openai_chat`,
:mod:`~skillbook.runtime.providers.anthropic_messages`) knows its wire format only: the
tool declarations and the request it sends, and how its stream's chunks become
:data:`~skillbook.runtime.providers.base.ModelEvent` values. The rest lives here, once:

- the SDK is imported when a model is made, and a missing one is
  :class:`~skillbook.errors.ModelNotConfigured` (``missing-package``) naming the extra
  to install; a model given its own ``client`` needs no SDK;
- the SDK's API errors (status, connection, timeout: the SDK has already retried what
  it retries) become a one-line :class:`~skillbook.runtime.ModelError` naming the server;
- the response stream is closed however the turn ends, cancelled included.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from skillbook.runtime import ModelError, ModelNotConfigured
from skillbook.runtime.providers.base import ModelEvent, one_line

__all__ = ["Vendor", "stream_events"]


class _NoError(Exception):
    """Stands for the SDK's error class when the SDK is absent: it is never raised."""


@dataclass(frozen=True, slots=True)
class Vendor:
    """One vendor's SDK as a model uses it."""

    #: The Python package (``openai``), also the name of skillbook's extra.
    package: str
    #: Its async client class (``AsyncOpenAI``).
    client_class: str
    #: Where requests go without a ``base_url``, for error messages.
    default_host: str

    @property
    def install_hint(self) -> str:
        return (
            f'the {self.package} package is not installed: pip install "skillbook[{self.package}]"'
        )

    def client(self, *, api_key: str | None, base_url: str | None) -> Any:
        """The SDK's async client, or :class:`ModelNotConfigured` when the SDK is missing."""
        try:
            module = importlib.import_module(self.package)
        except ImportError as exc:
            raise ModelNotConfigured(self.install_hint, code="missing-package") from exc
        return getattr(module, self.client_class)(api_key=api_key, base_url=base_url)

    def api_error(self) -> type[Exception]:
        """The SDK's base error class; an injected client without the SDK has none."""
        try:
            module = importlib.import_module(self.package)
        except ImportError:
            return _NoError
        error: type[Exception] = module.APIError
        return error


async def stream_events(
    vendor: Vendor,
    base_url: str | None,
    start: Callable[[], Awaitable[Any]],
    events: Callable[[Any], AsyncIterator[ModelEvent]],
) -> AsyncIterator[ModelEvent]:
    """The events ``events`` reads from the stream ``start()`` opens, with the SDK's errors
    as :class:`ModelError` and the stream closed at the end."""
    api_error = vendor.api_error()
    where = base_url or vendor.default_host
    try:
        stream = await start()
    except api_error as exc:
        raise ModelError(f"{where}: {one_line(str(exc))}") from exc
    try:
        async for event in events(stream):
            yield event
    except api_error as exc:
        raise ModelError(f"{where}: {one_line(str(exc))}") from exc
    finally:
        await stream.close()
