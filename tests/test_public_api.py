"""The public API a person can read: a short face, one import path per name, a closed error tree.

* ``skillbook.__all__`` holds at most 40 names, every one resolves, and the lazy table
  and the type checkers' imports say the same thing.
* No module re-exports: a name is imported from the module that defines it, and an
  ``__all__`` lists only names its module defines. The face (``skillbook/__init__``)
  is the one exception.
* Every exception skillbook defines is a ``SkillbookError``, defined in the core's
  ``skillbook.errors`` or in its part's package ``__init__``, or is one of a few
  internal ones listed here with where each ends.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import skillbook
from skillbook.errors import SkillbookError

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
FACE = "skillbook"

#: Exceptions that are not ``SkillbookError``s: caught where they are raised (or turned
#: into a diagnostic, an HTTP answer or a package's public error); each says where it ends.
NOT_IN_THE_TREE = {
    # the parser turns it into parse.yaml-* diagnostics
    "skillbook.pipeline.parse.yaml_core.YamlError",
    # the verified opens turn it into a read error or a diagnostic
    "skillbook.base.fs.PathChanged",
    # the MCP client reports a cut-off answer as mcp.digest-mismatch (an httpx stream error)
    "skillbook.mcp._capped.AnswerTooLarge",
    # sentinels of the providers' stream parsers
    "skillbook.runtime.providers.vendor._NoError",
    # base sits below the error tree; sync re-raises it as SyncBusy naming the target
    "skillbook.base.locks.FolderBusy",
    # the registry server answers it as a 400 JSON HubError, the installers as
    # install.archive-rejected
    "skillbook.distribution.archives.names.NameRejected",
}

#: ``SkillbookError``s that never leave their package, so they live beside their raiser.
INTERNAL = {
    # the trust check re-raises it as a RegistryError named after the registry asked
    "skillbook.distribution.registry.trust._Untrusted",
    # sync and load turn it into sync.copy-failed or a SyncError naming the skill
    "skillbook.distribution.sync.copytree.CopyError",
    # the fresh `select` catches it and ranks with the numpy selector instead
    "skillbook.selection.plain.Unsupported",
}


# -- the face ---------------------------------------------------------------------------


def test_the_face_lists_at_most_forty_names_and_each_resolves() -> None:
    names = skillbook.__all__
    assert len(names) <= 40, f"{len(names)} public names: move some to their modules"
    assert len(set(names)) == len(names)
    for name in names:
        assert getattr(skillbook, name) is not None, name


def test_the_face_names_each_name_by_the_module_that_defines_it() -> None:
    for module, names in skillbook._EXPORTS.items():
        for name in names:
            value = getattr(importlib.import_module(module), name)
            assert getattr(value, "__module__", module) == module, (name, module)


def test_the_type_checking_imports_are_the_lazy_table() -> None:
    """mypy reads the ``TYPE_CHECKING`` imports, Python the table: they must agree."""
    tree = ast.parse((SRC / "skillbook" / "__init__.py").read_text(encoding="utf-8"))
    imported: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module != "typing":
                    assert all(a.asname == a.name for a in stmt.names), "write `X as X`"
                    imported.setdefault(stmt.module or "", set()).update(a.name for a in stmt.names)
    assert imported == {m: set(n) for m, n in skillbook._EXPORTS.items()}


# -- no re-exports ----------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in (SRC / "skillbook").rglob("*.py")}


def _absolute(module: str | None, level: int, importer: str, is_package: bool) -> str:
    if not level:
        return module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _bindings(path: Path) -> tuple[set[str], dict[str, str]]:
    """The names a module defines, and those it imports (name -> the module named)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _module_name(path)
    defined: set[str] = set()
    imported: dict[str, str] = {}

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    defined.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node.module, node.level, me, path.name == "__init__.py")
                for alias in node.names:
                    if f"{source}.{alias.name}" in MODULES:  # a submodule is not a name
                        defined.add(alias.asname or alias.name)
                    else:
                        imported.setdefault(alias.asname or alias.name, source)
            elif isinstance(node, ast.Import):
                defined.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.If, ast.Try)):
                walk(node.body)
                walk(node.orelse)
                for handler in getattr(node, "handlers", []):
                    walk(handler.body)

    walk(tree.body)
    return defined, {n: m for n, m in imported.items() if n not in defined}


BINDINGS = {name: _bindings(path) for name, path in MODULES.items()}


def re_exports_in(path: Path) -> list[str]:
    """Each ``from M import X`` in ``path`` where ``M`` only imports ``X`` from elsewhere."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    importer = _module_name(path) if path.is_relative_to(SRC) else path.stem
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        source = _absolute(node.module, node.level, importer, path.name == "__init__.py")
        if source == FACE or source not in BINDINGS:
            continue
        _, imported = BINDINGS[source]
        for alias in node.names:
            if alias.name in imported:
                home = imported[alias.name]
                found.append(
                    f"{path.name}:{node.lineno}: {alias.name} from {source} (it is {home}'s)"
                )
    return found


def foreign_all_names(path: Path) -> list[str]:
    """The names an ``__all__`` lists that its module does not define."""
    defined, _ = _bindings(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            listed = [
                e.value
                for e in getattr(node.value, "elts", [])
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            found += [f"{_module_name(path)}.__all__: {n}" for n in listed if n not in defined]
    return found


def redundant_aliases(path: Path) -> list[str]:
    """``from M import X as X``: the spelling that marks a re-export for type checkers."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.name}:{node.lineno}: {a.name} as {a.asname}"
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for a in node.names
        if a.asname == a.name.rsplit(".", 1)[-1]
    ]


PYTHON_FILES = sorted(
    p for d in ("src", "tests", "benchmarks") for p in (REPO / d).rglob("*.py") if p.is_file()
)


