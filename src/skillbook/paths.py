"""Where skillbook looks: home, state dir, managed/personal/bundled skill folders.

Input: an environment mapping (never ``os.environ`` implicitly) and a working
directory. Output: a frozen :class:`Paths`. Nothing here creates folders or checks
that they exist (except finding the package's own bundled-skills folder).

Resolution follows OpenClaw (spec §3.7-3.8) with skillbook's own variables; the
``OPENCLAW_*`` spelling of each variable is honoured as a fallback so a machine set
up for OpenClaw works unchanged:

- effective home: ``SKILLBOOK_HOME`` (``~`` expanded against the OS home) → ``HOME``
  → ``USERPROFILE`` → the account's home directory; the values ``"undefined"`` and
  ``"null"`` count as unset;
- state dir: ``SKILLBOOK_STATE_DIR`` → dirname of ``SKILLBOOK_CONFIG_PATH`` →
  ``<home>/.skillbook``; managed skills live in ``<state>/skills``;
- personal skills: ``<OS home>/.agents/skills`` (the OS home, not the effective one,
  as OpenClaw does);
- bundled skills: ``SKILLBOOK_BUNDLED_SKILLS_DIR`` (trimmed, no checks) → the
  package data folder ``skillbook/bundled_skills``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: skillbook's own variable prefix, and the OpenClaw prefix read as a fallback.
ENV_PREFIX = "SKILLBOOK_"
COMPAT_ENV_PREFIX = "OPENCLAW_"
DEFAULT_STATE_DIR_NAME = ".skillbook"
PERSONAL_SKILLS_PARTS = (".agents", "skills")
MANAGED_SKILLS_DIR_NAME = "skills"
PACKAGE_BUNDLED_DIR = Path(__file__).resolve().parent / "bundled_skills"

_TILDE = re.compile(r"^~(?=$|[\\/])")
_UNSET_WORDS = frozenset({"undefined", "null"})


def _normalize(value: str | None) -> str | None:
    """Trimmed value, or ``None`` for missing, blank, ``"undefined"`` and ``"null"``."""
    if value is None:
        return None
    trimmed = value.strip()
    if not trimmed or trimmed in _UNSET_WORDS:
        return None
    return trimmed


def _account_home() -> str | None:
    """The home directory of the account, without consulting environment variables."""
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir or None
    except (ImportError, KeyError, OSError):
        try:
            return str(Path.home())
        except (RuntimeError, OSError):
            return None


def _resolve(path: str, cwd: Path) -> Path:
    """``path.resolve(cwd, p)``: absolute and normalised, symlinks untouched."""
    joined = os.path.normpath(os.path.join(os.fspath(cwd), path))
    # POSIX normpath keeps a leading "//"; Node's path.resolve does not.
    if joined.startswith("//") and not joined.startswith("///"):
        joined = joined[1:]
    return Path(joined)


def resolve_user_path(p: str, home: Path | str, *, cwd: Path | None = None) -> Path:
    """Trim, expand a leading ``~`` with the effective ``home``, make absolute.

    ``~user`` is not expanded (as in OpenClaw). A blank ``p`` is a caller error.
    """
    trimmed = p.strip()
    if not trimmed:
        raise ValueError("resolve_user_path: empty path")
    expanded = _TILDE.sub(lambda _m: os.fspath(home), trimmed, count=1)
    return _resolve(expanded, cwd if cwd is not None else Path.cwd())


@dataclass(frozen=True, slots=True)
class Paths:
    """The folders a skill discovery uses, all absolute."""

    home: Path
    os_home: Path
    state_dir: Path
    managed_dir: Path
    personal_dir: Path
    bundled_dir: Path | None
    config_path: Path | None

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str],
        *,
        cwd: Path | None = None,
        compat: bool = True,
    ) -> Paths:
        """Resolve every folder from ``env`` (spec §3.7-3.8 with ``SKILLBOOK_*`` names).

        ``compat=False`` ignores the ``OPENCLAW_*`` fallbacks.
        """
        base = cwd if cwd is not None else Path.cwd()

        def var(name: str) -> str | None:
            value = env.get(ENV_PREFIX + name)
            if value is None and compat:
                value = env.get(COMPAT_ENV_PREFIX + name)
            return value

        raw_os_home = _normalize(env.get("HOME")) or _normalize(env.get("USERPROFILE"))
        if raw_os_home is None:
            raw_os_home = _normalize(_account_home())
        os_home = _resolve(raw_os_home, base) if raw_os_home else base

        home = os_home
        explicit_home = _normalize(var("HOME"))
        if explicit_home is not None:
            if _TILDE.match(explicit_home):
                if raw_os_home:
                    home = _resolve(_TILDE.sub(lambda _m: raw_os_home, explicit_home), base)
            else:
                home = _resolve(explicit_home, base)

        config_path: Path | None = None
        raw_config = (var("CONFIG_PATH") or "").strip()
        if raw_config:
            config_path = resolve_user_path(raw_config, home, cwd=base)
        raw_state = (var("STATE_DIR") or "").strip()
        if raw_state:
            state_dir = resolve_user_path(raw_state, home, cwd=base)
        elif config_path is not None:
            state_dir = config_path.parent
        else:
            state_dir = home / DEFAULT_STATE_DIR_NAME

        raw_bundled = (var("BUNDLED_SKILLS_DIR") or "").strip()
        bundled_dir: Path | None
        if raw_bundled:
            # Returned without checks, as OpenClaw does; made absolute against cwd.
            bundled_dir = _resolve(raw_bundled, base)
        else:
            bundled_dir = PACKAGE_BUNDLED_DIR if PACKAGE_BUNDLED_DIR.is_dir() else None

        return cls(
            home=home,
            os_home=os_home,
            state_dir=state_dir,
            managed_dir=state_dir / MANAGED_SKILLS_DIR_NAME,
            personal_dir=os_home.joinpath(*PERSONAL_SKILLS_PARTS),
            bundled_dir=bundled_dir,
            config_path=config_path,
        )

    @classmethod
    def from_process(cls) -> Paths:
        """Convenience: :meth:`from_env` with ``os.environ`` and the current directory."""
        return cls.from_env(os.environ, cwd=Path.cwd())
