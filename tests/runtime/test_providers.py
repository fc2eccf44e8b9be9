"""The OpenAI and Anthropic models: each vendor's tool declarations, and the plumbing they
share (:mod:`skillbook.runtime.providers.vendor`): the SDK's client, its errors, the stream.

The wire formats themselves run against local fake servers in ``tests/agent_e2e``; here a
stand-in client hands each model a stream, so what the shared plumbing does with it
(errors in one line, the stream closed however iteration ends) is seen directly.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import Any

import pytest

from skillbook.runtime import ModelError, ModelNotConfigured
from skillbook.runtime.providers.anthropic_messages import AnthropicModel, anthropic_tool_spec
from skillbook.runtime.providers.base import Message, Stop, TextDelta
from skillbook.runtime.providers.openai_chat import OpenAIChatModel, openai_tool_spec
from skillbook.runtime.tools import ReadTool, Tool

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")

Model = OpenAIChatModel | AnthropicModel


def test_each_vendor_declares_the_tools_its_own_way() -> None:
    tool: Tool = ReadTool([])
    assert openai_tool_spec(tool) == {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.schema,
        },
    }
    assert anthropic_tool_spec(tool) == {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.schema,
    }


class _Stream:
    """A vendor stream: its chunks, then optionally an error; remembers being closed."""

    def __init__(self, chunks: list[Any], error: Exception | None = None) -> None:
        self.chunks = chunks
        self.error = error
        self.closed = False

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._gen()

    async def _gen(self) -> AsyncIterator[Any]:
        for chunk in self.chunks:
            yield chunk
        if self.error is not None:
            raise self.error

    async def close(self) -> None:
        self.closed = True


def _openai_text(text: str) -> Any:
    delta = SimpleNamespace(content=text, tool_calls=None)
    return SimpleNamespace(choices=[SimpleNamespace(delta=delta, finish_reason=None)])


def _anthropic_text(text: str) -> Any:
    return SimpleNamespace(
        type="content_block_delta", index=0, delta=SimpleNamespace(type="text_delta", text=text)
    )


def _client(path: str, answer: Callable[[], Any]) -> Any:
    async def create(**request: Any) -> Any:
        return answer()

    # client.chat.completions.create / client.messages.create
    node: Any = create
    for name in reversed(path.split(".")):
        node = SimpleNamespace(**{name: node})
    return node


def _api_error(module: Any, text: str) -> Exception:
    error: Exception = module.APIError(text, httpx2.Request("POST", "http://fake/v1"), body=None)
    return error


VENDORS: list[tuple[str, Callable[..., Model], str, Callable[[str], Any], Any, str]] = [
    ("openai", OpenAIChatModel, "chat.completions.create", _openai_text, openai, "api.openai.com"),
    (
        "anthropic",
        AnthropicModel,
        "messages.create",
        _anthropic_text,
        anthropic,
        "api.anthropic.com",
    ),
]


async def _collect(model: Model, limit: int | None = None) -> list[Any]:
    out: list[Any] = []
    events = model.stream([Message.user("hi")], [], "")
    async for event in events:
        out.append(event)
        if limit is not None and len(out) == limit:
            break
    return out


@pytest.mark.parametrize("vendor", VENDORS, ids=lambda v: v[0])
def test_an_api_error_mid_stream_is_one_line_naming_the_server(vendor: Any) -> None:
    _, make, path, text, module, host = vendor
    stream = _Stream([text("par")], _api_error(module, "overloaded\nplease retry"))
    model = make("m", client=_client(path, lambda: stream))
    with pytest.raises(ModelError) as info:
        asyncio.run(_collect(model))
    assert str(info.value) == f"{host}: overloaded please retry"
    assert stream.closed


@pytest.mark.parametrize("vendor", VENDORS, ids=lambda v: v[0])
def test_an_api_error_opening_the_stream_names_the_base_url(vendor: Any) -> None:
    _, make, path, _, module, _ = vendor

    def refuse() -> Any:
        raise _api_error(module, "401 bad key")

    model = make("m", base_url="http://127.0.0.1:9/v1", client=_client(path, refuse))
    with pytest.raises(ModelError, match=r"^http://127\.0\.0\.1:9/v1: 401 bad key$"):
        asyncio.run(_collect(model))


@pytest.mark.parametrize("vendor", VENDORS, ids=lambda v: v[0])
def test_the_stream_is_closed_when_the_caller_stops_early(vendor: Any) -> None:
    _, make, path, text, _, _ = vendor
    stream = _Stream([text("one"), text("two")])
    model = make("m", client=_client(path, lambda: stream))

    async def first_then_close() -> list[Any]:
        events = model.stream([Message.user("hi")], [], "")
        first = [await anext(events)]
        await events.aclose()
        return first

    assert asyncio.run(first_then_close()) == [TextDelta("one")]
    assert stream.closed


@pytest.mark.parametrize("vendor", VENDORS, ids=lambda v: v[0])
def test_a_whole_stream_ends_with_the_stop_reason(vendor: Any) -> None:
    _, make, path, text, _, _ = vendor
    stream = _Stream([text("hello")])
    events = asyncio.run(_collect(make("m", client=_client(path, lambda: stream))))
    assert events[0] == TextDelta("hello") and isinstance(events[-1], Stop)
    assert stream.closed


@pytest.mark.parametrize("vendor", VENDORS, ids=lambda v: v[0])
def test_a_missing_sdk_says_which_extra_to_install(
    vendor: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, make, *_ = vendor
    monkeypatch.setitem(sys.modules, name, None)  # `import openai` now fails
    with pytest.raises(ModelNotConfigured) as info:
        make("m", api_key="k")
    assert info.value.code == "missing-package"
    assert f'pip install "skillbook[{name}]"' in str(info.value)
