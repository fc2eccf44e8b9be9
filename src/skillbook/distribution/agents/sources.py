"""Where an ``install --for`` skill comes from, and what the locks say about it.

Input: the source as typed (anything ``skillbook install`` takes: a registry slug, a git
URL or ``owner/repo[/path][@ref]``, a folder, a ``.zip``/``.tar.gz`` file or URL), the
skills picked with ``--skill``, and a :class:`Fetcher` (registry endpoint, install
options). Output: one :class:`Fetched` per skill: a folder holding it and the entries
the project lock (``skills-lock.json``) and the global lock record for it, spelled as
``skills@1.6.0`` spells them:

- a folder: ``{"source", "sourceType": "local"}`` in the project lock, nothing globally;
- git: ``{"source", "sourceUrl"?, "ref"?, "sourceType", "skillPath"}`` where
  ``sourceType`` is ``github`` (``owner/repo`` shorthands and github.com URLs; the source
  is ``owner/repo``), ``gitlab`` (gitlab.com) or ``git`` (the source is the URL, also
  given as ``sourceUrl``); globally ``{"source", "sourceType", "sourceUrl", "ref"?,
  "skillPath"}`` (then ``skillFolderHash``, the times), only for URLs with an
  ``owner/repo`` path, as the other tool (a ``file://`` URL has none);
- registry slugs and archives, which the other tool does not install: ``sourceType``
  ``clawhub`` (``registry``, ``version``) and ``archive`` (``sha256``), so that
  ``update --for`` can fetch them again.

Remote sources are fetched by the installer of ``skillbook install``
(:meth:`skillbook.distribution.registry.installer.Installer.stage`: download, verify,
the archive and git rules) into a scratch folder removed afterwards. Refusals are
:class:`~skillbook.distribution.agents.AgentsError` (the registry's codes kept).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from skillbook.distribution.agents import AgentsError

if TYPE_CHECKING:
    from skillbook.distribution.http import RetryPolicy
    from skillbook.distribution.progress import Progress
    from skillbook.distribution.registry.endpoint import Endpoint
    from skillbook.distribution.registry.installer import InstallOptions
    from skillbook.distribution.registry.refs import SourceRef
    from skillbook.distribution.registry.staging import Staged

__all__ = ["Fetched", "Fetcher", "fetch", "skill_name"]

#: ``user@host:path``, git's scp-like address.
_SCP: Final = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!//)")


@dataclass(frozen=True, slots=True)
class Fetcher:
    """How remote sources are reached (what ``skillbook install`` would use)."""

    endpoint: Endpoint
    options: InstallOptions
    env: Mapping[str, str] = field(default_factory=dict)
    say: Callable[[str], None] = lambda _line: None
    retry: RetryPolicy | None = None
    progress: Progress | None = None


@dataclass(frozen=True, slots=True)
class Fetched:
    #: The skill's ``name:`` (the lock key).
    name: str
    folder: Path
    #: The project lock entry, keys in the other tool's order, without ``computedHash``.
    project_entry: dict[str, Any]
    #: The global lock entry without ``skillFolderHash`` and the times; None: not recorded.
    global_entry: dict[str, Any] | None
    #: ``skillFolderHash`` is the folder's git tree id (GitHub sources), not ``computedHash``.
    tree_hash: bool = False
    #: A folder on this machine (it must not be where the skill goes).
    local: bool = False
    warnings: tuple[str, ...] = ()


def skill_name(folder: Path, fallback: str | None = None) -> str:
    """The ``name:`` of the skill in ``folder`` (else ``fallback``, else its folder name)."""
    from skillbook.distribution.archives.layout import find_marker
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    marker = find_marker(folder) or "SKILL.md"
    try:
        raw = (folder / marker).read_bytes()
    except OSError as exc:
        raise AgentsError("agents.io-error", f"could not read {folder / marker}: {exc}") from exc
    parsed = parse_skill_text(raw, path=folder / marker)
    return parsed.name or fallback or folder.name


def _picked(found: list[Fetched], picks: tuple[str, ...], where: str) -> list[Fetched]:
    if not picks:
        return found
    from skillbook.distribution.agents.layout import sanitize_name

    chosen: list[Fetched] = []
    for wanted in picks:
        match = [
            f
            for f in found
            if wanted in (f.name, f.folder.name) or sanitize_name(wanted) == sanitize_name(f.name)
        ]
        if not match:
            listing = ", ".join(sorted(f.name for f in found))
            raise AgentsError(
                "agents.skill-not-found", f'no skill "{wanted}" in {where} (it holds: {listing})'
            )
        chosen += [m for m in match if m not in chosen]
    return chosen


def _local(source: Path, picks: tuple[str, ...]) -> list[Fetched]:
    source = source.resolve()
    if not source.is_dir():
        raise AgentsError("agents.no-skill", f"{source} is not a folder")
    if (source / "SKILL.md").is_file():
        folders = [source]
    else:
        try:
            folders = sorted(p for p in source.iterdir() if (p / "SKILL.md").is_file())
        except OSError as exc:
            raise AgentsError("agents.io-error", f"could not read {source}: {exc}") from exc
    if not folders:
        raise AgentsError(
            "agents.no-skill", f"{source} holds no SKILL.md (nor do its immediate subfolders)"
        )
    # The `skills` CLI needs a name and a description and skips a skill without them
    # (when none is left it fails); skipping is said, never silent.
    named = [(f, _valid_name(f)) for f in folders]
    skipped = tuple(
        f"skipped {f / 'SKILL.md'}: it needs a name and a description in its frontmatter"
        for f, name in named
        if name is None
    )
    if len(skipped) == len(named):
        raise AgentsError(
            "agents.no-skill",
            f"no valid skill in {source}: a SKILL.md needs a name and a description "
            "in its frontmatter",
        )
    # The lock records the folder given on the command line, as the other tool does.
    entry = {"source": str(source), "sourceType": "local"}
    found = [
        Fetched(name, f, dict(entry), None, local=True) for f, name in named if name is not None
    ]
    found[0] = replace(found[0], warnings=skipped)  # said once, with the first skill
    return _picked(found, picks, str(source))


def _valid_name(folder: Path) -> str | None:
    """The skill's ``name:``; None when it has no ``name:`` or no ``description:``."""
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    try:
        raw = (folder / "SKILL.md").read_bytes()
    except OSError as exc:
        raise AgentsError(
            "agents.io-error", f"could not read {folder / 'SKILL.md'}: {exc}"
        ) from exc
    parsed = parse_skill_text(raw, path=folder / "SKILL.md")
    return parsed.name if parsed.name and parsed.description else None


