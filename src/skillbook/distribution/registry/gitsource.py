"""Skills from git repositories, fetched with the ``git`` executable.

Input: a :class:`~skillbook.distribution.registry.refs.GitRef` (URL, optional folder, optional
branch, tag or commit). Output: a shallow checkout in a folder the caller owns and
the commit it is at; :func:`list_skills` then says which folders of it are skills.
``git`` runs without a terminal prompt (``GIT_TERMINAL_PROMPT=0``), without
submodules, and with the ``ext::`` transport refused; the user's own git
configuration (credentials, proxies) applies. Nothing of the checkout is used
before :mod:`skillbook.distribution.registry.tree` copies it with the archive rules.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from skillbook.base.fs import read_file_at_most
from skillbook.distribution.archives.layout import find_marker
from skillbook.distribution.registry import RegistryError, RegistryUnavailable
from skillbook.distribution.registry.refs import GitRef, redact_url

__all__ = ["DEFAULT_GIT_TIMEOUT", "RepoSkill", "fetch_checkout", "list_skills"]

DEFAULT_GIT_TIMEOUT: Final = 300.0
#: How deep below the repository (or its folder) skills are looked for.
MAX_DEPTH: Final = 6
_SKIP_DIRS: Final = frozenset({"node_modules", "__pycache__"})


def _git(
    args: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    git: str,
    secrets: tuple[str, ...] = (),
) -> str:
    full = [git, "-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null", *args]
    run_env = {**env, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "LC_ALL": "C"}
    try:
        proc = subprocess.run(
            full,
            cwd=cwd,
            env=run_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise RegistryError("registry.git-missing", f"git not found on PATH ({git})") from None
    except subprocess.TimeoutExpired:
        raise RegistryUnavailable(
            "registry.git-failed", f"git {args[0]} timed out after {timeout:g} s"
        ) from None
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        last = detail[-1] if detail else f"exit {proc.returncode}"
        for secret in secrets:
            last = last.replace(secret, redact_url(secret))
        raise RegistryError("registry.git-failed", f"git {args[0]} failed: {last}")
    return proc.stdout.strip()


def fetch_checkout(
    ref: GitRef,
    dest: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_GIT_TIMEOUT,
    git: str | None = None,
) -> str:
    """Fetch ``ref`` (depth 1) into the new folder ``dest``; returns the commit sha."""
    dest = dest.absolute()
    exe = git or shutil.which("git", path=(env or os.environ).get("PATH")) or "git"
    environ = dict(os.environ if env is None else env)
    run = functools.partial(_git, env=environ, timeout=timeout, git=exe)
    run(["init", "-q", str(dest)], cwd=dest.parent)
    fetch = ["fetch", "-q", "--depth", "1", "--no-tags", ref.url, ref.ref or "HEAD"]
    run(fetch, cwd=dest, secrets=(ref.url,))
    run(["checkout", "-q", "--detach", "FETCH_HEAD"], cwd=dest)
    return run(["rev-parse", "HEAD^{commit}"], cwd=dest)


@dataclass(frozen=True, slots=True)
class RepoSkill:
    """One skill folder of a repository: its path inside it and its folder name."""

    path: str
    name: str
    #: The frontmatter ``name`` (what ``--skill`` also matches), if it has one.
    declared: str | None = None


def _declared_name(folder: Path, marker: str) -> str | None:
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    try:
        data = read_file_at_most(folder / marker, 256 * 1024)
    except OSError:
        return None
    value = parse_skill_text(data).frontmatter.get("name")
    return value.strip() if isinstance(value, str) and value.strip() else None


def list_skills(root: Path, *, fallback_name: str) -> list[RepoSkill]:
    """The skill folders under ``root``: ``root`` itself when it holds a ``SKILL.md``
    (then it is the only one), else every folder with one, depth-first, not below
    another skill; dot folders and ``node_modules`` are not entered."""
    marker = find_marker(root)
    if marker is not None:
        return [RepoSkill("", fallback_name, _declared_name(root, marker))]
    found: list[RepoSkill] = []

    def walk(folder: Path, rel: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            return
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return
        for name in names:
            child = folder / name
            if (
                name.startswith(".")
                or name in _SKIP_DIRS
                or child.is_symlink()
                or not child.is_dir()
            ):
                continue
            path = f"{rel}/{name}" if rel else name
            mark = find_marker(child)
            if mark is not None:
                found.append(RepoSkill(path, name, _declared_name(child, mark)))
            else:
                walk(child, path, depth + 1)

    walk(root, "", 1)
    return found
