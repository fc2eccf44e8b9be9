"""Where a skill's downloads go, and the checks that keep them there (spec §8.4, §8.5 step 2).

Input: the state directory, a skill key and a spec's raw ``targetDir``. Output: the
skill's tools root ``<state>/tools/<safePathSegmentHashed(skillKey)>`` and the
target folder inside it, or an :class:`~skillbook.distribution.install.result.InstallError`
(``install.target-escape``) with OpenClaw's message. These checks run before any
network access. Folders are created here (``mkdir -p``), nothing else is written.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Final

from skillbook.base.fs import abspath, is_path_inside
from skillbook.base.js import js_trim
from skillbook.config.paths import resolve_user_path
from skillbook.distribution import InstallError

__all__ = [
    "TOOLS_DIR_NAME",
    "assert_canonical_within",
    "is_windows_drive_path",
    "resolve_target_dir",
    "safe_path_segment_hashed",
    "tools_root",
]

TOOLS_DIR_NAME: Final = "tools"
_SEPARATORS: Final = re.compile(r"[\\/]")
_UNSAFE: Final = re.compile(r"[^a-zA-Z0-9._-]")
_DASHES: Final = re.compile(r"-+")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_DRIVE: Final = re.compile(r"^[a-zA-Z]:[\\/]")


def safe_path_segment_hashed(value: str) -> str:
    """OpenClaw's ``safePathSegmentHashed``: a folder name that cannot escape or collide.

    Unsafe characters become ``-`` (runs collapsed, edges stripped; empty, ``.`` or
    ``..`` become ``skill``). A changed or overlong name gets the first 10 hex digits
    of the SHA-256 of the trimmed input: ``<base[:50]>-<hash>``.
    """
    trimmed = js_trim(value)
    base = _DASHES.sub("-", _UNSAFE.sub("-", _SEPARATORS.sub("-", trimmed))).strip("-")
    safe = base if base and base not in (".", "..") else "skill"
    # Node hashes the UTF-8 of the string, with lone surrogates as U+FFFD.
    digest = hashlib.sha256(_SURROGATE.sub("\ufffd", trimmed).encode("utf-8")).hexdigest()[:10]
    if safe != trimmed or len(safe) > 60:
        return f"{safe[:50]}-{digest}"
    return safe


def tools_root(state_dir: Path, skill_key: str) -> Path:
    """``<state>/tools/<safePathSegmentHashed(skillKey)>`` (spec §8.4)."""
    return state_dir / TOOLS_DIR_NAME / safe_path_segment_hashed(skill_key)


def is_windows_drive_path(value: str) -> bool:
    return bool(_DRIVE.match(value))


def resolve_target_dir(root: Path, target_dir: str | None, *, home: Path) -> Path:
    """The download folder: the root, a relative ``targetDir`` under it, or a ``~``/absolute
    one that must still resolve inside it. Raises ``install.target-escape``.
    """
    raw = js_trim(target_dir or "")
    if not raw:
        return root
    if raw.startswith("~") or os.path.isabs(raw) or is_windows_drive_path(raw):
        resolved = resolve_user_path(raw, home)
    else:
        resolved = Path(abspath(os.path.join(root, raw)))
    if not is_path_inside(str(root), str(resolved)):
        raise InstallError(
            "install.target-escape",
            "Refusing to install outside the skill tools directory. "
            f'targetDir="{raw}" resolves to "{resolved}". Allowed root: "{root}".',
        )
    return resolved


def assert_canonical_within(base: Path, candidate: Path, label: str) -> None:
    """``candidate`` (or, if missing, its parent) is a real folder inside the real ``base``.

    ``base`` itself must be a real folder, not a symlink: a tools root swapped for a
    link to elsewhere fails closed. Raises ``install.target-escape``.
    """
    outside = InstallError("install.target-escape", f"Invalid path: must stay within {label}")
    base_abs, cand_abs = abspath(base), abspath(candidate)
    if not is_path_inside(base_abs, cand_abs):
        raise outside
    try:
        st = os.lstat(base_abs)
    except OSError as exc:
        raise InstallError("install.target-escape", f"{label}: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise InstallError(
            "install.target-escape", f"Invalid {label}: base directory must be a real directory"
        )
    base_real = os.path.realpath(base_abs)

    def check(path: str) -> None:
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode) or not is_path_inside(base_real, os.path.realpath(path)):
            raise outside

    try:
        check(cand_abs)
        return
    except FileNotFoundError:
        pass
    try:
        check(os.path.dirname(cand_abs))
    except FileNotFoundError:
        raise outside from None


def ensure_dir(path: Path) -> None:
    """``mkdir -p``; an existing non-folder is reported as such."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InstallError("install.target-escape", f"{path} exists and is not a folder") from None
    except OSError as exc:
        raise InstallError(
            "install.target-escape", f"cannot create {path}: {exc.strerror}"
        ) from None