def test_names_are_imported_from_the_module_that_defines_them() -> None:
    problems = [problem for path in PYTHON_FILES for problem in re_exports_in(path)]
    assert problems == []


def test_no_module_but_the_face_lists_foreign_names_or_marks_re_exports() -> None:
    faces = {SRC / "skillbook" / "__init__.py"}
    problems = []
    for path in MODULES.values():
        if path not in faces:
            problems += foreign_all_names(path) + redundant_aliases(path)
    assert problems == []


def test_the_docs_import_names_from_the_module_that_defines_them() -> None:
    pattern = re.compile(r"^\s*from (skillbook[\w.]*) import \(?([\w, ]+)", re.M)
    problems = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for match in pattern.finditer(doc.read_text(encoding="utf-8")):
            source = match.group(1)
            if source == FACE or source not in BINDINGS:
                continue
            names = [n.strip().split(" as ")[0] for n in match.group(2).split(",")]
            problems += [
                f"{doc.name}: {n} from {source}" for n in names if n in BINDINGS[source][1]
            ]
    assert problems == []


def test_the_check_sees_a_re_export(tmp_path: Path) -> None:
    """The check itself: a module importing a name from a module that re-exports it fails."""
    user = tmp_path / "user.py"
    # `parse_skill_text` is defined in skill_file; skill_file imports `js_trim`.
    user.write_text(
        "from skillbook.pipeline.parse.skill_file import parse_skill_text\n"
        "from skillbook.pipeline.parse.skill_file import js_trim\n",
        encoding="utf-8",
    )
    assert BINDINGS["skillbook.pipeline.parse.skill_file"][1]["js_trim"] == "skillbook.base.js"
    assert [p.split(": ", 1)[1] for p in re_exports_in(user)] == [
        "js_trim from skillbook.pipeline.parse.skill_file (it is skillbook.base.js's)"
    ]
    listing = tmp_path / "listing.py"
    listing.write_text("from os import sep\nfrom os import path as path\n__all__ = ['sep']\n")
    assert len(redundant_aliases(listing)) == 1


# -- the error tree ---------------------------------------------------------------------


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


def test_every_exception_is_a_skillbook_error_reachable_from_its_package() -> None:
    found = defined_exceptions()
    assert set(found) >= NOT_IN_THE_TREE | INTERNAL, sorted(
        (NOT_IN_THE_TREE | INTERNAL) - set(found)
    )
    outside = sorted(k for k, v in found.items() if not issubclass(v, SkillbookError))
    assert outside == sorted(NOT_IN_THE_TREE)
    tree_doc = importlib.import_module("skillbook.errors").__doc__ or ""
    for name, cls in found.items():
        if name in NOT_IN_THE_TREE or name in INTERNAL:
            continue
        home = cls.__module__
        # The core's errors live in skillbook.errors; an edge's in its package __init__.
        is_package = hasattr(importlib.import_module(home), "__path__")
        assert home == "skillbook.errors" or (is_package and home != FACE), name
        assert cls.__name__ in tree_doc, f"{name} is missing from the tree in errors.py"


def test_the_edges_errors_keep_their_branches() -> None:
    from skillbook.base.locks import FolderBusy
    from skillbook.distribution.hub import HttpError, HubError, HubNotFound, PathRejected
    from skillbook.distribution.registry import PublishFailed, RegistryError
    from skillbook.distribution.sync import SyncBusy, SyncError
    from skillbook.distribution.sync.copytree import CopyError
    from skillbook.mcp import PortInUse, ServeError

    assert issubclass(PortInUse, ServeError) and issubclass(PortInUse, OSError)
    assert issubclass(PublishFailed, RegistryError)
    assert issubclass(FolderBusy, BlockingIOError) and issubclass(CopyError, SyncError)
    assert issubclass(SyncBusy, SyncError)
    assert issubclass(HubNotFound, HubError) and issubclass(HubNotFound, LookupError)
    # The registry server's two route errors joined the tree and keep their HTTP answer.
    rate = HttpError(429, "Rate limit exceeded", {"Retry-After": "3"})
    assert isinstance(rate, HubError) and (rate.status, rate.headers) == (429, {"Retry-After": "3"})
    rejected = PathRejected("file path 'a/../b' is not normalised")
    assert isinstance(rejected, HubError) and isinstance(rejected, ValueError)
    assert (rejected.status, str(rejected)) == (400, "file path 'a/../b' is not normalised")


#: The packages whose ``__init__`` holds exceptions, and what naming one may not load.
ERROR_PACKAGES = (
    "skillbook.runtime",
    "skillbook.mcp",
    "skillbook.security",
    "skillbook.selection",
    "skillbook.experience",
    "skillbook.distribution.install",
    "skillbook.distribution.sync",
    "skillbook.distribution.registry",
    "skillbook.distribution.hub",
    "skillbook.distribution.agents",
)
HEAVY = ("mcp", "httpx", "httpx2", "starlette", "uvicorn", "sqlalchemy", "click", "rich", "numpy")


@pytest.mark.subprocess
def test_naming_an_edge_exception_loads_nothing_else_of_the_edge() -> None:
    """``except PortInUse`` must not pull in the MCP SDK, nor any module of an edge."""
    code = (
        "import sys, importlib\n"
        f"for p in {ERROR_PACKAGES!r}:\n"
        "    importlib.import_module(p)\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        f"edge = [m for m in sys.modules if m.startswith(('skillbook.runtime', 'skillbook.mcp',"
        " 'skillbook.security', 'skillbook.selection', 'skillbook.experience',"
        f" 'skillbook.distribution')) and m not in {ERROR_PACKAGES!r} + ('skillbook.distribution',)]\n"
        "print(sorted(heavy + edge))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
