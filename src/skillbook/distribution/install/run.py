"""Carry out a :class:`~skillbook.distribution.install.setup.SetupPlan` and report what changed.

Input: a plan the user consented to (the CLI asks first; a Python caller consents by
calling). Output: a :class:`SetupResult`: OpenClaw's result, the skill's status
before and after (evaluated again with a fresh PATH lookup), and hints when a
binary was installed somewhere that is not on PATH. A plan forced past critical
scan findings writes its audit line before anything runs, or does not run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from skillbook.config.file import Config
from skillbook.distribution import InstallError
from skillbook.distribution.audit import append_audit, findings_of, forced_at, forced_by
from skillbook.distribution.install.download import run_download
from skillbook.distribution.install.execute import run_steps
from skillbook.distribution.install.plan import DownloadPlan
from skillbook.distribution.install.result import InstallResult
from skillbook.distribution.install.setup import SetupOptions, SetupPlan, plan_setup
from skillbook.distribution.progress import Progress
from skillbook.pipeline.book import Loader
from skillbook.pipeline.gating.gate import Host, resolve_skill_source
from skillbook.pipeline.gating.status import StatusEntry, build_status

__all__ = ["SetupResult", "fresh_status", "install_skill", "run_setup"]

_HINT_DEPTH: Final = 4


@dataclass(frozen=True, slots=True)
class SetupResult:
    plan: SetupPlan
    result: InstallResult
    #: The status after a successful install (fresh PATH lookup); None otherwise.
    after: StatusEntry | None = None
    hints: tuple[str, ...] = ()
    audit_file: Path | None = None

    @property
    def ok(self) -> bool:
        return self.result.ok

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "skill": self.plan.skill.name,
            "installId": self.plan.install_id,
            "result": self.result.to_json(),
            "status": {
                "before": self.plan.before.status,
                "after": (self.after or self.plan.before).status,
            },
            "hints": list(self.hints),
        }
        if self.audit_file is not None:
            out["auditFile"] = str(self.audit_file)
        return out


def fresh_status(plan: SetupPlan) -> StatusEntry:
    """The skill's status now, with a new PATH lookup (after an install)."""
    book, machine = plan.book, plan.machine
    report = build_status(
        [plan.skill],
        config=book.config,
        host=Host(platform=machine.platform, env=dict(machine.environ)),
        bins=machine.bins(),
        workspace_dir=book.workspace or Path.cwd(),
        managed_dir=book.paths.managed_dir,
    )
    return report.skills[0]


def _audit_record(plan: SetupPlan) -> dict[str, Any]:
    assert plan.scan is not None
    return {
        "time": forced_at(),
        "event": "install-forced",
        "skill": plan.skill.name,
        "skillKey": plan.skill.skill_key,
        "source": resolve_skill_source(plan.skill),
        "baseDir": str(plan.skill.base_dir),
        "installId": plan.install_id,
        "kind": plan.kind,
        "reason": plan.force_reason,
        "user": forced_by(),
        "findings": findings_of(plan.scan.critical),
        "commands": [list(s.argv) for s in plan.steps],
        "download": plan.download.url if plan.download else None,
    }


def _find_executable(root: Path, name: str) -> Path | None:
    for dirpath, dirnames, filenames in os.walk(root):
        depth = len(Path(dirpath).relative_to(root).parts)
        if depth >= _HINT_DEPTH:
            dirnames.clear()
        if name in filenames and os.access(os.path.join(dirpath, name), os.X_OK):
            return Path(dirpath)
    return None


def _hints(download: DownloadPlan | None, after: StatusEntry) -> tuple[str, ...]:
    hints: list[str] = []
    for name in after.missing.bins:
        where = _find_executable(download.target_dir, name) if download is not None else None
        if where is not None:
            hints.append(
                f'{name} was installed to {where}, which is not on PATH: export PATH="{where}:$PATH"'
            )
        else:
            hints.append(
                f"{name} is still not on PATH; the installer may have put it in a folder that "
                "is not on PATH (go: $(go env GOPATH)/bin, uv and pip --user: ~/.local/bin)"
            )
    return tuple(hints)


def run_setup(plan: SetupPlan, *, progress: Progress | None = None) -> SetupResult:
    """Run ``plan`` (a refused plan returns its refusal without running anything)."""
    if plan.refusal is not None:
        r = plan.refusal
        refused = InstallResult(ok=r.ok, message=r.message, stderr=r.stderr, reason=r.code)
        return SetupResult(plan, refused.with_warnings(plan.warnings))
    audit_file: Path | None = None
    if plan.scan is not None and plan.scan.forced:
        try:
            audit_file = append_audit(plan.book.paths.state_dir, _audit_record(plan))
        except OSError as exc:
            failed = InstallResult.failure(
                "install.scan-forced", f"cannot write the install audit log: {exc}"
            )
            return SetupResult(plan, failed.with_warnings(plan.warnings))
    if plan.download is not None:
        result = run_download(
            plan.download,
            machine=plan.machine,
            options=plan.download_options,
            progress=progress,
        )
    else:
        result = run_steps(plan.steps, machine=plan.machine, progress=progress)
    result = result.with_warnings(plan.warnings)
    if not result.ok:
        return SetupResult(plan, result, audit_file=audit_file)
    after = fresh_status(plan)
    return SetupResult(plan, result, after, _hints(plan.download, after), audit_file)


def install_skill(
    workspace: str | os.PathLike[str] | None,
    skill_name: str,
    install_id: str,
    *,
    timeout_ms: int | None = None,
    config: Config | str | os.PathLike[str] | None = None,
    force_reason: str | None = None,
    env: Mapping[str, str] | None = None,
    fallbacks: Sequence[str] = (),
) -> InstallResult:
    """OpenClaw's ``installSkill`` (spec §8.3): run installer ``install_id`` of a skill.

    Calling it is the consent: nothing is asked. ``env`` is the environment skills are
    looked up and installers run in (default: this process's).
    """
    from skillbook.distribution.install.machine import Machine

    book = Loader(workspace, config=config, env=env).load()
    options = SetupOptions(
        timeout_ms=timeout_ms,
        force_reason=force_reason,
        fallbacks=tuple(fallbacks),
        machine=Machine.from_process(env),
    )
    try:
        plan = plan_setup(book, skill_name, install_id, options=options)
    except InstallError as exc:
        return InstallResult.from_error(exc)
    return run_setup(plan).result
