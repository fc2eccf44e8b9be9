"""A scripted OpenAI-compatible Chat Completions server on 127.0.0.1, for adapter tests.

Each ``POST /v1/chat/completions`` is recorded (``server.requests``) and answered by
the next step of the script: a :class:`Reply`, or a function of the request body that
returns one (to echo a tool result back, say). ``stream: true`` requests get the same
reply as server-sent events. Past the end of the script the server answers 500, so
a test never hangs on a model that wants more turns than were scripted.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from factories import stub_bins, write_workspace

from skillbook.runtime.approval import (
    DECLINED_RESULT,
    REFUSED_ALLOWLIST_RESULT,
    REFUSED_NO_APPROVER_RESULT,
    ExecPolicy,
)
from skillbook.runtime.providers.base import ToolCall

MODEL = "scripted-model"


@dataclass(frozen=True, slots=True)
class Reply:
    """One assistant message: text, tool calls, or both."""

    content: str | None = None
    tool_calls: tuple[tuple[str, str, dict[str, Any]], ...] = ()  # (id, name, arguments)

    def message(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for cid, name, args in self.tool_calls
            ]
        return out


def say(text: str) -> Reply:
    return Reply(content=text)


def call(name: str, args: dict[str, Any], *, id: str = "call_1") -> Reply:
    return Reply(tool_calls=((id, name, args),))


Step = Reply | Callable[[dict[str, Any]], Reply]


class ScriptedOpenAI:
    """Use as a context manager; ``base_url`` ends in ``/v1``."""

    def __init__(self, script: Iterable[Step]) -> None:
        self.script: list[Step] = list(script)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> ScriptedOpenAI:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = owner._next(body)
                if reply is None:
                    self._send(500, {"error": {"message": "script exhausted"}})
                elif body.get("stream"):
                    self._stream(reply)
                else:
                    self._send(200, _completion(reply))

            def _send(self, status: int, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: Reply) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in _chunks(reply):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, body: dict[str, Any]) -> Reply | None:
        with self._lock:
            self.requests.append(body)
            if not self.script:
                return None
            step = self.script.pop(0)
        return step(body) if callable(step) else step


def _completion(reply: Reply) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": reply.message(),
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _chunks(reply: Reply) -> list[dict[str, Any]]:
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0}
    base["model"] = MODEL
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": reply.content or ""}]
    for i, (cid, name, args) in enumerate(reply.tool_calls):
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": cid,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ]
            }
        )
    chunks = [
        {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    finish = "tool_calls" if reply.tool_calls else "stop"
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return chunks


def messages_of(request: dict[str, Any], role: str) -> list[dict[str, Any]]:
    return [m for m in request.get("messages", []) if m.get("role") == role]


def text_of(message: dict[str, Any]) -> str:
    """The text of a message whose content is a string or a list of text parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


# --------------------------------------------------------------------------- workspaces
# Shared by the three adapter tests: a tmp home with a workspace of skills and a stub curl.

WEATHER_BODY = """# Weather

Run `curl -s "wttr.in/<city>?format=3"` with exec (skill: weather) and report it.
"""
#: What the stub ``curl`` prints.
CANNED = "Paris: ☀️ +21°C"


