"""The two tools a model needs to use skills: ``read`` (a skill's files) and ``exec``.

Input: the loaded skills (usually ``SkillBook.eligible``), and for ``exec`` the
config, a base environment and a secret resolver. Output: objects with ``name``,
``description``, a JSON Schema ``schema`` and ``run(args) -> ToolResult`` /
``await arun(args)``, usable from any agent loop (each provider in
:mod:`skillbook.runtime.providers` declares them as its API expects). Bad arguments,
refused paths, failing commands and timeouts come back as ``ToolResult(is_error=True)``
with a message for the model, never as exceptions.

``read`` opens ``SKILL.md`` or any file inside a skill folder, and nothing else:
after ``~`` expansion the path is resolved with ``realpath`` and must lie inside the
real folder of one of the skills, so ``..`` tricks and symlinks pointing out of the
folder are refused. ``{baseDir}`` in the text becomes that skill's folder. Output is
cut at ``max_bytes`` with a note saying which ``offset`` continues; files holding
NUL bytes are refused as binary.

``exec`` is a shell tool by design: the command runs as ``/bin/sh -c <command>`` on
POSIX, in a new session (its own process group), stdin closed, stdout and stderr
merged. With ``skill`` it starts in that skill's folder and its environment is the
base environment plus *that skill's* overlay (:func:`skillbook.runtime.env.skill_env`);
without ``skill`` it gets the base environment only. Skill variables never enter
``os.environ``, so concurrent commands of different skills cannot see each other's
keys (openclaw#78528). On timeout the whole process group is killed and the partial
output returned. The overlay's secret values are replaced by ``***`` in the output.
:meth:`ExecTool.run_dispatch` runs a skill's own slash command (``commandExec``, see
:mod:`skillbook.pipeline.commands.dispatch`) the same way, with the user's text as ``$1`` and
``$SKILL_ARGS`` instead of inside the command.
"""

from __future__ import annotations

import asyncio
import errno
import math
import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

from skillbook.base import fs as _fs
from skillbook.config.file import Config
from skillbook.config.paths import resolve_user_path
from skillbook.model import Skill, Source
from skillbook.pipeline.commands.dispatch import ARGS_ENV, detaches
from skillbook.runtime import SecretError
from skillbook.runtime._proc import (
    Collector,
    Plan,
    cut_utf8,
    render_output,
    run_async,
    run_portable,
    run_posix,
    signal_name,
)
from skillbook.runtime.env import skill_env
from skillbook.runtime.secrets import SecretLookup, SecretResolver

__all__ = [
    "DEFAULT_EXEC_MAX_OUTPUT",
    "DEFAULT_EXEC_TIMEOUT_S",
    "DEFAULT_READ_MAX_BYTES",
    "ExecTool",
    "ReadTool",
    "Tool",
    "ToolResult",
]

