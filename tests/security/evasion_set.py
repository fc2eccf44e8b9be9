"""The evasive-variant sets of ``tests/security/evasions/``, made into skill folders.

Each YAML entry is one skill: a benign ``SKILL.md`` plus one file holding the variant
(or the variant *is* the ``SKILL.md``), or an archive whose members hold it (nested
archives are written as mappings with their own ``kind`` and ``members``). ``tune.yaml``
is what the rules were tuned on; ``holdout.yaml`` was written afterwards, differently,
and never tuned on: its rate is the honest one. ``fresh.yaml`` was written after both,
before the rules were generalised for the hold-out's misses (see test_evasions.py).
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from skillbook.security.findings import Severity
from skillbook.security.scanner import scan_path

EVASIONS = Path(__file__).resolve().parent / "evasions"
_BENIGN_SKILL = (
    "---\nname: {name}\ndescription: A helper skill.\n---\n# Helper\n\nUse the helper.\n"
)


@dataclass(frozen=True)
class Variant:
    id: str
    family: str
    least: Severity
    entry: dict[str, Any]


def load(name: str) -> list[Variant]:
    rows = yaml.safe_load((EVASIONS / name).read_text(encoding="utf-8"))
    return [Variant(r["id"], r["family"], Severity(r["min"]), r) for r in rows]


def _archive(kind: str, members: dict[str, Any]) -> bytes:
    files = {
        name: _archive(body["kind"], body["members"]) if isinstance(body, dict) else body.encode()
        for name, body in members.items()
    }
    buffer = io.BytesIO()
    if kind == "gz":  # a single gzip-compressed file: its one member is the content
        (data,) = files.values()
        return gzip.compress(data)
    if kind == "zip":
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in files.items():
                archive.writestr(name, data)
    else:
        mode = "w:gz" if kind == "tgz" else "w"
        with tarfile.open(fileobj=buffer, mode=mode) as archive:  # type: ignore[call-overload]
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def materialize(variant: Variant, root: Path) -> Path:
    folder = root / variant.id
    folder.mkdir(parents=True)
    entry = variant.entry
    if entry.get("file") != "SKILL.md":
        (folder / "SKILL.md").write_text(_BENIGN_SKILL.format(name=variant.id), encoding="utf-8")
    if "archive" in entry:
        spec = entry["archive"]
        (folder / spec["name"]).write_bytes(_archive(spec["kind"], spec["members"]))
    else:
        target = folder / entry["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(entry["text"].encode("utf-8"))
    return folder


def worst(variant: Variant, root: Path) -> Severity:
    """The highest severity the scan of the variant's skill reports."""
    report = scan_path(materialize(variant, root))
    ranks = [f.severity for f in report.findings]
    return max(ranks, key=lambda s: s.rank, default=Severity.INFO)