def skill_workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A workspace under a tmp home and the environment that isolates it from the real one.

    Skills: ``weather`` (needs ``curl``, stubbed on PATH), ``notes``, ``sh``
    (``command-dispatch: tool`` to ``exec``) and ``ghost`` (dispatch to a missing tool).
    """
    home = tmp_path / "home"
    bins = tmp_path / "bin"
    (tmp_path / "bundled").mkdir()
    stub_bins(bins, ["curl"], f"#!/bin/sh\necho '{CANNED}'\n")
    env = {
        "HOME": str(home),
        "PATH": f"{bins}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "bundled"),
        "SKILLBOOK_STATE_DIR": str(tmp_path / "state"),
    }
    ws = write_workspace(
        home / "ws",
        {
            "weather": {
                "body": WEATHER_BODY,
                "metadata": {"openclaw": {"requires": {"bins": ["curl"]}}},
            },
            "notes": None,
            "sh": {"command_dispatch": "tool", "command_tool": "exec"},
            "ghost": {"command_dispatch": "tool", "command_tool": "nope"},
        },
    )
    return ws, env


def location(prompt: str, name: str) -> str:
    """The ``<location>`` the catalog shows for skill ``name``."""
    found = re.search(rf"<name>{name}</name>.*?<location>(.*?)</location>", prompt, re.S)
    assert found is not None, prompt
    return found.group(1)


# --------------------------------------------------------------------------- docs examples

REPO = Path(__file__).resolve().parents[2]
_FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
#: What the docs' ``greet`` skill prints for ``/greet Ada``.
GREETING = "Hello, Ada! Welcome aboard."


def docs_example(name: str) -> str:
    """The one ``python`` block of ``docs/integrations/<name>``."""
    blocks = _FENCE.findall((REPO / "docs" / "integrations" / name).read_text(encoding="utf-8"))
    assert len(blocks) == 1, f"{name}: expected one python block, found {len(blocks)}"
    return str(blocks[0])


def greet_script(seen: dict[str, str]) -> list[Step]:
    """The model a docs example meets: read the greet skill, exec its echo, answer.

    ``seen`` gets the system prompt, the rewritten user message and the read result.
    """

    def read_skill(body: dict[str, Any]) -> Reply:
        seen["system"] = text_of(messages_of(body, "system")[0])
        seen["user"] = text_of(messages_of(body, "user")[-1])
        return call("read", {"path": location(seen["system"], "greet")}, id="call_read")

    def run_echo(body: dict[str, Any]) -> Reply:
        seen["read"] = text_of(messages_of(body, "tool")[-1])
        command = f'echo "{GREETING}"'
        return call("exec", {"command": command, "skill": "greet"}, id="call_exec")

    def answer(body: dict[str, Any]) -> Reply:
        return say(text_of(messages_of(body, "tool")[-1]).strip())

    return [read_skill, run_echo, answer]


def run_docs_example(name: str, tmp_path: Path, server: ScriptedOpenAI) -> str:
    """Run the example as a user would (``python file.py``) in an empty folder; its stdout."""
    import subprocess
    import sys

    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "no-bundled").mkdir(exist_ok=True)
    script = work / "example.py"
    script.write_text(docs_example(name), encoding="utf-8")
    # No key, endpoint or tracing setting of the caller's may reach the example.
    dropped = ("SKILLBOOK_", "OPENCLAW_", "OPENAI_", "LANGSMITH_", "LANGCHAIN_", "LOGFIRE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(
        HOME=str(tmp_path / "home"),
        SKILLBOOK_STATE_DIR=str(tmp_path / "state"),
        SKILLBOOK_BUNDLED_SKILLS_DIR=str(tmp_path / "no-bundled"),
        OPENAI_API_KEY="test-key",
        OPENAI_BASE_URL=server.base_url,
        OPENAI_MODEL=MODEL,
        OPENAI_AGENTS_DISABLE_TRACING="1",
    )
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


# --------------------------------------------------------------------------- approving exec
# The adapters hand their framework a gated `exec`: these cases are run by each adapter.


class Approvals:
    """An ``approve`` callback that records each call and gives ``answer``; ``.async_``
    is the same as a coroutine function."""

    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.calls: list[ToolCall] = []

    def __call__(self, call: ToolCall) -> bool:
        self.calls.append(call)
        return self.answer

    async def async_(self, call: ToolCall) -> bool:
        await asyncio.sleep(0)
        return self(call)


@dataclass(frozen=True, slots=True)
class GateCase:
    """One way of calling an adapter and what a model's ``touch`` command must meet."""

    id: str
    #: ``skillbook_tools``-style keyword arguments, given the case's approver.
    kwargs: Callable[[Approvals], dict[str, Any]]
    ran: bool
    #: The tool text the model gets when the command did not run.
    message: str = ""
    asked: int = 0
    answer: bool = True
    #: ``skills.exec`` of the book's config.
    exec_config: dict[str, Any] | None = None


GATE_CASES = (
    GateCase("no-approver", lambda a: {}, False, REFUSED_NO_APPROVER_RESULT),
    GateCase("declined", lambda a: {"approve": a}, False, DECLINED_RESULT, 1, answer=False),
    GateCase("approved-async", lambda a: {"approve": a.async_}, True, asked=1),
    GateCase("approved-sync", lambda a: {"approve": a}, True, asked=1),
    GateCase(
        "allowlisted", lambda a: {"exec_policy": ExecPolicy(allow=("touch",)), "approve": a}, True
    ),
    GateCase(
        "allowlist-only",
        lambda a: {"exec_policy": ExecPolicy(mode="allowlist"), "approve": a},
        False,
        REFUSED_ALLOWLIST_RESULT,
    ),
    GateCase("config-allow", lambda a: {}, True, exec_config={"allow": ["touch"]}),
    GateCase("allow-all", lambda a: {"exec_policy": ExecPolicy.allow_all()}, True),
)


def gate_book(ws: Path, env: dict[str, str], case: GateCase) -> Any:
    from skillbook.config.file import Config
    from skillbook.pipeline.book import Loader

    skills: dict[str, Any] = {"exec": case.exec_config} if case.exec_config else {}
    config = Config.from_mapping({"skills": skills} if skills else {})
    return Loader(ws, env=env, cwd=ws, config=config).load()


def check_gate(case: GateCase, approvals: Approvals, marker: Path, tool_text: str) -> None:
    """The command ran or not as the case says, and the model was told why not."""
    assert marker.exists() == case.ran, (case.id, tool_text)
    if case.ran:
        assert tool_text.strip() == "(no output)"
    else:
        assert tool_text.strip() == case.message
    assert len(approvals.calls) == case.asked
    for asked in approvals.calls:
        assert asked.name == "exec" and asked.arguments["command"] == f"touch {marker}"
