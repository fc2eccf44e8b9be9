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
local sources, are :mod:`skillbook.mcp.remote_catalog`.

Cache layout under ``cache_dir``: ``<sha256 hex>`` content-addressed, write-once,
read-only files, re-hashed on every use; ``servers/<label>-<hash>/skills/<scheme>/
<path>/`` the materialised skill folders (files re-hashed on every load, anything
not in the current manifests deleted); ``servers/<label>-<hash>/entries.json`` the
held entries. Remote skills are data, never code: no file gets an exec bit, install
specs, ``command-dispatch`` and ``skillKey`` overrides are dropped, and they rank
below every local source (a same-named local skill always wins).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import shutil
import stat
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from skillbook import diagnostics as dg
from skillbook._atomic import write_atomic
from skillbook._skill_reader import limit_list
from skillbook.diagnostics import Diagnostic
from skillbook.discover import DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE
from skillbook.mcp import _skillfiles as sf
from skillbook.mcp.client import (
    DEFAULT_MAX_PAGES,
    DEFAULT_TIMEOUT_S,
    ClientError,
    McpServerSpec,
    SkillEntry,
    SkillsClient,
    frontmatter_problem,
    limit_problem,
    open_client,
    parse_entry,
    verify_bytes,
)
from skillbook.model import Skill, Source

__all__ = [
    "DEFAULT_CACHE_DIRNAME",
    "RemoteLoad",
    "RemoteSkillSource",
]

_log = logging.getLogger("skillbook.mcp")

#: Folder name under the state dir (never a discovery root).
DEFAULT_CACHE_DIRNAME = "mcp-cache"
FILE_MODE = 0o444
DIR_MODE = 0o755
CACHE_ROOT_MODE = 0o700
_TMP_PREFIX = ".tmp-"
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


# --------------------------------------------------------------------------- disk


def _write_atomic(path: Path, data: bytes) -> None:
    """temp file in the same folder + rename: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    write_atomic(path, data, mode=FILE_MODE, prefix=_TMP_PREFIX, suffix="")


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def _read_if_digest(path: Path, digest: str) -> bytes | None:
    """The file's bytes if it is a regular file hashing to ``digest`` (re-hashed now)."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode):
            return None
        data = path.read_bytes()
    except OSError:
        return None
    return data if sf.digest_of(data) == digest else None


