"""What ``search``, ``install``, ``update``, ``remove`` and ``verify`` share.

Input: the global options (``ctx.obj``) and the commands' common ones (``--registry``,
``--global``, ``--json``). Output: the :class:`~skillbook.distribution.registry.workdir.Workdir`
(the workspace, or the state dir with ``--global``: its ``skills/`` is the managed
folder the loader reads), the :class:`~skillbook.distribution.registry.installer.Installer` with
its endpoint, progress bars on a terminal and retry notices on stderr.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from skillbook.cli.context import EXIT_ERROR, EXIT_FINDINGS, Context, fail
from skillbook.cli.progress import terminal_progress
from skillbook.cli.render import clean

if TYPE_CHECKING:
    from skillbook.config.file import Config
    from skillbook.config.run_settings import Settings
    from skillbook.distribution.registry import RegistryError
    from skillbook.distribution.registry.endpoint import Endpoint
    from skillbook.distribution.registry.installer import Installer, InstallOptions
    from skillbook.distribution.registry.workdir import Workdir

__all__ = [
    "build_installer",
    "choose_endpoint",
    "endpoint_of",
    "global_option",
    "install_options",
    "registry_error",
    "registry_option",
    "say_stderr",
    "workdir_of",
]

F = TypeVar("F", bound=Callable[..., Any])

#: Environment variable that points ``owner/repo`` shorthands at another git host.
GIT_BASE_VAR = "SKILLBOOK_GIT_BASE_URL"


def registry_option(func: F) -> F:
    """``--registry URL`` and ``--site URL`` (the command gets ``registry`` and ``site``)."""
    func = click.option(
        "--site",
        metavar="URL",
        help="Site whose /.well-known/clawhub.json names the registry, when no registry "
        "is set (default: CLAWHUB_SITE).",
    )(func)
    return click.option(
        "--registry",
        metavar="URL",
        help="Registry base URL (default: SKILLBOOK_REGISTRY_URL, OPENCLAW_CLAWHUB_URL, "
        "CLAWHUB_URL, CLAWHUB_REGISTRY, skills.registry.url, --site's discovery document, "
        "the clawhub CLI's config, https://clawhub.ai; `skillbook doctor` shows which). An "
        "installed skill is updated from the registry it was installed from.",
    )(func)


def global_option(func: F) -> F:
    return click.option(
        "--global",
        "global_",
        is_flag=True,
        help="Use the managed skills folder (<state dir>/skills) instead of the workspace.",
    )(func)


def dangerous_options(func: F) -> F:
    """``--dangerously-force`` and ``--reason`` (install and update)."""
    func = click.option("--reason", help="Why; recorded in <state dir>/install-audit.jsonl.")(func)
    return click.option(
        "--dangerously-force",
        "dangerous",
        is_flag=True,
        help="Go ahead despite critical security-scan findings. Needs --reason.",
    )(func)


def force_reason(dangerous: bool, reason: str | None) -> str | None:
    """The recorded reason of ``--dangerously-force``; exits 2 on a bad combination."""
    if dangerous and not (reason or "").strip():
        fail("--dangerously-force needs --reason TEXT (it is recorded in the install audit log)")
    if reason is not None and not dangerous:
        fail("--reason only goes with --dangerously-force", EXIT_ERROR)
    return reason.strip() if dangerous and reason else None


def say_stderr(line: str) -> None:
    click.echo(clean(f"skillbook: {line}"), err=True)


def workdir_of(settings: Settings, global_: bool) -> Workdir:
    from skillbook.distribution.registry.workdir import Workdir

    if global_:
        return Workdir(settings.paths.state_dir)
    chosen = settings.workspace
    if chosen.configured and not chosen.path.is_dir():
        fail(f"workspace folder {chosen.path} does not exist", error="workspace-missing")
    return Workdir(chosen.path)


def _discover(site: str) -> tuple[str, str] | None:
    from skillbook.distribution.http import new_http
    from skillbook.distribution.registry.discovery import discover

    with new_http() as http:
        found = discover(site, http)
    return (found.api_base, found.url) if found is not None else None


def choose_endpoint(
    env: Mapping[str, str],
    os_home: Path,
    config: Config,
    registry: str | None = None,
    site: str | None = None,
    *,
    fetch: bool = True,
) -> Endpoint:
    """The registry of every registry command and of ``doctor``: the flag, the
    environment and the config handed to the one rule
    (:func:`skillbook.distribution.registry.endpoint.resolve_endpoint`). ``fetch=False`` (doctor)
    never asks a site's discovery document. Raises ``RegistryError``."""
    from skillbook.distribution.registry.endpoint import resolve_endpoint

    return resolve_endpoint(
        env,
        home=os_home,
        platform=sys.platform,
        explicit=registry,
        config_url=config.skills.registry.url,
        config_url_reason=f"skills.registry.url in {config.file}",
        site=site,
        discover=_discover if fetch else None,
    )


def endpoint_of(settings: Settings, registry: str | None, site: str | None = None) -> Endpoint:
    """:func:`choose_endpoint` for a command; a malformed URL or token exits 2."""
    try:
        return choose_endpoint(
            settings.env, settings.paths.os_home, settings.config, registry, site
        )
    except Exception as exc:  # RegistryError: a malformed URL or token
        registry_error(exc)


def build_installer(
    obj: Context, *, registry: str | None, site: str | None, global_: bool, as_json: bool
) -> tuple[Settings, Installer]:
    from skillbook.distribution.registry.installer import Installer

    settings = obj.settings()
    workdir = workdir_of(settings, global_)

    def installed() -> set[str]:
        names: set[str] = set()
        for root in (workdir.skills_dir, settings.paths.managed_dir):
            try:
                names.update(n for n in os.listdir(root) if not n.startswith("."))
            except OSError:
                continue
        return names

    installer = Installer(
        workdir,
        endpoint_of(settings, registry, site),
        installed_names=installed,
        progress=None if as_json else terminal_progress(),
        say=say_stderr,
        env=dict(settings.env),
    )
    return settings, installer


def install_options(settings: Settings, **values: Any) -> InstallOptions:
    from skillbook.distribution.install.policy import InstallPolicy
    from skillbook.distribution.registry.installer import InstallOptions
    from skillbook.distribution.registry.refs import DEFAULT_GIT_BASE

    network = InstallPolicy.from_config(settings.config).network()
    git_base = settings.env.get(GIT_BASE_VAR, "").strip() or DEFAULT_GIT_BASE
    return InstallOptions(
        state_dir=settings.paths.state_dir, network=network, git_base=git_base, **values
    )


def registry_error(exc: BaseException, *, code: int = EXIT_FINDINGS) -> NoReturn:
    """Report a :class:`RegistryError` (exit 1: refused or failed) or re-raise others."""
    from skillbook.distribution.registry import RegistryError

    if not isinstance(exc, RegistryError):
        raise exc
    error: RegistryError = exc
    if error.code in ("registry.invalid-ref", "registry.invalid-url", "registry.invalid-token"):
        code = EXIT_ERROR
    fail(error.message, code, error=error.code)


def scan_hint(code: str) -> None:
    if code == "install.scan-blocked":
        click.echo(
            "skillbook: to install anyway, add --dangerously-force --reason TEXT (recorded)",
            err=True,
        )