def _owner_repo(path: str) -> str | None:
    parts = [p for p in path.strip("/").removesuffix(".git").split("/") if p]
    return "/".join(parts) if len(parts) >= 2 else None


def _git_entries(
    raw: str, url: str, ref: str | None, skill_path: str
) -> tuple[dict[str, Any], dict[str, Any] | None, bool]:
    """The project and global entries of a git skill, as the other tool spells them."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    scp = _SCP.match(url)
    shorthand = "://" not in raw and not _SCP.match(raw)
    if shorthand or host == "github.com":
        owner_repo = "/".join(raw.partition("@")[0].split("/")[:2]) if shorthand else None
        owner_repo = (owner_repo or _owner_repo(parts.path) or "").removesuffix(".git")
        kind, source, source_url = "github", owner_repo, f"https://github.com/{owner_repo}.git"
        normalized: str | None = owner_repo
    else:
        if host == "gitlab.com":
            kind, url = (
                "gitlab",
                f"https://gitlab.com/{parts.path.strip('/').removesuffix('.git')}.git",
            )
        else:
            kind = "git"
        source = source_url = url
        if scp:
            normalized = _owner_repo(url.split(":", 1)[1])
        elif parts.scheme in ("http", "https", "ssh"):
            normalized = _owner_repo(parts.path)
        else:
            normalized = None
    project: dict[str, Any] = {"source": source}
    if kind in ("git", "gitlab"):
        project["sourceUrl"] = source_url
    if ref:
        project["ref"] = ref
    project.update(sourceType=kind, skillPath=skill_path)
    glob: dict[str, Any] | None = None
    if normalized is not None:
        glob = {"source": source, "sourceType": kind, "sourceUrl": source_url}
        if ref:
            glob["ref"] = ref
        glob["skillPath"] = skill_path
    return project, glob, kind == "github"


def _from_staged(raw: str, ref: SourceRef, staged: Staged) -> Fetched:
    from skillbook.distribution.registry.refs import ArchiveRef, GitRef

    name = skill_name(staged.path, staged.name)
    warnings = tuple(staged.warnings)
    source = staged.origin_head.get("source")
    if isinstance(ref, GitRef) and isinstance(source, dict):
        sub = source.get("subpath")
        skill_path = f"{sub}/SKILL.md" if sub else "SKILL.md"
        project, glob, tree = _git_entries(raw, ref.public_url, ref.ref, skill_path)
        return Fetched(name, staged.path, project, glob, tree, warnings=warnings)
    if isinstance(ref, ArchiveRef) and isinstance(source, dict):
        location = source.get("url") or source.get("path")
        entry = {"source": location, "sourceType": "archive", "sha256": source.get("sha256")}
        return Fetched(name, staged.path, entry, dict(entry), warnings=warnings)
    entry = {
        "source": str(ref),
        "sourceType": "clawhub",
        "registry": staged.origin_head.get("registry"),
        "version": staged.version,
    }
    return Fetched(name, staged.path, entry, dict(entry), warnings=warnings)


@contextlib.contextmanager
def fetch(
    source: str | SourceRef,
    fetcher: Fetcher | None,
    *,
    picks: tuple[str, ...] = (),
    registry: str | None = None,
) -> Iterator[list[Fetched]]:
    """The skills of ``source`` (all of them, or those ``picks`` names), in folders that
    exist until the ``with`` block ends. ``registry``: fetch a registry skill from there
    (an update, from the registry its entry names)."""

    from skillbook.distribution.registry import RegistryError
    from skillbook.distribution.registry.refs import (
        DEFAULT_GIT_BASE,
        FolderRef,
        GitRef,
        RegistryRef,
        parse_ref,
    )

    git_base = fetcher.options.git_base if fetcher is not None else DEFAULT_GIT_BASE
    try:
        ref = parse_ref(source, git_base=git_base) if isinstance(source, str) else source
    except RegistryError as exc:
        raise AgentsError(exc.code, exc.message) from None
    raw = source if isinstance(source, str) else str(source)
    if isinstance(ref, FolderRef):
        yield _local(Path(ref.path).expanduser(), picks)
        return
    if fetcher is None:
        raise AgentsError("agents.source-unsupported", f"{raw}: no registry or network set up")
    if isinstance(ref, RegistryRef) and picks:
        raise AgentsError(
            "agents.skill-not-found", "--skill picks skills of a repository or folder"
        )
    from skillbook.distribution.registry.installer import Installer
    from skillbook.distribution.registry.workdir import Workdir

    scratch = Path(tempfile.mkdtemp(prefix="skillbook-for-"))
    try:
        (scratch / "skills").mkdir()
        installer = Installer(
            Workdir(scratch),
            fetcher.endpoint,
            progress=fetcher.progress,
            say=fetcher.say,
            retry=fetcher.retry,
            env=dict(fetcher.env),
        )
        options = fetcher.options
        if isinstance(ref, GitRef):
            # Every skill of the repository unless --skill names some, as `skills add -y`.
            options = replace(options, skills=picks, all_skills=not picks)
        try:
            with installer.session():
                staged = installer.stage(ref, options, registry=registry)
        except RegistryError as exc:
            raise AgentsError(exc.code, exc.message) from None
        except OSError as exc:  # the scratch folder (disk full, permissions)
            raise AgentsError("agents.io-error", f"could not fetch {raw}: {exc}") from exc
        found = [_from_staged(raw, ref, item) for item in staged]
        yield found if isinstance(ref, GitRef) else _picked(found, picks, raw)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
