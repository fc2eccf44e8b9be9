"""Skills from remote MCP servers as a skill source (``source="mcp-remote"``).

Input: configured :class:`~skillbook.mcp.client.McpServerSpec` values and a cache
folder the host alone writes (``<state dir>/mcp-cache``, outside every discovery
root). Output: :class:`~skillbook.model.Skill` values whose ``file_path`` points into
a per-server materialised folder, plus diagnostics; never an exception for a bad
server or skill.

Per server: connect, require the Skills extension, page through ``skills/list``,
validate every entry, and fetch each listed skill's ``SKILL.md`` (the catalog needs
its name, description and gates) unless the content cache already holds bytes with
the manifest's digest. Each fetched file is checked (URI echo, size, digest, and
the frontmatter field by field) before it is cached; a mismatch refuses the skill.
Other files are fetched only when read (:meth:`RemoteSkillSource.fetch`), and only
if the held manifest lists them. Several servers together, and their place below the
local sources, are :mod:`skillbook.mcp.remote_catalog`; the cache on disk is
:mod:`skillbook.mcp._remote_cache`, and turning an entry into a skill
:mod:`skillbook.mcp._remote_skills`.

Cache layout under ``cache_dir``: ``<sha256 hex>`` content-addressed, write-once,
read-only files, re-hashed on every use; ``servers/<label>-<hash>/skills/<scheme>/
<path>/`` the materialised skill folders (files re-hashed on every load, anything
not in the current manifests deleted); ``servers/<label>-<hash>/entries.json`` the
held entries. Remote skills are data, never code: no file gets an exec bit, install
specs, ``command-dispatch`` and ``skillKey`` overrides are dropped, and they rank
below every local source (a same-named local skill always wins).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from skillbook import diagnostics as dg
from skillbook.config.limits import DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE
from skillbook.diagnostics import Diagnostic
from skillbook.mcp import _skillfiles as sf
from skillbook.mcp._entries import (
    SkillEntry,
    frontmatter_problem,
    limit_problem,
    parse_entry,
    verify_bytes,
)
from skillbook.mcp._remote_cache import (
    CACHE_ROOT_MODE,
    ServerCache,
    read_if_digest,
    write_file,
)
from skillbook.mcp._remote_skills import build_skill, manifest_uri, synthetic_skill_md
from skillbook.mcp.client import (
    DEFAULT_MAX_PAGES,
    DEFAULT_TIMEOUT_S,
    ClientError,
    McpServerSpec,
    SkillsClient,
    open_client,
)
from skillbook.model import Skill
from skillbook.pipeline.discovery.skill_reader import limit_list

__all__ = [
    "DEFAULT_CACHE_DIRNAME",
    "RemoteLoad",
    "RemoteSkillSource",
]

_log = logging.getLogger("skillbook.mcp")

#: Folder name under the state dir (never a discovery root).
DEFAULT_CACHE_DIRNAME = "mcp-cache"
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class RemoteLoad:
    """What one server (or all of them) gave: skills, entries aligned with them, findings."""

    skills: tuple[Skill, ...] = ()
    entries: tuple[SkillEntry, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    #: Files read over the wire / served from the content cache.
    fetched: int = 0
    cache_hits: int = 0


# --------------------------------------------------------------------------- one server


def _run_sync(fn: Callable[[], Awaitable[_T]]) -> _T:
    """Run ``fn`` on a private event loop in a worker thread (safe inside a running loop)."""
    import anyio

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillbook-mcp") as pool:
        return pool.submit(anyio.run, fn).result()


class RemoteSkillSource:
    """The skills of one configured MCP server, materialised under ``cache_dir``."""

    def __init__(
        self,
        spec: McpServerSpec,
        *,
        cache_dir: Path,
        timeout_s: float | None = None,
        limits: sf.FileLimits = sf.DEFAULT_LIMITS,
        max_pages: int = DEFAULT_MAX_PAGES,
        prefetch: bool = True,
        max_skills: int = DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.spec = spec
        #: Where the server's ``tokenEnv`` is read when connecting (None: ``os.environ``).
        self.env = env
        #: ``skills.limits.maxSkillsLoadedPerSource``: a server is one source.
        self.max_skills = max_skills
        #: Fetch each listed SKILL.md while loading (the parsed file feeds the catalog).
        #: False follows the extension's lazy retrieval: skills are built from the
        #: entry's frontmatter and SKILL.md comes with the first :meth:`fetch`.
        self.prefetch = prefetch
        self.cache_dir = Path(cache_dir)
        self.timeout_s = timeout_s or spec.timeout_s or DEFAULT_TIMEOUT_S
        self.limits = limits
        self.max_pages = max_pages
        #: The server's materialised folders and ``entries.json``, and the content store.
        self.layout = ServerCache(self.cache_dir, spec.key)
        self.store = self.layout.store
        self.server_dir = self.layout.server_dir
        self.skills_dir = self.layout.skills_dir
        self.entries_file = self.layout.entries_file
        #: The entries of this server's skills (a nested skill owns its own folder).
        self._held: Sequence[SkillEntry] = ()

    # ----------------------------------------------------------------- loading

    def load(self) -> RemoteLoad:
        return _run_sync(self.aload)

    async def aload(self) -> RemoteLoad:
        import anyio

        state = _State()
        try:
            with anyio.fail_after(self.timeout_s):
                async with open_client(self.spec, timeout_s=self.timeout_s, env=self.env) as client:
                    await self._load(client, state)
        except ClientError as exc:
            severity = dg.warning if exc.code == "mcp.no-skills-capability" else dg.error
            state.diags.append(severity(exc.code, exc.message))
        except TimeoutError:
            state.diags.append(
                dg.error(
                    "mcp.server-unreachable",
                    f"MCP server {self.spec.name!r} at {self.spec.target} did not answer "
                    f"within {self.timeout_s:g}s",
                )
            )
        except OSError as exc:
            state.diags.append(dg.error("mcp.cache-error", f"MCP cache {self.cache_dir}: {exc}"))
        except Exception as exc:
            # A server's nonsense and a skillbook bug look alike here: keep the traceback.
            _log.warning("MCP server %s failed", self.spec.name, exc_info=exc)
            state.diags.append(
                dg.error(
                    "mcp.invalid-response",
                    f"MCP server {self.spec.name!r} at {self.spec.target} failed: "
                    f"{type(exc).__name__}: {exc}",
                )
            )
        return state.result()

    async def _load(self, client: SkillsClient, state: _State) -> None:
        accepted: list[SkillEntry] = []
        for raw in await client.list_entries(max_pages=self.max_pages):
            entry = self._accept(raw, state)
            if entry is not None:
                accepted.append(entry)
        if len(accepted) > self.max_skills:
            # As for a local root: the first N in the server's order, the rest named.
            dropped = [e.uri for e in accepted[self.max_skills :]]
            state.diags.append(
                dg.warning(
                    "mcp.over-limit",
                    f"MCP server {self.spec.name!r} lists {len(accepted)} skills, over "
                    f"`skills.limits.maxSkillsLoadedPerSource` = {self.max_skills}; not "
                    f"loaded: {limit_list(dropped)}",
                )
            )
            accepted = accepted[: self.max_skills]
        self.cache_dir.mkdir(parents=True, exist_ok=True, mode=CACHE_ROOT_MODE)
        self.layout.prune(accepted)
        self._held = accepted
        held: list[SkillEntry] = []
        for entry in accepted:
            if self.prefetch:
                skill = await self._materialise_skill(client, entry, state)
            else:
                skill = self._build_skill(entry, synthetic_skill_md(entry), state)
            if skill is not None:
                state.skills.append(skill)
                state.entries.append(entry)
                held.append(entry)
        self.layout.save_entries(self.spec.origin, held)

    def _accept(self, raw: Any, state: _State) -> SkillEntry | None:
        entry = parse_entry(raw)
        where = f"MCP server {self.spec.name!r}"
        if isinstance(entry, str):
            uri = raw.get("uri") if isinstance(raw, dict) else None
            state.diags.append(
                dg.error("mcp.invalid-entry", f"{where}: skill entry {uri!r} refused: {entry}")
            )
            return None
        if entry.resources is None:
            state.diags.append(
                dg.warning(
                    "mcp.dynamic-skill",
                    f"{where}: {entry.uri} is dynamic (no digests to verify); not loaded",
                    skill=entry.name,
                )
            )
            return None
        over = limit_problem(
            entry, max_files=self.limits.max_files, max_bytes=self.limits.max_bytes
        )
        if over is not None:
            state.diags.append(
                dg.warning(
                    "mcp.skill-over-limit",
                    f"{where}: {entry.uri} not loaded: {over}",
                    skill=entry.name,
                )
            )
            return None
        return entry

    def skill_dir(self, entry: SkillEntry) -> Path:
        return self.layout.skill_dir(entry)

    def _file_path(self, entry: SkillEntry, uri: str) -> Path:
        return self.layout.file_path(entry, uri)

    async def _verified(
        self, client: SkillsClient | None, entry: SkillEntry, uri: str, state: _State
    ) -> bytes | None:
        """The file's bytes from the content cache or the server, checked; None if refused."""
        item = entry.item(uri)
        if item is None:
            state.diags.append(
                dg.error("mcp.unlisted-file", f"{uri} is not in the held manifest; not read")
            )
            return None
        data = self.store.get(item.digest)
        if data is not None:
            state.cache_hits += 1
        else:
            if client is None:
                return None
            try:
                data = await client.read(uri, size=item.size)
            except ClientError as exc:
                state.diags.append(dg.error(exc.code, exc.message, skill=entry.name))
                return None
            state.fetched += 1
            problem = verify_bytes(entry, uri, data)
            if problem is not None:
                state.diags.append(
                    dg.error(
                        problem.code,
                        f"MCP server {self.spec.name!r}: {problem.message}; refused, not cached",
                        skill=entry.name,
                    )
                )
                return None
            self.store.put(item.digest, data)
        if uri == entry.uri:
            why = frontmatter_problem(entry, data)
            if why is not None:
                state.diags.append(
                    dg.error(
                        "mcp.frontmatter-mismatch",
                        f"MCP server {self.spec.name!r}: {entry.uri}: {why}; refused",
                        skill=entry.name,
                    )
                )
                return None
        target = self._file_path(entry, uri)
        conflict = self.layout.nested_conflict(entry, target, item.digest, self._held, self.spec)
        if conflict is not None:
            state.diags.append(conflict)
            return None
        if read_if_digest(target, item.digest) is None:
            write_file(target, data)
        return data

    async def _materialise_skill(
        self, client: SkillsClient, entry: SkillEntry, state: _State
    ) -> Skill | None:
        data = await self._verified(client, entry, entry.uri, state)
        return None if data is None else self._build_skill(entry, data, state)

    def _build_skill(self, entry: SkillEntry, data: bytes, state: _State) -> Skill | None:
        return build_skill(
            entry,
            data,
            spec=self.spec,
            file_path=self._file_path(entry, entry.uri),
            base_dir=self.skill_dir(entry),
            diags=state.diags,
        )

    def held_entries(self) -> list[SkillEntry]:
        """Every entry of ``entries.json`` (the skills of the last load)."""
        return self.layout.held_entries()

    def held_entry(self, skill: Skill) -> SkillEntry | None:
        """The entry ``skill`` was loaded from (``entries.json``), or None."""
        return self.layout.held_entry(skill)

    # ----------------------------------------------------------------- lazy reads

    def fetch(self, skill: Skill, ref: str | os.PathLike[str]) -> Path | Diagnostic:
        """Materialise one more file of a loaded skill (on first read); see :meth:`afetch`."""
        return _run_sync(lambda: self.afetch(skill, ref))

    async def afetch(self, skill: Skill, ref: str | os.PathLike[str]) -> Path | Diagnostic:
        """The local path of ``ref`` (relative to the skill root, or a path inside its
        folder), fetched and verified if needed. Files the held manifest does not list
        are refused without asking the server (§4.4 acting window)."""
        import anyio

        entry = self.held_entry(skill)
        self._held = self.held_entries()
        if entry is None:
            return dg.error(
                "mcp.unlisted-file",
                f"{skill.name!r} is not a loaded skill of MCP server {self.spec.name!r}",
                skill=skill.name,
            )
        uri = manifest_uri(entry, skill.base_dir, ref)
        if uri is None:
            return dg.error(
                "mcp.unlisted-file",
                f"{os.fspath(ref)!r} is not a file of remote skill {skill.name!r} "
                f"(not in the manifest of {entry.uri}); not read",
                skill=skill.name,
            )
        state = _State()
        target = self._file_path(entry, uri)
        data = await self._verified(None, entry, uri, state)
        if data is None:
            try:
                with anyio.fail_after(self.timeout_s):
                    async with open_client(
                        self.spec, timeout_s=self.timeout_s, env=self.env
                    ) as client:
                        data = await self._verified(client, entry, uri, state)
            except ClientError as exc:
                return dg.error(exc.code, exc.message, skill=skill.name)
            except TimeoutError:
                return dg.error(
                    "mcp.server-unreachable",
                    f"MCP server {self.spec.name!r} did not answer within {self.timeout_s:g}s",
                )
        if data is None:
            return state.diags[-1] if state.diags else dg.error("mcp.invalid-response", uri)
        return target

    def forget(self) -> None:
        """Delete this server's materialised skills (call when the server is removed)."""
        self.layout.forget()


@dataclass(slots=True)
class _State:
    skills: list[Skill] = dataclasses.field(default_factory=list)
    entries: list[SkillEntry] = dataclasses.field(default_factory=list)
    diags: list[Diagnostic] = dataclasses.field(default_factory=list)
    fetched: int = 0
    cache_hits: int = 0

    def result(self) -> RemoteLoad:
        return RemoteLoad(
            tuple(self.skills),
            tuple(self.entries),
            tuple(self.diags),
            self.fetched,
            self.cache_hits,
        )
