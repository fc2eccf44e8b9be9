"""``skillbook install``: stage, scan, record, swap in; the Python API of the CLI.

Input: what to install (any :mod:`skillbook.distribution.registry.refs` form), an
:class:`InstallOptions` and a :class:`~skillbook.distribution.registry.workdir.Workdir`. Output: one
:class:`InstallOutcome` per skill installed, or a
:class:`~skillbook.distribution.registry.RegistryError` that left the workdir unchanged.

Every skill is scanned (:func:`skillbook.distribution.scan_gate.scan_for_install`, the
scanner of ``skillbook setup``) in its staged tree, before it is swapped in: critical
findings block unless ``force_reason`` is given, and then a line goes to
``<state dir>/install-audit.jsonl`` first. Then a per-file manifest and ``origin.json``
are written into the tree: the ``clawhub`` CLI's fields in its order (``version,
registry, slug, ownerHandle?, installedVersion, installedAt, fingerprint?``), then, for
registry installs, OpenClaw 2026.9's (``sourceUrl?, artifact, skillFile,
fileTreeSha256``); the lock entry carries the CLI's ``version, installedAt,
ownerHandle?`` and 2026.9's ``registry``, the same four and ``verification?``. The
tree and its lock entry go in through the workdir's journal (a crash leaves the old or
the new skill). A target that exists is refused (OpenClaw's ``Skill already exists at
<dir>. Re-run with force/update.``) unless ``force``; a pinned one always.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillbook.distribution.archives.paths import DEFAULT_LIMITS, ExtractLimits
from skillbook.distribution.http import RetryPolicy
from skillbook.distribution.netguard import NetworkPolicy
from skillbook.distribution.progress import Progress
from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.clawhub_stage import stage_registry
from skillbook.distribution.registry.client import RegistryClient
from skillbook.distribution.registry.endpoint import Endpoint, installed_endpoint
from skillbook.distribution.registry.lockfile import (
    CLAWHUB_DIR,
    SKILLBOOK_DIR,
    write_json_atomic,
    write_origin,
)
from skillbook.distribution.registry.lookalike import lookalike_warnings
from skillbook.distribution.registry.refs import (
    DEFAULT_GIT_BASE,
    ArchiveRef,
    FolderRef,
    GitRef,
    RegistryRef,
    SourceRef,
    parse_ref,
)
from skillbook.distribution.registry.skillfiles import list_skill_files, skill_file, tree_sha256
from skillbook.distribution.registry.staging import (
    StageContext,
    Staged,
    stage_archive,
    stage_folder,
    stage_git,
)
from skillbook.distribution.registry.workdir import MANIFEST_NAME, Workdir
from skillbook.distribution.swap import remove_tree

__all__ = ["InstallOptions", "InstallOutcome", "Installer"]

#: Registries nobody chose (the clawhub CLI's cache, the default): a skill's recorded
#: registry differing from one of these needs no word.
_UNCHOSEN = frozenset({"cached", "default", "given"})


@dataclass(frozen=True, slots=True)
class InstallOptions:
    version: str | None = None
    tag: str | None = None
    #: Replace an existing folder (and install skills the registry flags as suspicious).
    force: bool = False
    #: ``--dangerously-force --reason``: install despite critical scan findings (audited).
    force_reason: str | None = None
    #: Skills to take from a repository holding several (``--skill``), or all of them.
    skills: tuple[str, ...] = ()
    all_skills: bool = False
    #: The folder name to install one skill under (``--name``).
    name: str | None = None
    #: Where the audit log and the scan cache live.
    state_dir: Path | None = None
    limits: ExtractLimits = DEFAULT_LIMITS
    #: Where ``owner/repo`` shorthands point.
    git_base: str = DEFAULT_GIT_BASE
    #: Which hosts an archive URL may be fetched from (``skills.install.policy``).
    network: NetworkPolicy = field(default_factory=NetworkPolicy)


@dataclass(frozen=True, slots=True)
class InstallOutcome:
    name: str
    kind: str
    version: str
    target: Path
    fingerprint: str | None
    origin: dict[str, Any]
    warnings: tuple[str, ...] = ()
    findings: tuple[dict[str, Any], ...] = ()
    audit_file: Path | None = None
    previous_version: str | None = None

    @property
    def changed(self) -> bool:
        return self.previous_version != self.version

    def display_version(self) -> str:
        """The version as printed: a commit (git, a GitHub hand-off) by its first 12 digits."""
        commit = len(self.version) == 40 and all(c in "0123456789abcdef" for c in self.version)
        return self.version[:12] if self.kind == "git" or commit else self.version

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ok": True,
            "name": self.name,
            "kind": self.kind,
            "version": self.version,
            "targetDir": str(self.target),
            "fingerprint": self.fingerprint,
            "origin": self.origin,
            "warnings": list(self.warnings),
            "findings": list(self.findings),
        }
        if self.previous_version is not None:
            out["previousVersion"] = self.previous_version
        if self.audit_file is not None:
            out["auditFile"] = str(self.audit_file)
        return out


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _tree_record(root: Path) -> dict[str, Any]:
    """OpenClaw 2026.9's ``skillFile`` and ``fileTreeSha256``, so that its ``update``
    can tell a skillbook install is unedited."""
    out: dict[str, Any] = {}
    marker = skill_file(root)
    if marker is not None:
        out["skillFile"] = marker
    digest = tree_sha256(root)
    if digest is not None:
        out["fileTreeSha256"] = digest
    return out


class Installer:
    """Installs into one workdir; holds how to reach registries and how to report."""

    def __init__(
        self,
        workdir: Workdir,
        endpoint: Endpoint,
        *,
        installed_names: Callable[[], set[str]] = set,
        progress: Progress | None = None,
        say: Callable[[str], None] = lambda _line: None,
        retry: RetryPolicy | None = None,
        env: dict[str, str] | None = None,
        scanner: Callable[[Path], Any] | None = None,
    ) -> None:
        self.workdir = Workdir(workdir.root.absolute())
        self.endpoint = endpoint
        self._installed = installed_names
        self._progress = progress
        self._say = say
        self._retry = retry
        self._env = dict(os.environ if env is None else env)
        self._scanner = scanner
        self._http: Any = None
        self._noted: set[str] = set()

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Share one connection pool among the requests of one operation."""
        if self._http is not None:
            yield
            return
        from skillbook.distribution.http import new_http

        self._http = new_http()
        try:
            yield
        finally:
            self._http.close()
            self._http = None

    def client(self, registry: str | None = None) -> RegistryClient:
        """A client for ``registry`` (a tracked skill's recorded one) or the endpoint's
        (:func:`~skillbook.distribution.registry.endpoint.installed_endpoint`'s rule).

        The endpoint's token goes only to the endpoint's own registry. When the
        command's registry was set on purpose and a skill's recorded one differs, that
        is said once per registry: the user asked for one and gets the other."""
        endpoint = installed_endpoint(self.endpoint, registry)
        chosen = self.endpoint
        chosen_on_purpose = chosen.kind not in _UNCHOSEN
        if endpoint is not chosen and chosen_on_purpose and endpoint.base_url not in self._noted:
            self._noted.add(endpoint.base_url)
            self._say(
                f"using {endpoint.label} for the skills installed from it (their "
                f"origin.json), not {chosen.label} ({chosen.base_reason}); reinstall "
                "with `skillbook install NAME --force` to switch"
            )
        return RegistryClient(endpoint, retry=self._retry, on_wait=self._say, http=self._http)

    def context(self, options: InstallOptions) -> StageContext:
        return StageContext(
            workdir=self.workdir,
            client=self.client,
            limits=options.limits,
            progress=self._progress,
            say=self._say,
            env=self._env,
            network=options.network,
        )

    def install(self, what: str | SourceRef, options: InstallOptions) -> list[InstallOutcome]:
        ref = parse_ref(what, git_base=options.git_base) if isinstance(what, str) else what
        with self.workdir.locked(), self.session():
            if isinstance(ref, RegistryRef):
                self._refuse_existing(ref.slug, options)
            staged = self.stage(ref, options)
            try:
                for item in staged:
                    self._refuse_existing(item.name, options)
                return [self.commit(item, options) for item in staged]
            finally:
                for item in staged:
                    remove_tree(item.path)

    def _refuse_existing(self, name: str, options: InstallOptions) -> None:
        from skillbook.distribution.registry.pins import is_pinned, pinned_error

        for folder in (CLAWHUB_DIR, SKILLBOOK_DIR):
            entry = self.workdir.lock(folder).skills.get(name)
            if isinstance(entry, dict) and is_pinned(entry):
                raise pinned_error(name, entry)
        target = self.workdir.target(name)
        if not options.force and os.path.lexists(target):
            raise RegistryError(
                "registry.exists", f"Skill already exists at {target}. Re-run with force/update."
            )

    def stage(
        self, ref: SourceRef, options: InstallOptions, *, registry: str | None = None
    ) -> list[Staged]:
        ctx = self.context(options)
        if isinstance(ref, RegistryRef):
            return [
                stage_registry(
                    ctx,
                    ref,
                    version=options.version,
                    tag=options.tag,
                    registry=registry,
                    allow_suspicious=options.force,
                )
            ]
        if options.version or options.tag:
            raise RegistryError(
                "registry.invalid-ref", "--version and --tag are for registry skills only"
            )
        if isinstance(ref, GitRef):
            return stage_git(
                ctx, ref, names=options.skills, all_skills=options.all_skills, name=options.name
            )
        if options.skills or options.all_skills:
            raise RegistryError("registry.invalid-ref", "--skill and --all are for repositories")
        if isinstance(ref, FolderRef):
            return [stage_folder(ctx, ref, name=options.name)]
        assert isinstance(ref, ArchiveRef)
        return [stage_archive(ctx, ref, name=options.name)]

    def commit(
        self,
        staged: Staged,
        options: InstallOptions,
        *,
        previous_version: str | None = None,
        installed_at: int | None = None,
    ) -> InstallOutcome:
        """Scan the staged tree, record it, swap it in (call under the workdir lock)."""
        from skillbook.distribution.scan_gate import scan_for_install

        verdict = scan_for_install(
            staged.name,
            staged.path,
            force_reason=options.force_reason,
            scanner=self._scanner,
            state_dir=options.state_dir,
        )
        if verdict.blocked is not None:
            raise RegistryError(verdict.code or "install.scan-blocked", verdict.blocked)
        warnings = [*staged.warnings, *verdict.warnings]
        warnings += lookalike_warnings(staged.name, self._installed())
        audit_file = None
        if verdict.forced:
            audit_file = self._audit(staged, options, verdict)
        files = list_skill_files(staged.path)
        fingerprint = files.fingerprint
        transaction = uuid.uuid4().hex
        manifest = {
            "version": 1,
            "transaction": transaction,
            "fingerprint": fingerprint,
            "files": files.hashes,
        }
        # Before the tree digest: OpenClaw 2026.9 digests everything but .clawhub.
        write_json_atomic(staged.path / SKILLBOOK_DIR / MANIFEST_NAME, manifest)
        when = installed_at if installed_at is not None else _now_ms()
        origin = {**staged.origin_head, "installedVersion": staged.version, "installedAt": when}
        if fingerprint is not None:
            origin["fingerprint"] = fingerprint
        entry = {"version": staged.version, "installedAt": when, **staged.lock_tail}
        if staged.folder == CLAWHUB_DIR:
            tracked = {**staged.origin_extra, **_tree_record(staged.path)}
            origin.update(tracked)
            entry.update(registry=origin["registry"], **tracked)
            if staged.verification is not None:
                entry["verification"] = staged.verification
        write_origin(staged.path, origin, folder=staged.folder)
        self.workdir.put(
            staged.name,
            staged.path,
            folder=staged.folder,
            key=staged.key,
            entry=entry,
            transaction=transaction,
        )
        return InstallOutcome(
            name=staged.name,
            kind=staged.kind,
            version=staged.version,
            target=self.workdir.target(staged.name),
            fingerprint=fingerprint,
            origin=origin,
            warnings=tuple(warnings),
            findings=tuple(verdict.to_json()["findings"]),
            audit_file=audit_file,
            previous_version=previous_version,
        )

    def _audit(self, staged: Staged, options: InstallOptions, verdict: Any) -> Path:
        from skillbook.distribution.audit import append_audit, findings_of, forced_at, forced_by

        if options.state_dir is None:
            raise RegistryError(
                "install.scan-forced", "a forced install needs a state dir for its audit line"
            )
        record = {
            "time": forced_at(),
            "event": "skill-install-forced",
            "skill": staged.name,
            "kind": staged.kind,
            "source": staged.origin_head.get("registry") or staged.origin_head.get("source"),
            "version": staged.version,
            "targetDir": str(self.workdir.target(staged.name)),
            "reason": options.force_reason,
            "user": forced_by(),
            "findings": findings_of(verdict.critical),
        }
        try:
            return append_audit(options.state_dir, record)
        except OSError as exc:
            raise RegistryError(
                "install.scan-forced", f"cannot write the install audit log: {exc}"
            ) from None
