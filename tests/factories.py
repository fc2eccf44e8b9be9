"""What the tests build on disk: skill folders, plugin folders, isolated homes; and waiting.

One home for the few shapes every test area writes, so a change of layout is made once:

- :func:`skill_text` renders a ``SKILL.md`` from Python values; :func:`write_skill` writes
  one into a skill folder (plus extra files); :func:`write_skills` fills a root;
  :func:`write_workspace` lays out an OpenClaw workspace (``<ws>/skills/<name>``), each
  skill with its own fields.
- :func:`write_plugin` writes an OpenClaw plugin folder (``openclaw.plugin.json``).
- :func:`isolated_env` is the environment that keeps skillbook away from the real home.
- :func:`wait_until` waits for a condition with a bounded timeout (never a fixed sleep);
  :func:`process_alive` and :func:`group_alive` are the conditions of the tests that
  check a process (group) was killed.

Frontmatter values: a ``str`` is written verbatim as YAML (``"true"`` stays the YAML
boolean, ``'"quoted"'`` a quoted scalar), so a test can write exactly the text it means;
any other value (dict, list, bool, number) is written as one line of JSON, the
form OpenClaw's own ``metadata`` examples use. Keyword names use ``_`` for ``-``
(``user_invocable=False`` writes ``user-invocable: false``); a ``None`` value writes no line.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from pathlib import Path
from typing import Any, Final, TypeAlias


class _Folder(Enum):
    NAME = "the folder's name"


#: ``name=FOLDER_NAME`` (the default) writes the skill folder's own name.
FOLDER_NAME: Final = _Folder.NAME
#: The body of a skill when a test does not care about it.
BODY: Final = "# Body\n"
#: How long a test waits for something asynchronous before it fails.
WAIT_S: Final = 10.0


def yaml_value(value: object) -> str:
    """One frontmatter value: a ``str`` verbatim, anything else as one line of JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def frontmatter(fields: Mapping[str, object], raw: str = "") -> str:
    """``---`` + one ``key: value`` line per field + the ``raw`` YAML lines + ``---``."""
    lines = [f"{key}: {yaml_value(value)}\n" for key, value in fields.items()]
    if raw and not raw.endswith("\n"):
        raw += "\n"
    return "---\n" + "".join(lines) + raw + "---\n"


def skill_text(
    name: str | None,
    description: str | None = None,
    *,
    body: str = BODY,
    raw: str = "",
    **fields: object,
) -> str:
    """A ``SKILL.md``: ``name`` and ``description`` lines, then ``fields`` in order (``_`` in
    a key becomes ``-``), then ``raw`` lines, then the body. A ``None`` value writes no line.
    """
    head: dict[str, object] = {}
    if name is not None:
        head["name"] = name
    if description is not None:
        head["description"] = description
    head.update({k.replace("_", "-"): v for k, v in fields.items() if v is not None})
    return frontmatter(head, raw) + body


def write_skill(
    folder: Path,
    name: str | _Folder | None = FOLDER_NAME,
    description: str | None = "A skill.",
    *,
    body: str = BODY,
    raw: str = "",
    text: str | bytes | None = None,
    files: Mapping[str, str | bytes] | None = None,
    **fields: object,
) -> Path:
    """Write ``folder/SKILL.md`` (creating ``folder``) and return ``folder``.

    ``text`` replaces the whole file (a ``str`` is written as UTF-8 with its line endings
    untouched; ``bytes`` as they are), for a test about malformed or exact bytes.
    ``files`` maps paths relative to the folder to extra file contents.
    """
    folder.mkdir(parents=True, exist_ok=True)
    if text is None:
        text = skill_text(
            folder.name if name is FOLDER_NAME else name,
            description,
            body=body,
            raw=raw,
            **fields,
        )
    (folder / "SKILL.md").write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    for rel, content in (files or {}).items():
        write_file(folder / rel, content)
    return folder


def write_skills(root: Path, skills: Mapping[str, str] | Iterable[str], **common: Any) -> Path:
    """A root holding one skill per name (a mapping gives each its description); returns root."""
    root.mkdir(parents=True, exist_ok=True)
    items = skills.items() if isinstance(skills, Mapping) else ((n, None) for n in skills)
    for name, description in items:
        if description is None:
            write_skill(root / name, **common)
        else:
            write_skill(root / name, description=description, **common)
    return root