DEFAULT_READ_MAX_BYTES: Final = 256_000
DEFAULT_EXEC_TIMEOUT_S: Final = 120.0
DEFAULT_EXEC_MAX_OUTPUT: Final = 64_000
#: Upper bound for a per-call ``timeout`` argument.
DEFAULT_MAX_TIMEOUT_S: Final = 1800.0
DEFAULT_SHELL: Final = "/bin/sh"
_SNIFF_BYTES: Final = 8192
_CHUNK: Final = 65536
_POLL_S: Final = 0.05
_MAX_LISTING: Final = 100
_JSON_TYPES: Final = {"string": (str,), "integer": (int,), "number": (int, float)}


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call gives back to the model."""

    text: str
    is_error: bool = False


@runtime_checkable
class Tool(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def schema(self) -> dict[str, Any]: ...
    def run(self, args: Mapping[str, Any]) -> ToolResult: ...
    async def arun(self, args: Mapping[str, Any]) -> ToolResult: ...


def _check_args(args: Any, schema: Mapping[str, Any]) -> str | None:
    """The first problem with ``args`` against a flat object schema, or None."""
    if not isinstance(args, Mapping):
        return "arguments must be a JSON object"
    props: Mapping[str, Any] = schema["properties"]
    unknown = sorted(str(k) for k in args if k not in props)
    if unknown:
        return f"unknown argument(s) {', '.join(unknown)}; expected: {', '.join(props)}"
    for name in schema.get("required", ()):
        if args.get(name) is None:
            return f"missing required argument {name!r}"
    for name, value in args.items():
        want = props[name]["type"]
        ok = isinstance(value, _JSON_TYPES[want]) and not isinstance(value, bool)
        if want == "integer" and isinstance(value, float) and value.is_integer():
            ok = True
        if value is not None and not ok:
            return f"argument {name!r} must be a {want}, got {type(value).__name__}"
    return None


# --------------------------------------------------------------------------- read

_READ_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Absolute or ~/ path of the file."},
        "offset": {"type": "integer", "minimum": 1, "description": "First line (1-based)."},
        "limit": {"type": "integer", "minimum": 1, "description": "Number of lines."},
    },
    "required": ["path"],
    "additionalProperties": False,
}


class ReadTool:
    """``read``: a skill's ``SKILL.md`` or another file in a skill folder."""

    name = "read"
    description = (
        "Read a skill's SKILL.md or another file inside a skill folder (scripts, "
        "references). `path` is absolute or starts with ~/, as listed in the skills "
        "catalog. Long files are cut; continue with `offset` (1-based line) and `limit`."
    )

    def __init__(
        self,
        skills: Iterable[Skill],
        *,
        max_bytes: int = DEFAULT_READ_MAX_BYTES,
        home: str | os.PathLike[str] | None = None,
        workspace: str | os.PathLike[str] | None = None,
        fetch_missing: Callable[[Skill, str], object] | None = None,
        other_homes: Iterable[str | os.PathLike[str]] = (),
    ) -> None:
        self.skills = tuple(skills)
        self.max_bytes = max_bytes
        #: For remote (MCP) skills: materialise a file that is listed but not yet
        #: fetched; called with the skill and the path relative to its folder.
        self.fetch_missing = fetch_missing
        #: The catalog shortens paths under either the effective or the OS home to
        #: ``~/``; when the two differ, ``~`` is tried against each of them.
        self.home = Path(home) if home is not None else Path.home()
        self.other_homes = tuple(Path(h) for h in other_homes if Path(h) != self.home)
        self.workspace = Path(workspace) if workspace is not None else None

    @property
    def schema(self) -> dict[str, Any]:
        return _copy(_READ_SCHEMA)

    async def arun(self, args: Mapping[str, Any]) -> ToolResult:
        return await asyncio.to_thread(self.run, args)

    def run(self, args: Mapping[str, Any]) -> ToolResult:
        problem = _check_args(args, _READ_SCHEMA)
        if problem:
            return ToolResult(f"read: {problem}", True)
        try:
            return self._run(args)
        except OSError as exc:
            # Files and folders may change under the tool (a skill being edited or
            # swapped); the model gets a tool error, never an exception.
            return ToolResult(f"read: {args['path'].strip()}: {exc.strerror or exc}", True)

    def _run(self, args: Mapping[str, Any]) -> ToolResult:
        raw, offset, limit = args["path"].strip(), args.get("offset"), args.get("limit")
        offset = 1 if offset is None else int(offset)
        if not raw:
            return ToolResult("read: 'path' is empty", True)
        if offset < 1 or (limit is not None and int(limit) < 1):
            return ToolResult("read: 'offset' and 'limit' must be >= 1", True)
        if not os.path.isabs(os.path.expanduser(raw)) and self.workspace is None:
            return ToolResult(f"read: {raw}: use an absolute path (as in the skills catalog)", True)
        path = resolve_user_path(raw, self.home, cwd=self.workspace)
        if raw.startswith("~") and not os.path.exists(path):
            for home in self.other_homes:
                candidate = resolve_user_path(raw, home, cwd=self.workspace)
                if os.path.exists(candidate):
                    path = candidate
                    break
        real = os.path.realpath(path)
        owner = self._owner(real)
        if owner is None:
            return ToolResult(
                f"read: {raw}: not inside a skill folder (or a symlink out of one); "
                "read opens only SKILL.md and files inside the loaded skills' folders",
                True,
            )
        if os.path.isdir(real):
            return ToolResult(_listing(raw, real), True)
        if not os.path.exists(real) and self.fetch_missing and owner.source == Source.REMOTE:
            relative = os.path.relpath(real, os.path.realpath(owner.base_dir))
            fetched = self.fetch_missing(owner, relative)
            if not isinstance(fetched, Path):
                why = getattr(fetched, "message", "not available from the server")
                return ToolResult(f"read: {raw}: {why}", True)
        return self._read(raw, real, owner, offset, None if limit is None else int(limit))

    def _owner(self, real: str) -> Skill | None:
        best: tuple[int, Skill] | None = None
        for skill in self.skills:
            root = _skill_root(skill)
            inside = real == root or real.startswith(root.rstrip(os.sep) + os.sep)
            if inside and (best is None or len(root) > best[0]):
                best = (len(root), skill)
        return best[1] if best else None

    def _read(
        self, raw: str, real: str, owner: Skill, offset: int, limit: int | None
    ) -> ToolResult:
        # Opened from the skill's real folder down, no component followed as a symlink
        # (and on Linux the kernel's path of the file checked): a folder swapped for a
        # link after the realpath above fails here instead of reading outside the skill.
        # O_NONBLOCK (in the flags): a FIFO in a skill folder must not hang the open.
        root = _skill_root(owner)
        # A standalone Markdown skill's real "folder" is its one file.
        anchor = os.path.dirname(real) if root == real else root
        try:
            fd = _fs.open_contained(real, anchor)
        except (_fs.PathChanged, OSError) as exc:
            if isinstance(exc, _fs.PathChanged) or exc.errno in (errno.ELOOP, errno.ENOTDIR):
                return ToolResult(f"read: {raw}: the file changed while opening it", True)
            return ToolResult(f"read: {raw}: {exc.strerror or exc}", True)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return ToolResult(f"read: {raw}: not a regular file", True)
        with os.fdopen(fd, "rb") as fh:
            if b"\0" in fh.read(_SNIFF_BYTES):
                return ToolResult(f"read: {raw}: binary file (holds NUL bytes); not shown", True)
            fh.seek(0)
            return self._lines(fh, raw, str(owner.base_dir), offset, limit)

    def _lines(self, fh: Any, raw: str, base: str, offset: int, limit: int | None) -> ToolResult:
        out: list[str] = []
        size = 0
        number = 0
        note = ""
        for number, line in enumerate(fh, start=1):
            if number < offset:
                continue
            if limit is not None and number >= offset + limit:
                note = f"[more lines follow; call read with offset={number} to continue]"
                break
            text = line.decode("utf-8", errors="replace").replace("{baseDir}", base)
            encoded = len(text.encode("utf-8"))
            if size + encoded > self.max_bytes:
                if not out:  # a single line longer than the cap: show its start
                    out.append(cut_utf8(text, self.max_bytes))
                    note = f"[line {number} is longer than {self.max_bytes} bytes and was cut"
                    note += f"; call read with offset={number + 1} for the next line]"
                else:
                    note = f"[output cut at {self.max_bytes} bytes (lines {offset}-{number - 1})"
                    note += f"; call read with offset={number} to continue]"
                break
            out.append(text)
            size += encoded
        if offset > 1 and number < offset:
            return ToolResult(
                f"read: {raw}: offset {offset} is past the end ({number} lines)", True
            )
        body = "".join(out)
        if note:
            body += ("" if body.endswith("\n") or not body else "\n") + "\n" + note
        return ToolResult(body)


