"""Where skillbook looks: home, config file, state dir, managed/personal/bundled skill folders.

Input: an environment mapping (never ``os.environ`` implicitly) and a working
directory. Output: a frozen :class:`Paths`, whose :class:`ConfigLocation` says which
config file is read and why. Nothing here creates folders or reads files; finding
the config file only asks whether candidate files and folders exist, and every path
asked about is named in the answer (:attr:`ConfigLocation.probed`,
:attr:`Paths.probed`) for a caller that records what a build depended on.

Resolution follows OpenClaw (spec §3.7-3.8) with skillbook's own variables; the
``OPENCLAW_*`` spelling of each variable is honoured as a fallback so a machine set
up for OpenClaw works unchanged:

- effective home: ``SKILLBOOK_HOME`` (``~`` expanded against the OS home) → ``HOME``
  → ``USERPROFILE`` → the account's home directory; the values ``"undefined"`` and
  ``"null"`` count as unset;
- config file (:func:`locate_config`, the one place that decides it): ``--config`` →
  ``SKILLBOOK_CONFIG_PATH`` → the first that exists of ``skillbook.json``,
  ``openclaw.json`` and ``clawdbot.json`` in ``$SKILLBOOK_STATE_DIR`` when it is set,
  else of ``~/.skillbook/skillbook.json``, ``~/.openclaw/openclaw.json`` (OpenClaw's
  default), ``~/.openclaw/clawdbot.json``, ``~/.clawdbot/openclaw.json``,
  ``~/.clawdbot/clawdbot.json``; skillbook's own file wins when both exist;
- state dir: ``SKILLBOOK_STATE_DIR`` → the folder of the config file, however it was
  chosen → the first existing of ``~/.skillbook``, ``~/.openclaw``, ``~/.clawdbot`` →
  ``~/.skillbook``; managed skills live in ``<state>/skills``. So one config file
  gives the same skills whether it is passed with ``--config``, in the variable, or
  found at its default place;
- personal skills: ``<OS home>/.agents/skills`` (the OS home, not the effective one,
  as OpenClaw does);
- bundled skills: ``SKILLBOOK_BUNDLED_SKILLS_DIR`` (trimmed, no checks) → the
  package data folder ``skillbook/bundled_skills``.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

#: skillbook's own variable prefix, and the OpenClaw prefix read as a fallback.
ENV_PREFIX = "SKILLBOOK_"
COMPAT_ENV_PREFIX = "OPENCLAW_"
DEFAULT_STATE_DIR_NAME = ".skillbook"
#: skillbook's own config file name, looked for first.
CONFIG_FILENAME = "skillbook.json"
#: OpenClaw's config file names: the current one, then the legacy one.
OPENCLAW_CONFIG_FILENAMES = ("openclaw.json", "clawdbot.json")
#: OpenClaw's state dirs under the home: the current one, then the legacy one.
OPENCLAW_STATE_DIR_NAMES = (".openclaw", ".clawdbot")
PERSONAL_SKILLS_PARTS = (".agents", "skills")
MANAGED_SKILLS_DIR_NAME = "skills"
PACKAGE_BUNDLED_DIR = Path(__file__).resolve().parents[1] / "bundled_skills"
#: The origin of an OS home no variable set (:attr:`Paths.origins`): the account's
#: entry in the system's user database.
ACCOUNT_HOME = "the account's home directory"

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


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


# --------------------------------------------------------------------------- config file


@dataclass(frozen=True, slots=True)
class ConfigLocation:
    """Which config file a run reads, why, and the state dir that follows from it."""

    #: The config file to read, or ``None`` (an empty config).
    file: Path | None
    #: How the file was chosen, for people, e.g. ``"--config"``, ``"$OPENCLAW_CONFIG_PATH"``,
    #: ``"OpenClaw's config at its default place"``.
    reason: str
    state_dir: Path
    #: Why the state dir is that folder, e.g. ``"the config file's folder"``.
    state_dir_reason: str
    #: The default places looked at, in order (empty when a file was named).
    searched: tuple[Path, ...] = ()
    #: Config files at those places that exist but are not read (a lower-precedence one).
    not_read: tuple[Path, ...] = ()
    #: Every path whose existence was asked to choose the file and the state dir: the
    #: default places, and their folders when none holds a file.
    probed: tuple[Path, ...] = dataclasses.field(default=(), compare=False)

    @property
    def managed_dir(self) -> Path:
        return self.state_dir / MANAGED_SKILLS_DIR_NAME

    @property
    def is_openclaw(self) -> bool:
        """The file has OpenClaw's name (``openclaw.json``, or the legacy ``clawdbot.json``)."""
        return self.file is not None and self.file.name in OPENCLAW_CONFIG_FILENAMES

    def note(self) -> str | None:
        """One line saying which file is read when another default config also exists."""
        if self.file is None or not self.not_read:
            return None
        others = ", ".join(str(p) for p in self.not_read)
        return (
            f"reading {self.file} ({self.reason}); not reading {others} "
            "(pass --config FILE to choose)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "file": str(self.file) if self.file is not None else None,
            "reason": self.reason,
            "openclaw": self.is_openclaw,
            "stateDir": str(self.state_dir),
            "stateDirReason": self.state_dir_reason,
            "searched": [str(p) for p in self.searched],
            "notRead": [str(p) for p in self.not_read],
        }