#: One skill of :func:`write_workspace`: its :func:`write_skill` keywords, or just its
#: description (a ``str``), or ``None`` for the defaults.
SkillSpec: TypeAlias = Mapping[str, Any] | str | None


def write_workspace(ws: Path, skills: Mapping[str, SkillSpec] | Iterable[str] = ()) -> Path:
    """An OpenClaw workspace ``ws`` with ``ws/skills/<key>/SKILL.md`` per skill; returns ``ws``.

    A key may be a relative path (``"owner/tool"`` for a grouped layout); the folder's last
    part is the skill's name unless its keywords give ``name``.
    """
    items = skills.items() if isinstance(skills, Mapping) else ((key, None) for key in skills)
    for key, spec in items:
        folder = ws / "skills" / key
        if spec is None:
            write_skill(folder)
        elif isinstance(spec, str):
            write_skill(folder, description=spec)
        else:
            write_skill(folder, **spec)
    (ws / "skills").mkdir(parents=True, exist_ok=True)
    return ws


def write_file(path: Path, content: str | bytes) -> Path:
    """``path`` with ``content`` (parents created); a ``str`` is written as UTF-8 verbatim."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def write_plugin(
    root: Path,
    manifest: Mapping[str, Any] | str,
    *,
    entry: str = "index.js",
    entry_text: str = "export default {}\n",
    skills: Iterable[str] = (),
) -> Path:
    """An OpenClaw plugin folder: ``openclaw.plugin.json``, its entry file and a skill at
    each of the ``skills`` paths (relative to ``root``); returns root.

    A mapping manifest gets the ``configSchema`` OpenClaw requires unless it has one; a
    ``str`` is written as it is (for malformed manifests).
    """
    text = manifest if isinstance(manifest, str) else json.dumps({"configSchema": {}, **manifest})
    write_file(root / "openclaw.plugin.json", text)
    write_file(root / entry, entry_text)
    for rel in skills:
        write_skill(root / rel)
    return root


def stub_bins(bin_dir: Path, names: Iterable[str], script: str = "#!/bin/sh\nexit 0\n") -> Path:
    """Executables ``names`` in ``bin_dir`` that run ``script``; returns ``bin_dir``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        write_file(bin_dir / name, script).chmod(0o755)
    return bin_dir


def isolated_env(base: Path, *, path: str = "", **extra: str) -> dict[str, str]:
    """The environment of a skillbook that sees nothing of the real home: ``HOME``, state
    and an empty bundled folder under ``base``, and ``PATH`` (empty unless given)."""
    (base / "no-bundled").mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(base / "home"),
        "SKILLBOOK_STATE_DIR": str(base / "state"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(base / "no-bundled"),
        "PATH": path,
        **extra,
    }


def wait_until(
    predicate: Callable[[], bool],
    timeout: float = WAIT_S,
    *,
    changed: threading.Condition | None = None,
) -> bool:
    """Whether ``predicate`` became true within ``timeout`` seconds.

    With ``changed`` (a condition the code under test notifies), the wait wakes on each
    notification; without one, it re-checks every 20 ms. Either way it ends as soon as the
    predicate holds, so a fast machine never waits for a slow one's worst case.
    """
    deadline = time.monotonic() + timeout
    if changed is not None:
        with changed:
            return changed.wait_for(predicate, timeout)
    while not predicate():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(0.02, left))
    return True


def notifying(subscribe: Callable[[Callable[[Any], None]], object]) -> threading.Condition:
    """A condition notified on every call of the listener this registers with ``subscribe``
    (e.g. ``SnapshotVersions.subscribe``), for :func:`wait_until` to wake on."""
    changed = threading.Condition()

    def listener(_event: Any) -> None:
        with changed:
            changed.notify_all()

    subscribe(listener)
    return changed


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs: exists and is not a zombie (a killed orphan stays a zombie
    until init reaps it, which a test must not wait for)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (not Linux): kill(0) said it exists
    return state not in ("Z", "X")


def group_alive(pgid: int) -> bool:
    """Whether any process of the process group ``pgid`` exists."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