def _skill_root(skill: Skill) -> str:
    """The folder ``read`` keeps a skill's reads in: the real path discovery checked
    (a folder swapped for a link later does not move it), else the current one."""
    if skill.real_dir is not None and skill.source != Source.REMOTE:
        return os.fspath(skill.real_dir)
    return os.path.realpath(skill.base_dir)


def _listing(raw: str, real: str) -> str:
    try:
        names = sorted(e.name + ("/" if e.is_dir() else "") for e in os.scandir(real))
    except OSError as exc:
        return f"read: {raw}: is a directory ({exc.strerror})"
    shown = ", ".join(names[:_MAX_LISTING]) + (" …" if len(names) > _MAX_LISTING else "")
    return f"read: {raw}: is a directory; read one of its files: {shown or '(empty)'}"


def _copy(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: _copy(v) if isinstance(v, Mapping) else list(v) if isinstance(v, list) else v
        for k, v in schema.items()
    }


# --------------------------------------------------------------------------- exec

_EXEC_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "Shell command (/bin/sh -c)."},
        "skill": {
            "type": "string",
            "description": "Skill whose folder and configured environment to use.",
        },
        "cwd": {"type": "string", "description": "Working directory (default: the skill folder)."},
        "timeout": {"type": "number", "exclusiveMinimum": 0, "description": "Seconds."},
    },
    "required": ["command"],
    "additionalProperties": False,
}


