"""Scan results cached by content: a file scanned once is not scanned again.

Input: a cache folder (usually ``<state dir>/cache/scan``). Output: a
:class:`ScanCache` that maps a file's content hash (plus what its name implies)
to the findings found in it. Entries live in one folder per scanner version and
rule set, so a new rule invalidates everything at once; old version folders are
removed when the cache is opened. Every entry is written atomically (temporary
file, then rename), so a crash leaves the old entry, the new one, or none.
A cache that cannot be written never fails a scan: the miss is just counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbook.security import patterns
from skillbook.security.findings import Severity
from skillbook.security.rules_version import rules_version

#: Folder under the state dir that holds the cache.
CACHE_SUBDIR = ("cache", "scan")
_VERSION_DIR = patterns.compile(r"^v\d+-[0-9a-f]{12}$")


@dataclass(frozen=True, slots=True)
class CachedFinding:
    """A finding without its file path: what a file's content alone decides."""

    rule: str
    severity: Severity
    line: int | None
    column: int | None
    message: str
    excerpt: str
    ruleset: str
    demoted_from: Severity | None = None
    demotion: str | None = None

    def to_json(self) -> list[Any]:
        return [
            self.rule,
            str(self.severity),
            self.line,
            self.column,
            self.message,
            self.excerpt,
            self.ruleset,
            None if self.demoted_from is None else str(self.demoted_from),
            self.demotion,
        ]

    @classmethod
    def from_json(cls, row: list[Any]) -> CachedFinding:
        rule, severity, line, column, message, excerpt, ruleset, demoted_from, demotion = row
        return cls(
            rule=str(rule),
            severity=Severity(severity),
            line=None if line is None else int(line),
            column=None if column is None else int(column),
            message=str(message),
            excerpt=str(excerpt),
            ruleset=str(ruleset),
            demoted_from=None if demoted_from is None else Severity(demoted_from),
            demotion=None if demotion is None else str(demotion),
        )


def content_key(data: bytes, *facets: str) -> str:
    """The cache key of a file: sha256 of what its findings depend on."""
    import hashlib  # here: a scan without a cache never hashes a file

    digest = hashlib.sha256()
    for facet in facets:
        digest.update(facet.encode("utf-8", "surrogateescape") + b"\x00")
    digest.update(data)
    return digest.hexdigest()


class ScanCache:
    """Findings per file content, on disk under ``directory`` for one ``version``.

    ``version`` names the scanner and rule set (see :func:`skillbook.security.rules_version.rules_version`);
    entries of any other version are ignored and their folders deleted.
    """

    def __init__(self, directory: Path, *, version: str | None = None) -> None:
        self.version = version or rules_version()
        self.directory = directory
        self.folder = directory / self.version
        self.hits = 0
        self.misses = 0
        self.write_errors = 0
        self._memory: dict[str, tuple[CachedFinding, ...]] = {}
        self._pruned = False

    @classmethod
    def for_state_dir(cls, state_dir: Path) -> ScanCache:
        """The cache under ``<state_dir>/cache/scan``."""
        return cls(state_dir.joinpath(*CACHE_SUBDIR))

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> tuple[CachedFinding, ...] | None:
        found = self._memory.get(key)
        if found is None:
            try:
                rows = json.loads(self._path(key).read_bytes())
                found = tuple(CachedFinding.from_json(row) for row in rows)
            except (OSError, ValueError, TypeError, KeyError):
                self.misses += 1
                return None
            self._memory[key] = found
        self.hits += 1
        return found

    def put(self, key: str, findings: tuple[CachedFinding, ...]) -> None:
        self._memory[key] = findings
        self._prune_old_versions()
        path = self._path(key)
        data = json.dumps([f.to_json() for f in findings], ensure_ascii=False).encode("utf-8")
        # Imported on the first write: `scan --no-cache` imports this module and never
        # writes (the atomic writer's imports alone cost ~10 ms of CPU per process).
        from skillbook.base.atomic import write_atomic

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data, mode=0o600, prefix=".tmp-", suffix="")
        except OSError:
            self.write_errors += 1

    def _prune_old_versions(self) -> None:
        """Delete cache folders of other scanner versions (once per cache object)."""
        if self._pruned:
            return
        self._pruned = True
        try:
            children = list(self.directory.iterdir())
        except OSError:
            return
        import shutil

        for child in children:
            if child.name != self.version and _VERSION_DIR.match(child.name) and child.is_dir():
                shutil.rmtree(child, ignore_errors=True)
