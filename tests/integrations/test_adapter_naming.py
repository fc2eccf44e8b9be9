"""One sync/async naming rule across the three adapters."""

from __future__ import annotations

import importlib
import inspect

import pytest


@pytest.mark.parametrize("name", ["openai_agents", "pydantic_ai", "langchain"])
def test_handle_slash_command_is_async_and_has_a_sync_twin(name: str) -> None:
    module = importlib.import_module(f"skillbook.integrations.{name}")
    assert inspect.iscoroutinefunction(module.handle_slash_command)
    twin = module.handle_slash_command_sync
    assert callable(twin) and not inspect.iscoroutinefunction(twin)
    assert {"handle_slash_command", "handle_slash_command_sync"} <= set(module.__all__)
    assert not [n for n in module.__all__ if n.startswith("ahandle")]
