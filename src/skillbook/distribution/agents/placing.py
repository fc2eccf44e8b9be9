"""What ``install --for`` and ``update --for`` both do around placing a skill.

:func:`sweep_leftovers` removes what a killed placement left beside a target (the
hidden ``.NAME.new-…`` and ``.NAME.old-…`` siblings of
:mod:`skillbook.distribution.agents.layout`); :func:`audit_forced` appends the
``--dangerously-force --reason`` line to ``<state dir>/install-audit.jsonl`` before a
skill with critical findings is placed, as every ``skillbook install`` does.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any

from skillbook.distribution.agents import AgentsError
from skillbook.distribution.agents.sources import Fetched

__all__ = ["audit_forced", "sweep_leftovers"]


def sweep_leftovers(target: Path) -> None:
    """Remove what a killed placement left beside ``target``: its ``.NAME.new-XXXXXXXX``
    (built, not yet swapped in) and ``.NAME.old-XXXXXXXX`` (swapped out) siblings."""
    import shutil

    pattern = re.compile(rf"^\.{re.escape(target.name)}\.(new|old)-[a-z0-9]{{8}}$")
    try:
        names = [n for n in os.listdir(target.parent) if pattern.match(n)]
    except OSError:
        return
    for name in names:
        path = target.parent / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()


def audit_forced(item: Fetched, verdict: Any, state_dir: Path | None, reason: str | None) -> None:
    """The line ``--dangerously-force --reason`` leaves in ``<state dir>/install-audit.jsonl``
    before a skill with critical findings is placed (as for any ``skillbook install``)."""
    from skillbook.distribution.audit import append_audit, findings_of, forced_at, forced_by

    if state_dir is None:
        raise AgentsError(
            "install.scan-forced", "a forced install needs a state dir for its audit line"
        )
    record = {
        "time": forced_at(),
        "event": "skill-install-forced",
        "skill": item.name,
        "kind": f"agents:{item.project_entry.get('sourceType')}",
        "source": item.project_entry.get("source"),
        "reason": reason,
        "user": forced_by(),
        "findings": findings_of(verdict.critical),
    }
    try:
        append_audit(state_dir, record)
    except OSError as exc:
        raise AgentsError(
            "install.scan-forced", f"cannot write the install audit log: {exc}"
        ) from None