def locate_config(
    env: Mapping[str, str],
    *,
    home: Path,
    cwd: Path,
    explicit: str | os.PathLike[str] | None = None,
    explicit_reason: str = "--config",
    compat: bool = True,
) -> ConfigLocation:
    """The config file and state dir a run uses (the module docstring has the rules).

    ``explicit`` is a file the caller names (``--config``, ``config=``); it is not
    checked here, reading it reports a missing file. ``compat=False`` ignores the
    ``OPENCLAW_*`` variables and OpenClaw's default places.
    """
    var = _EnvReader(env, compat)
    state_name, state_raw = var("STATE_DIR")
    state_env = resolve_user_path(state_raw, home, cwd=cwd) if state_raw else None

    def with_state(file: Path, reason: str, **extra: Any) -> ConfigLocation:
        if state_env is not None:
            return ConfigLocation(file, reason, state_env, f"${state_name}", **extra)
        return ConfigLocation(file, reason, file.parent, "the config file's folder", **extra)

    if explicit is not None and os.fspath(explicit).strip():
        file = resolve_user_path(os.fspath(explicit), home, cwd=cwd)
        return with_state(file, explicit_reason)
    config_name, config_raw = var("CONFIG_PATH")
    if config_raw:
        return with_state(resolve_user_path(config_raw, home, cwd=cwd), f"${config_name}")

    searched, where = _search_places(home, state_env, state_name, compat)
    found = [p for p in searched if _is_file(p)]
    if found:
        owner = (
            "OpenClaw's config"
            if found[0].name in OPENCLAW_CONFIG_FILENAMES
            else "skillbook's own config"
        )
        return with_state(
            found[0],
            f"{owner} {where}",
            searched=searched,
            not_read=tuple(found[1:]),
            probed=searched,
        )
    return _no_config(home, state_env, state_name, searched)


def _search_places(
    home: Path, state_env: Path | None, state_name: str, compat: bool
) -> tuple[tuple[Path, ...], str]:
    """The config files to look for, in order, and where that is (for the reason)."""
    if state_env is not None:
        names = (CONFIG_FILENAME, *(OPENCLAW_CONFIG_FILENAMES if compat else ()))
        return tuple(state_env / name for name in names), f"in ${state_name}"
    dirs = [home / DEFAULT_STATE_DIR_NAME]
    if compat:
        dirs += [home / d for d in OPENCLAW_STATE_DIR_NAMES]
    # skillbook's own file first, then OpenClaw's in its own state dirs.
    searched = (
        dirs[0] / CONFIG_FILENAME,
        *(d / name for d in dirs[1:] for name in OPENCLAW_CONFIG_FILENAMES),
    )
    return searched, "at its default place"


def _no_config(
    home: Path, state_env: Path | None, state_name: str, searched: tuple[Path, ...]
) -> ConfigLocation:
    """No config file found: the state dir is $STATE_DIR, else the first existing
    default state dir, else skillbook's default."""
    reason = "no config file at the default places"
    if state_env is not None:
        return ConfigLocation(
            None, reason, state_env, f"${state_name}", searched=searched, probed=searched
        )
    folders = tuple(p.parent for p in searched)
    existing = [d for d in folders if _is_dir(d)]
    probed = (*searched, *folders)
    if existing:
        return ConfigLocation(
            None,
            reason,
            existing[0],
            "the first existing default state dir",
            searched=searched,
            probed=probed,
        )
    return ConfigLocation(
        None,
        reason,
        home / DEFAULT_STATE_DIR_NAME,
        "the default",
        searched=searched,
        probed=probed,
    )


