"""``skillbook serve`` imports the SDK without its package ``__init__`` work (``_startup``)."""

from __future__ import annotations

import gc
import subprocess
import sys
import types

import pytest

from skillbook.mcp._startup import server_imports

SCRIPT = """
import gc, sys
from skillbook.mcp._startup import server_imports
with server_imports():
    import skillbook.mcp._http, skillbook.mcp.server
skipped = [m for m in ("mcp.client", "mcp.server.mcpserver") if m in sys.modules]
assert not skipped, skipped
assert gc.isenabled()
import mcp
from mcp import Client, ClientSession
from mcp.server import MCPServer, Server
from mcp.client.streamable_http import streamable_http_client
assert mcp.Client is Client and mcp.server.MCPServer is MCPServer
assert "mcp.client" in sys.modules
print("ok")
"""


@pytest.mark.subprocess
def test_the_sdk_package_inits_run_when_first_asked() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_an_imported_sdk_and_the_collector_setting_are_left_alone() -> None:
    import mcp

    before = sys.modules["mcp"]
    assert type(before) is types.ModuleType
    gc.disable()
    try:
        with server_imports():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off: it stays off
    finally:
        gc.enable()
    with server_imports():
        pass
    assert gc.isenabled()
    assert sys.modules["mcp"] is before is mcp


DEFERRED = """
from pydantic import BaseModel, TypeAdapter
plain_rebuild, plain_defer = vars(BaseModel)["model_rebuild"], vars(TypeAdapter)["_defer_build"]
from skillbook.mcp._startup import server_imports
with server_imports():
    import skillbook.mcp._http, skillbook.mcp.server
import mcp_types
from mcp_types.jsonrpc import jsonrpc_message_adapter
# The SDK's module-level rebuilds and adapters waited for a first use...
assert not mcp_types.ReadResourceRequestParams.__pydantic_complete__
assert not jsonrpc_message_adapter.pydantic_complete
# ...and pydantic's defaults are back for everything imported later.
assert vars(BaseModel)["model_rebuild"] is plain_rebuild
assert vars(TypeAdapter)["_defer_build"] is plain_defer
# The first use builds them, forward references resolved from their module.
params = mcp_types.ReadResourceRequestParams.model_validate({"uri": "skill://a/SKILL.md"})
assert params.uri == "skill://a/SKILL.md"
message = jsonrpc_message_adapter.validate_python({"jsonrpc": "2.0", "id": 1, "method": "ping"})
assert type(message).__name__ == "JSONRPCRequest", message
assert mcp_types.ReadResourceRequestParams.__pydantic_complete__
assert jsonrpc_message_adapter.pydantic_complete
print("ok")
"""


@pytest.mark.subprocess
def test_module_level_rebuilds_and_adapters_wait_for_their_first_use() -> None:
    done = subprocess.run(
        [sys.executable, "-c", DEFERRED], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_the_collector_is_paused_then_what_was_built_is_frozen() -> None:
    """``serve`` builds its first book and catalog with the collector off: objects that
    live as long as the process, frozen out of later collections afterwards."""
    from skillbook.mcp._startup import collector_paused

    frozen = gc.get_freeze_count()
    try:
        with collector_paused():
            assert not gc.isenabled()
            kept = [[i] for i in range(1000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen + len(kept)
        gc.disable()
        with collector_paused():
            pass
        assert not gc.isenabled()  # it was off: it stays off
    finally:
        gc.enable()
        gc.unfreeze()