class ContentStore:
    """``<root>/<hex>``: verified bytes by digest; a bad copy is deleted, never served."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, digest: str) -> Path:
        return self.root / digest.removeprefix(sf.DIGEST_PREFIX)

    def get(self, digest: str) -> bytes | None:
        path = self.path(digest)
        data = _read_if_digest(path, digest)
        if data is None and path.exists():
            _unlink_quietly(path)
        return data

    def put(self, digest: str, data: bytes) -> None:
        _write_atomic(self.path(digest), data)


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
        self.store = ContentStore(self.cache_dir)
        self.server_dir = self.cache_dir / "servers" / spec.key
        self.skills_dir = self.server_dir / "skills"
        self.entries_file = self.server_dir / "entries.json"
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
        self._prune(accepted)
        self._held = accepted
        held: list[SkillEntry] = []
        for entry in accepted:
            if self.prefetch:
                skill = await self._materialise_skill(client, entry, state)
            else:
                skill = self._build_skill(entry, _synthetic_skill_md(entry), state)
            if skill is not None:
                state.skills.append(skill)
                state.entries.append(entry)
                held.append(entry)
        self._save_entries(held)

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
        return self.skills_dir.joinpath(*entry.segments[:-1])

    def _file_path(self, entry: SkillEntry, uri: str) -> Path:
        parts = entry.rel_parts(uri)
        assert parts is not None  # parse_entry checked every manifest URI
        return self.skill_dir(entry).joinpath(*parts)

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
        conflict = self._nested_conflict(entry, target, item.digest)
        if conflict is not None:
            state.diags.append(conflict)
            return None
        if _read_if_digest(target, item.digest) is None:
            _write_atomic(target, data)
        return data

    def _nested_conflict(self, entry: SkillEntry, target: Path, digest: str) -> Diagnostic | None:
        """A file of ``entry`` inside a nested skill's folder may be written only when the
        nested skill's own manifest lists it with the same bytes: a parent never changes
        or adds the files of a skill it contains."""
        own = self.skill_dir(entry)
        owner: SkillEntry | None = None
        for other in self._held:
            folder = self.skill_dir(other)
            if (
                folder != own
                and folder.is_relative_to(own)
                and target.is_relative_to(folder)
                and (owner is None or folder.is_relative_to(self.skill_dir(owner)))
            ):
                owner = other
        if owner is None:
            return None
        theirs = next(
            (i for i in owner.resources or () if self._file_path(owner, i.uri) == target), None
        )
        if theirs is not None and theirs.digest == digest:
            return None
        how = "lists other bytes for it" if theirs is not None else "does not list it"
        return dg.error(
            "mcp.nested-conflict",
            f"MCP server {self.spec.name!r}: {target.relative_to(own).as_posix()} of "
            f"{entry.uri} lies in the folder of the nested skill {owner.uri}, whose manifest "
            f"{how}; not written (a skill's files come only from its own manifest)",
            skill=entry.name,
        )

    async def _materialise_skill(
        self, client: SkillsClient, entry: SkillEntry, state: _State
    ) -> Skill | None:
        data = await self._verified(client, entry, entry.uri, state)
        return None if data is None else self._build_skill(entry, data, state)

    def _build_skill(self, entry: SkillEntry, data: bytes, state: _State) -> Skill | None:
        from skillbook.parse import parse_skill_text

        file_path = self._file_path(entry, entry.uri)
        parsed = parse_skill_text(data, path=file_path)
        state.diags.extend(parsed.diagnostics)
        if not parsed.description:
            return None
        parsed, dropped = _defang(parsed)
        if dropped:
            state.diags.append(
                dg.info(
                    "mcp.untrusted-fields",
                    f"remote skill from {self.spec.name!r}: {', '.join(dropped)} ignored "
                    "(remote skills never install, dispatch or borrow another config key)",
                    path=file_path,
                    skill=entry.name,
                )
            )
        base = self.skill_dir(entry)
        return Skill(
            name=entry.name,
            description=parsed.description,
            file_path=file_path,
            base_dir=base,
            source=Source.REMOTE,
            parsed=parsed,
            real_dir=base,
            origin=self.spec.origin,
        )

    def _prune(self, entries: Sequence[SkillEntry]) -> None:
        """Delete every materialised file that no current manifest lists with its bytes."""
        expected: dict[Path, str] = {}
        # Deeper skills last: a nested skill's manifest decides the files in its folder.
        for entry in sorted(entries, key=lambda e: len(e.segments)):
            for item in entry.resources or ():
                expected[self._file_path(entry, item.uri)] = item.digest
        if not self.skills_dir.is_dir():
            return
        for folder, dirs, files in os.walk(self.skills_dir, topdown=False):
            here = Path(folder)
            for name in files + [d for d in dirs if (here / d).is_symlink()]:
                path = here / name
                if name.startswith(_TMP_PREFIX):
                    continue
                digest = expected.get(path)
                if digest is None or _read_if_digest(path, digest) is None:
                    _unlink_quietly(path)
            if here != self.skills_dir and not any(here.iterdir()):
                with contextlib.suppress(OSError):
                    here.rmdir()

    def _save_entries(self, entries: Iterable[SkillEntry]) -> None:
        doc = {
            "server": self.spec.origin,
            "skills": [
                {"dir": self.skill_dir(e).relative_to(self.skills_dir).as_posix(), **e.to_json()}
                for e in entries
            ],
        }
        _write_atomic(self.entries_file, json.dumps(doc, ensure_ascii=False).encode("utf-8"))

    def held_entries(self) -> list[SkillEntry]:
        """Every entry of ``entries.json`` (the skills of the last load)."""
        try:
            doc = json.loads(self.entries_file.read_bytes())
        except (OSError, ValueError):
            return []
        items = doc.get("skills", []) if isinstance(doc, dict) else []
        parsed = (parse_entry(item) for item in items if isinstance(item, dict))
        return [e for e in parsed if isinstance(e, SkillEntry)]

    def held_entry(self, skill: Skill) -> SkillEntry | None:
        """The entry ``skill`` was loaded from (``entries.json``), or None."""
        try:
            doc = json.loads(self.entries_file.read_bytes())
            rel = skill.base_dir.relative_to(self.skills_dir).as_posix()
        except (OSError, ValueError):
            return None
        for item in doc.get("skills", []) if isinstance(doc, dict) else []:
            if isinstance(item, dict) and item.get("dir") == rel:
                entry = parse_entry(item)
                return entry if isinstance(entry, SkillEntry) else None
        return None

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
        uri = _manifest_uri(entry, skill.base_dir, ref)
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
        shutil.rmtree(self.server_dir, ignore_errors=True)


def _manifest_uri(entry: SkillEntry, base: Path, ref: str | os.PathLike[str]) -> str | None:
    raw = os.fspath(ref)
    if os.path.isabs(raw):
        try:
            raw = Path(os.path.normpath(raw)).relative_to(base).as_posix()
        except ValueError:
            return None
    rel = sf.normalize_relative(raw)
    if rel is None:
        return None
    parts = tuple(rel.split("/"))
    return next((i.uri for i in entry.resources or () if entry.rel_parts(i.uri) == parts), None)


def _synthetic_skill_md(entry: SkillEntry) -> bytes:
    """A frontmatter-only SKILL.md from the entry, for building a skill before any fetch."""
    import yaml

    text = yaml.safe_dump(
        dict(entry.frontmatter), sort_keys=False, allow_unicode=True, width=1 << 16
    )
    return f"---\n{text}---\n".encode()


def _defang(parsed: Any) -> tuple[Any, list[str]]:
    """Drop the fields through which skill text could run code or take another's config."""
    dropped: list[str] = []
    meta = parsed.metadata
    if meta is not None and (meta.install or meta.skill_key is not None):
        if meta.install:
            dropped.append("install specs")
        if meta.skill_key is not None:
            dropped.append("skillKey")
        meta = dataclasses.replace(meta, install=None, skill_key=None)
    dispatch = parsed.dispatch
    if dispatch is not None:
        dropped.append("command-dispatch")
        dispatch = None
    return dataclasses.replace(parsed, metadata=meta, dispatch=dispatch), dropped


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