class _EnvReader:
    """``SKILLBOOK_<NAME>``, else (``compat``) ``OPENCLAW_<NAME>``: (variable, trimmed value)."""

    def __init__(self, env: Mapping[str, str], compat: bool) -> None:
        self.env = env
        self.prefixes = (ENV_PREFIX, COMPAT_ENV_PREFIX) if compat else (ENV_PREFIX,)

    def __call__(self, name: str) -> tuple[str, str]:
        for prefix in self.prefixes:
            value = (self.env.get(prefix + name) or "").strip()
            if value:
                return prefix + name, value
        return ENV_PREFIX + name, ""

    def raw(self, name: str) -> str | None:
        """The first variable that is set at all (blank included), as ``from_env`` always read it."""
        for prefix in self.prefixes:
            value = self.env.get(prefix + name)
            if value is not None:
                return value
        return None


# --------------------------------------------------------------------------- all paths


@dataclass(frozen=True, slots=True)
class Paths:
    """The folders a skill discovery uses, all absolute, and the config file behind them."""

    home: Path
    os_home: Path
    state_dir: Path
    managed_dir: Path
    personal_dir: Path
    bundled_dir: Path | None
    #: The config file to read (``config_location.file``).
    config_path: Path | None
    config_location: ConfigLocation
    #: Which variable set each folder, for ``skillbook doctor``: ``{"home": "$HOME", …}``.
    origins: Mapping[str, str] = dataclasses.field(default_factory=dict, compare=False)
    #: Every path whose existence was asked to resolve these folders (the config
    #: location's, then the package's bundled folder when no variable names one).
    probed: tuple[Path, ...] = dataclasses.field(default=(), compare=False)

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str],
        *,
        cwd: Path | None = None,
        compat: bool = True,
        config: str | os.PathLike[str] | None = None,
        config_reason: str = "config=",
    ) -> Paths:
        """Resolve every folder from ``env`` (spec §3.7-3.8 with ``SKILLBOOK_*`` names).

        ``config`` names the config file explicitly (``--config``); the state dir then
        follows it. ``compat=False`` ignores the ``OPENCLAW_*`` fallbacks.
        """
        base = cwd if cwd is not None else Path.cwd()
        var = _EnvReader(env, compat)
        origins: dict[str, str] = {}

        raw_os_home = _normalize(env.get("HOME"))
        origins["os_home"] = "$HOME"
        if raw_os_home is None:
            raw_os_home = _normalize(env.get("USERPROFILE"))
            origins["os_home"] = "$USERPROFILE"
        if raw_os_home is None:
            raw_os_home = _normalize(_account_home())
            origins["os_home"] = ACCOUNT_HOME
        os_home = _resolve(raw_os_home, base) if raw_os_home else base

        home, origins["home"] = os_home, "the OS home"
        home_name = next((p + "HOME" for p in var.prefixes if env.get(p + "HOME") is not None), "")
        explicit_home = _normalize(var.raw("HOME"))
        if explicit_home is not None:
            if _TILDE.match(explicit_home):
                if raw_os_home:
                    home = _resolve(_TILDE.sub(lambda _m: raw_os_home, explicit_home), base)
                    origins["home"] = f"${home_name}"
            else:
                home, origins["home"] = _resolve(explicit_home, base), f"${home_name}"

        location = locate_config(
            env,
            home=home,
            cwd=base,
            explicit=config,
            explicit_reason=config_reason,
            compat=compat,
        )

        bundled_name, raw_bundled = var("BUNDLED_SKILLS_DIR")
        bundled_dir: Path | None
        probed = location.probed
        if raw_bundled:
            # Returned without checks, as OpenClaw does; made absolute against cwd.
            bundled_dir, origins["bundled_dir"] = _resolve(raw_bundled, base), f"${bundled_name}"
        else:
            bundled_dir = PACKAGE_BUNDLED_DIR if _is_dir(PACKAGE_BUNDLED_DIR) else None
            origins["bundled_dir"] = "the skillbook package's own"
            probed = (*probed, PACKAGE_BUNDLED_DIR)

        return cls(
            home=home,
            os_home=os_home,
            state_dir=location.state_dir,
            managed_dir=location.managed_dir,
            personal_dir=os_home.joinpath(*PERSONAL_SKILLS_PARTS),
            bundled_dir=bundled_dir,
            config_path=location.file,
            config_location=location,
            origins=MappingProxyType(origins),
            probed=probed,
        )

    @classmethod
    def from_process(cls, *, config: str | os.PathLike[str] | None = None) -> Paths:
        """Convenience: :meth:`from_env` with ``os.environ`` and the current directory."""
        return cls.from_env(os.environ, cwd=Path.cwd(), config=config, config_reason="--config")

    def without_config_file(self, reason: str) -> Paths:
        """The same folders for a config given as a value: no file is read, none is reported."""
        location = dataclasses.replace(self.config_location, file=None, reason=reason, not_read=())
        return dataclasses.replace(self, config_path=None, config_location=location)
