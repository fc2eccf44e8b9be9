"""The error tree is closed: every exception skillbook defines is a ``SkillbookError``
exported from ``skillbook``, or one of a few internal ones that never leave their module."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import skillbook
from skillbook import errors

#: Exceptions that are caught where they are raised (or turned into a diagnostic or a
#: package's public error) and so are not part of the API; each says where it ends.
INTERNAL = {
    # the trust check re-raises it as a RegistryError named after the registry asked
    "skillbook.distribution.registry.trust._Untrusted",
    # the parser turns it into parse.yaml-* diagnostics
    "skillbook.pipeline.parse.yaml_core.YamlError",
    # the verified opens turn it into a read error or a diagnostic
    "skillbook.base.fs.PathChanged",
    # the MCP client reports a cut-off answer as mcp.digest-mismatch
    "skillbook.mcp._capped.AnswerTooLarge",
    # the providers' stand-in for an absent SDK's error class, never raised
    "skillbook.runtime.providers.vendor._NoError",
    # sync re-raises it as SyncBusy naming the target
    "skillbook.base.locks.FolderBusy",
    # sync and load turn it into sync.copy-failed or a SyncError naming the skill
    "skillbook.distribution.sync.copytree.CopyError",
    # the registry server's routes answer it as a plain-text HTTP error
    "skillbook.distribution.hub.http.HttpError",
    # the registry server turns a rejected upload path into a 400 HubError
    "skillbook.distribution.hub.archive.PathRejected",
    # the registry server answers it as a 400 JSON HubError, the installers as
    # install.archive-rejected
    "skillbook.distribution.archives.names.NameRejected",
}


def defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in a skillbook module (edges included)."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(skillbook.__path__, "skillbook."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_every_exception_is_in_the_tree_and_exported() -> None:
    found = defined_exceptions()
    assert set(found) >= INTERNAL, sorted(INTERNAL - set(found))
    public = {k: v for k, v in found.items() if k not in INTERNAL}
    assert all(k.startswith("skillbook.errors.") for k in public), sorted(public)
    assert all(issubclass(v, errors.SkillbookError) for v in public.values())
    for name, cls in public.items():
        assert getattr(skillbook, cls.__name__) is cls, name
        assert cls.__name__ in skillbook.__all__
        assert cls.__name__ in (errors.__doc__ or ""), f"{name} is missing from the tree"
    # The internal ones that a public function could let through still derive from it.
    for name in (
        "skillbook.base.locks.FolderBusy",
        "skillbook.distribution.sync.copytree.CopyError",
    ):
        assert issubclass(found[name], errors.SyncError)


def test_edges_re_export_the_same_classes() -> None:
    from skillbook.distribution.hub.client import PublishFailed
    from skillbook.distribution.hub.publish import HubError
    from skillbook.distribution.install import InstallError
    from skillbook.distribution.sync import SyncBusy, SyncError, TargetNotSynced
    from skillbook.mcp.server import PortInUse, ServeError
    from skillbook.security import ScanTargetError
    from skillbook.selection._deps import SelectionUnavailable
    from skillbook.selection.evaluate import QueryFileError
    from skillbook.selection.http_embedder import EmbeddingError

    for cls in (
        HubError,
        PublishFailed,
        InstallError,
        PortInUse,
        ServeError,
        ScanTargetError,
        SelectionUnavailable,
        QueryFileError,
        EmbeddingError,
        SyncBusy,
        SyncError,
        TargetNotSynced,
    ):
        assert getattr(skillbook, cls.__name__) is cls
        assert issubclass(cls, skillbook.SkillbookError)


@pytest.mark.subprocess
def test_naming_an_edge_exception_loads_no_edge_package() -> None:
    """``except skillbook.PortInUse`` must not pull in the MCP SDK (or any edge)."""
    code = (
        "import sys, skillbook\n"
        "for n in ('PortInUse', 'SyncBusy', 'InstallError', 'ScanTargetError',"
        " 'SelectionUnavailable', 'EmbeddingError', 'QueryFileError', 'HubError',"
        " 'PublishFailed'):\n"
        "    getattr(skillbook, n)\n"
        "edges = ('mcp', 'runtime', 'integrations', 'cli', 'install', 'security', 'sync',"
        " 'selection', 'hub', 'registry')\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.split('.')[:2] in"
        " [['skillbook', e] for e in edges]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
