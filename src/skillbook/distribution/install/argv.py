"""The command line of a package-manager installer (spec §8.3 step 8).

Input: a parsed :class:`~skillbook.model.InstallSpec` (already through the parser's
first validation pass, §2.6) and the node manager of §8.1. Output: the argv to run,
or the exact OpenClaw error message of the second, stricter pass. Nothing here
looks at PATH or runs anything; bootstrapping a missing tool is
:mod:`skillbook.distribution.install.bootstrap`.
"""

from __future__ import annotations

import re
from typing import Final

from skillbook.base.js import js_trim
from skillbook.distribution import InstallError
from skillbook.model import InstallSpec

__all__ = [
    "SAFE_BREW_FORMULA",
    "SAFE_GO_MODULE",
    "SAFE_NODE_PACKAGE",
    "SAFE_UV_PACKAGE",
    "build_install_argv",
    "node_install_argv",
]

SAFE_BREW_FORMULA: Final = re.compile(r"^[a-z0-9][a-z0-9+._@-]*(/[a-z0-9][a-z0-9+._@-]*){0,2}$")
SAFE_NODE_PACKAGE: Final = re.compile(r"^(@[a-z0-9._-]+/)?[a-z0-9._-]+(@[a-z0-9^~>=<.*|-]+)?$")
#: An ``@version`` is mandatory here, although the parser accepts a bare module path.
SAFE_GO_MODULE: Final = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._/-]*@[a-z0-9v._-]+$")
SAFE_UV_PACKAGE: Final = re.compile(
    r"^[a-z0-9][a-z0-9._-]*(\[[a-z0-9,._-]+\])?(([><=!~]=?|===?)[a-z0-9.*_-]+)?$", re.I
)

# JavaScript's `$` (no `m` flag) matches only at the very end; Python's `$` also matches
# before a final "\n", so such a value is refused explicitly (see _checked).
_FIELD: Final = {
    "brew": ("formula", "brew formula", SAFE_BREW_FORMULA),
    "node": ("package", "node package", SAFE_NODE_PACKAGE),
    "go": ("module", "go module", SAFE_GO_MODULE),
    "uv": ("package", "uv package", SAFE_UV_PACKAGE),
}


def node_install_argv(package: str, node_manager: str) -> tuple[str, ...]:
    """Install ``package`` globally with lifecycle scripts off, per node manager (§8.3)."""
    if node_manager == "pnpm":
        return ("pnpm", "add", "-g", "--ignore-scripts", package)
    if node_manager == "yarn":
        return ("yarn", "global", "add", "--ignore-scripts", package)
    if node_manager == "bun":
        return ("bun", "add", "-g", "--ignore-scripts", package)
    return ("npm", "install", "-g", "--ignore-scripts", package)


def build_install_argv(spec: InstallSpec, *, node_manager: str) -> tuple[str, ...]:
    """The argv for a brew, node, go or uv spec; raises :class:`InstallError`
    (``install.invalid-spec``) with OpenClaw's message when a value is unsafe.
    """
    if spec.kind == "download":
        raise InstallError("install.invalid-spec", "download install handled separately")
    field = _FIELD.get(spec.kind)
    if field is None:
        raise InstallError("install.invalid-spec", "unsupported installer")
    attr, label, pattern = field
    value = getattr(spec, attr)
    if not value:
        raise InstallError("install.invalid-spec", f"missing {spec.kind} {attr}")
    checked = _checked(value, label, pattern)
    if spec.kind == "brew":
        return ("brew", "install", checked)
    if spec.kind == "node":
        return node_install_argv(checked, node_manager)
    if spec.kind == "go":
        return ("go", "install", checked)
    return ("uv", "tool", "install", checked)


def _checked(value: str, label: str, pattern: re.Pattern[str]) -> str:
    trimmed = js_trim(value)
    if not trimmed or trimmed.startswith("-"):
        raise InstallError("install.invalid-spec", f"{label} value is empty or starts with a dash")
    if "\n" in trimmed or not pattern.match(trimmed):
        raise InstallError(
            "install.invalid-spec", f"{label} value contains invalid characters: {trimmed}"
        )
    return trimmed
