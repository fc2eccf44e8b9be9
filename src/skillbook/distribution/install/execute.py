"""Carry out the command steps of a plan, in order, and sum up the outcome (spec §8.3 13-14).

Input: the :class:`~skillbook.distribution.install.plan.Step` list of a plan and the
:class:`~skillbook.distribution.install.machine.Machine` to run on. Output: an
:class:`~skillbook.distribution.install.result.InstallResult`: ``Installed`` with the install
step's trimmed output, or the failure message of the first step that stopped the
install (a bootstrap or probe message, or ``formatInstallFailureMessage`` of the
installer's own output).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from skillbook.base.js import js_trim
from skillbook.distribution.install.machine import Machine
from skillbook.distribution.install.plan import Role, Step
from skillbook.distribution.install.result import InstallResult, format_install_failure_message
from skillbook.distribution.install.runner import run_command
from skillbook.distribution.progress import NoProgress, Progress

__all__ = ["run_steps"]


def run_steps(
    steps: Sequence[Step], *, machine: Machine, progress: Progress | None = None
) -> InstallResult:
    report = progress or NoProgress()
    gobin: dict[str, str] = {}
    for step in steps:
        overrides = {**step.env, **(gobin if step.role is Role.INSTALL else {})}
        report.start(f"Running {step.argv[0].rsplit(os.sep, 1)[-1]} {' '.join(step.argv[1:])}")
        try:
            result = run_command(
                step.argv, timeout_ms=step.timeout_ms, env=machine.env, overrides=overrides
            )
        finally:
            report.finish()
        if step.role is Role.BEST_EFFORT:
            continue
        if step.role is Role.GOBIN:
            prefix = js_trim(result.stdout) if result.code == 0 else ""
            bin_dir = os.path.join(prefix, "bin") if prefix else machine.brew_bin_fallback()
            if bin_dir:
                gobin["GOBIN"] = bin_dir
            continue
        if result.code == 0:
            if step.role is Role.INSTALL:
                return InstallResult(
                    ok=True,
                    message="Installed",
                    stdout=js_trim(result.stdout),
                    stderr=js_trim(result.stderr),
                    code=0,
                )
            continue
        if step.role is Role.INSTALL:
            message = format_install_failure_message(result.code, result.stdout, result.stderr)
            reason = "install.command-failed"
        else:
            message = step.failure_message or format_install_failure_message(
                result.code, result.stdout, result.stderr
            )
            reason = "install.tool-missing"
        return InstallResult.failure(
            reason, message, stdout=result.stdout, stderr=result.stderr, code=result.code
        )
    return InstallResult.failure("install.invalid-spec", "invalid install command")