class ExecTool:
    """``exec``: run a shell command, optionally as a given skill."""

    name = "exec"
    description = (
        "Run a shell command (/bin/sh -c) and return its combined stdout and stderr. "
        "Pass `skill` to run it in that skill's folder with that skill's configured "
        "environment (API keys); secret values are redacted from the output."
    )

    def __init__(
        self,
        skills: Iterable[Skill],
        *,
        config: Config | None = None,
        base_env: Mapping[str, str] | None = None,
        resolver: SecretLookup | None = None,
        workspace: str | os.PathLike[str] | None = None,
        timeout_s: float = DEFAULT_EXEC_TIMEOUT_S,
        max_output: int = DEFAULT_EXEC_MAX_OUTPUT,
        max_timeout_s: float = DEFAULT_MAX_TIMEOUT_S,
        shell: str = DEFAULT_SHELL,
    ) -> None:
        self.skills = tuple(skills)
        self.config = config if config is not None else Config.empty()
        #: None: ``os.environ`` as it is at each call (read, never written).
        self.base_env = base_env
        self.resolver = resolver or SecretResolver(self.config, env=base_env)
        self.workspace = Path(workspace) if workspace is not None else None
        self.timeout_s = timeout_s
        self.max_output = max_output
        self.max_timeout_s = max(max_timeout_s, timeout_s)
        self.shell = shell

    @property
    def schema(self) -> dict[str, Any]:
        return _copy(_EXEC_SCHEMA)

    def run(self, args: Mapping[str, Any]) -> ToolResult:
        return self._run_plan(self._plan(args))

    async def arun(self, args: Mapping[str, Any]) -> ToolResult:
        plan = await asyncio.to_thread(self._plan, args)  # may run an exec secret provider
        return await self._arun_plan(plan)

    def plan(self, args: Mapping[str, Any]) -> Plan | ToolResult:
        """What ``run(args)`` would start (argv, folder, environment and the secret values
        its output is redacted of), or the tool error it would give; runs nothing."""
        return self._plan(args)

    def run_dispatch(self, command: str, *, skill: str, args: str | None = None) -> ToolResult:
        """Run a skill's own slash command (``commandExec``) as ``skill``.

        ``args``, the user's raw text, is passed as ``$1`` (no positional parameter
        when it is None or empty) and as ``$SKILL_ARGS``; ``$0`` is the skill's name.
        It is never put into the command text, so the shell does not parse it.
        """
        extras = _dispatch_extras(skill, args)
        return self._run_plan(self._plan({"command": command, "skill": skill}, **extras))

    async def arun_dispatch(
        self, command: str, *, skill: str, args: str | None = None
    ) -> ToolResult:
        """:meth:`run_dispatch` for async code (cancelling it kills the process group)."""
        extras = _dispatch_extras(skill, args)
        plan = await asyncio.to_thread(self._plan, {"command": command, "skill": skill}, **extras)
        return await self._arun_plan(plan)

    def _run_plan(self, plan: Plan | ToolResult) -> ToolResult:
        if isinstance(plan, ToolResult):
            return plan
        runner = run_posix if os.name == "posix" else run_portable
        try:
            return self._finish(plan, *runner(plan, self._keep(plan)))
        except (OSError, ValueError) as exc:  # ValueError: an environment no process takes
            return ToolResult(f"exec: cannot start {plan.argv[0]}: {_reason(exc)}", True)

    async def _arun_plan(self, plan: Plan | ToolResult) -> ToolResult:
        if isinstance(plan, ToolResult):
            return plan
        try:
            return self._finish(plan, *await run_async(plan, self._keep(plan)))
        except (OSError, ValueError) as exc:
            return ToolResult(f"exec: cannot start {plan.argv[0]}: {_reason(exc)}", True)

    def _keep(self, plan: Plan) -> int:
        longest = max((len(s.encode("utf-8")) for s in plan.secrets), default=0)
        return self.max_output + longest

    def _find(self, name: str) -> Skill | None:
        by_name = next((s for s in self.skills if s.name == name), None)
        return by_name or next((s for s in self.skills if s.skill_key == name), None)

    def _plan(
        self,
        args: Mapping[str, Any],
        *,
        positional: Sequence[str] = (),
        extra_env: Mapping[str, str] | None = None,
    ) -> Plan | ToolResult:
        """``positional`` follows the command as ``$0 $1 …``; ``extra_env`` goes on top."""
        problem = _check_args(args, _EXEC_SCHEMA)
        if problem:
            return ToolResult(f"exec: {problem}", True)
        command: str = args["command"]
        if not command.strip():
            return ToolResult("exec: 'command' is empty", True)
        if any("\0" in v for v in (*positional, *(extra_env or {}).values())):
            return ToolResult(
                "exec: the arguments hold a NUL character; a command cannot get one", True
            )
        timeout = float(self.timeout_s if args.get("timeout") is None else args["timeout"])
        if not math.isfinite(timeout) or timeout <= 0:
            return ToolResult("exec: 'timeout' must be a finite number > 0", True)
        base = dict(os.environ if self.base_env is None else self.base_env)
        env: dict[str, str] = base
        secrets: tuple[str, ...] = ()
        detach = False
        default_cwd = self.workspace or Path.cwd()
        if args.get("skill"):
            skill = self._find(args["skill"])
            if skill is None:
                known = ", ".join(sorted(s.name for s in self.skills)[:_MAX_LISTING])
                return ToolResult(f"exec: no skill {args['skill']!r}; known: {known}", True)
            if skill.source == Source.REMOTE:
                # Skills from MCP servers are never executed implicitly (mcp-skills §4.2).
                return ToolResult(
                    f"exec: {skill.name!r} comes from a remote MCP server ({skill.origin}); "
                    "remote skills are not run as a skill. Review its files with read, then "
                    "run a command without 'skill' if the user approves it.",
                    True,
                )
            try:
                overlay = skill_env(
                    skill, config=self.config, base_env=base, resolver=self.resolver
                )
            except SecretError as exc:
                return ToolResult(f"exec: {exc}", True)
            env, secrets = overlay.apply(base), overlay.secret_values()
            default_cwd = skill.base_dir
            detach = detaches(skill)
        cwd = default_cwd
        if args.get("cwd"):
            cwd = Path(default_cwd, os.path.expanduser(args["cwd"].strip()))
        if not cwd.is_dir():
            return ToolResult(f"exec: working directory {cwd} does not exist", True)
        if extra_env:
            env = {**env, **extra_env}
        argv = (self.shell, "-c", command, *positional)
        return Plan(argv, str(cwd), env, min(timeout, self.max_timeout_s), secrets, detach)

    def _finish(self, plan: Plan, col: Collector, code: int | None, timed_out: bool) -> ToolResult:
        output = render_output(col, self.max_output, plan.secrets)
        if timed_out:
            head = f"timed out after {plan.timeout:g} s; the process group was killed"
        elif code is not None and code < 0:
            head = f"killed by signal {signal_name(-code)}"
        elif code:
            head = f"exit code {code}"
        else:
            return ToolResult(output or "(no output)")
        return ToolResult(head + ("\n" + output if output else ""), True)


def _reason(exc: OSError | ValueError) -> str:
    # Never the environment itself: it holds the skill's secrets.
    if isinstance(exc, OSError):
        return str(exc.strerror or exc)
    return "the command's environment is invalid (a name with = or NUL, or a NUL in a value)"


def _dispatch_extras(skill: str, args: str | None) -> dict[str, Any]:
    """The ``$0 $1`` and ``SKILL_ARGS`` of a ``commandExec`` run (text passed as data only)."""
    return {
        "positional": (skill, args) if args else (skill,),
        "extra_env": {ARGS_ENV: args or ""},
    }
