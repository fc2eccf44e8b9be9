"""``exec`` gated for the framework adapters (``skillbook.runtime.exec_gate``) and the
synchronous decision it uses (``approval.decide_sync``). Real shells, real files."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from skillbook.config.file import Config
from skillbook.runtime.approval import (
    DECLINED_RESULT,
    REFUSED_NO_APPROVER_RESULT,
    REFUSED_NO_ONE_RESULT,
    ExecPolicy,
    decide,
    decide_sync,
)
from skillbook.runtime.exec_gate import GatedTool, gate_exec, is_exec, ungated
from skillbook.runtime.providers.base import ToolCall
from skillbook.runtime.tools import ExecTool, ReadTool

pytestmark = pytest.mark.skipif(os.name != "posix", reason="exec uses /bin/sh")

CALL = ToolCall("c1", "exec", {"command": "echo hi"})


def test_decide_sync_gives_the_async_answers() -> None:
    ask = ExecPolicy()
    assert decide_sync(ask, CALL, (), None).message == REFUSED_NO_ONE_RESULT
    assert decide_sync(ask, CALL, (), lambda c: True).run
    assert not decide_sync(ask, CALL, (), lambda c: "yes").run  # type: ignore[arg-type,return-value]

    async def yes(call: ToolCall) -> bool:
        return True

    assert decide_sync(ask, CALL, (), yes).reason == "user"
    assert asyncio.run(decide(ask, CALL, (), yes)).reason == "user"

    def broken(call: ToolCall) -> bool:
        raise RuntimeError("no terminal")

    assert decide_sync(ask, CALL, (), broken).message == DECLINED_RESULT
    assert decide_sync(ExecPolicy.allow_all(), CALL, (), broken).reason == "policy"


def test_gate_exec_wraps_only_exec_and_only_once(tmp_path: Path) -> None:
    exec_tool = ExecTool([], base_env={"PATH": os.environ.get("PATH", "")})
    gated = gate_exec(exec_tool)
    assert isinstance(gated, GatedTool) and gate_exec(gated) is gated
    assert ungated(gated) is exec_tool and ungated(exec_tool) is exec_tool
    assert (gated.name, gated.schema, gated.description) == (
        exec_tool.name,
        exec_tool.schema,
        exec_tool.description,
    )
    read = ReadTool([])
    assert gate_exec(read) is read and not is_exec(read) and is_exec(gated)


def test_a_gated_exec_refuses_then_runs_what_is_allowed(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "")}
    marker = tmp_path / "ran"
    args = {"command": f"touch {marker}", "cwd": str(tmp_path)}
    refused = gate_exec(ExecTool([], base_env=env)).run(args)
    assert refused.is_error and refused.text == REFUSED_NO_APPROVER_RESULT
    assert not marker.exists()
    # The config's allowlist (never with a cwd argument), then an approver.
    config = Config.from_mapping({"skills": {"exec": {"allow": ["touch"]}}})
    allowed = gate_exec(ExecTool([], config=config, base_env=env))
    assert not asyncio.run(allowed.arun({"command": f"touch {marker}"})).is_error
    assert marker.exists()
    asked: list[ToolCall] = []

    def approve(call: ToolCall) -> bool:
        asked.append(call)
        return True

    gated = gate_exec(ExecTool([], base_env=env), approve=approve)
    assert isinstance(gated, GatedTool)
    ran = gated.run(args, call_id="c9")
    assert not ran.is_error and [c.id for c in asked] == ["c9"]


def test_a_call_without_a_command_is_left_to_the_tool() -> None:
    """Nothing can run, so nobody is asked: the tool reports the bad call."""
    asked: list[ToolCall] = []

    def approve(call: ToolCall) -> bool:
        asked.append(call)
        return True

    gated = gate_exec(ExecTool([]), approve=approve)
    result = gated.run({"cmd": "ls"})
    assert result.is_error and "unknown argument" in result.text and asked == []


def test_the_approver_is_asked_one_command_at_a_time() -> None:
    """Frameworks run a step's calls concurrently; questions must not overlap."""
    from skillbook.runtime.exec_gate import ExecGate

    inside = [0]
    most = [0]

    async def approve(call: ToolCall) -> bool:
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        for _ in range(5):
            await asyncio.sleep(0)
        inside[0] -= 1
        return True

    gate = ExecGate(ExecPolicy(), approve=approve)

    async def both() -> list[bool]:
        got = await asyncio.gather(*(gate.adecide({"command": f"echo {i}"}) for i in range(3)))
        return [d.run for d in got]

    assert asyncio.run(both()) == [True, True, True] and most[0] == 1
    # A second event loop (a second asyncio.run) gets a lock of its own.
    assert asyncio.run(both()) == [True, True, True]

    import threading

    entered = threading.Event()
    threads_most = [0]
    threads_inside = [0]

    def blocking(call: ToolCall) -> bool:
        threads_inside[0] += 1
        threads_most[0] = max(threads_most[0], threads_inside[0])
        entered.wait(0.2)  # a second caller would be inside by now without the lock
        entered.set()
        threads_inside[0] -= 1
        return True

    sync_gate = ExecGate(ExecPolicy(), approve=blocking)
    workers = [
        threading.Thread(target=sync_gate.decide, args=({"command": "true"},)) for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert threads_most[0] == 1
