"""Where installed skills came from, for ``list`` and ``info``.

Input: skill folders (as the loader found them). Output: the :class:`~skillbook.distribution.registry.lockfile.Origin`
of each one that an install recorded (``.clawhub/origin.json``, the legacy
``.clawdhub/``, or skillbook's ``.skillbook/origin.json`` for git, folder and archive
installs). Only folders directly inside a ``skills/`` folder whose parent holds a lock
folder are read, so listing a large catalog costs one check per skills folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from skillbook.distribution.registry.lockfile import (
    CLAWHUB_DIR,
    LEGACY_DIR,
    SKILLBOOK_DIR,
    Origin,
    read_origin,
)

__all__ = ["installed_origins"]


def installed_origins(folders: Iterable[Path]) -> dict[Path, Origin]:
    roots: dict[Path, bool] = {}
    out: dict[Path, Origin] = {}
    for folder in folders:
        parent = folder.parent
        if parent.name != "skills":
            continue
        tracked = roots.get(parent)
        if tracked is None:
            base = parent.parent
            tracked = any(os.path.isdir(base / d) for d in (CLAWHUB_DIR, LEGACY_DIR, SKILLBOOK_DIR))
            roots[parent] = tracked
        if not tracked:
            continue
        origin = read_origin(folder) or read_origin(folder, folder=SKILLBOOK_DIR)
        if origin is not None:
            out[folder] = origin
    return out
