"""§8.3 step 8: the second validation pass and its exact messages."""

from __future__ import annotations

import pytest

from skillbook.distribution import InstallError
from skillbook.distribution.install.argv import build_install_argv
from skillbook.model import InstallSpec


def message(spec: InstallSpec) -> str:
    with pytest.raises(InstallError) as info:
        build_install_argv(spec, node_manager="npm")
    assert info.value.code == "install.invalid-spec"
    return info.value.message


def test_valid_values_build_argv() -> None:
    assert build_install_argv(
        InstallSpec(kind="brew", formula=" steipete/tap/sag "), node_manager="npm"
    ) == (
        "brew",
        "install",
        "steipete/tap/sag",
    )
    assert build_install_argv(
        InstallSpec(kind="uv", package="Uvicorn[standard]==0.31.0"), node_manager="npm"
    ) == (
        "uv",
        "tool",
        "install",
        "Uvicorn[standard]==0.31.0",
    )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # The parser accepts capitals and a bare module path; this pass does not.
        (
            InstallSpec(kind="brew", formula="Python"),
            "brew formula value contains invalid characters: Python",
        ),
        (
            InstallSpec(kind="brew", formula="a/b/c/d"),
            "brew formula value contains invalid characters: a/b/c/d",
        ),
        (
            InstallSpec(kind="go", module="example.com/tool"),
            "go module value contains invalid characters: example.com/tool",
        ),
        (
            InstallSpec(kind="node", package="pkg@^1.0 || 2"),
            "node package value contains invalid characters: pkg@^1.0 || 2",
        ),
        (
            InstallSpec(kind="uv", package="pkg; rm -rf ~ \n"),
            "uv package value contains invalid characters: pkg; rm -rf ~",
        ),
        (
            InstallSpec(kind="uv", package=" -e ."),
            "uv package value is empty or starts with a dash",
        ),
        (
            InstallSpec(kind="brew", formula=" "),
            "brew formula value is empty or starts with a dash",
        ),
        (InstallSpec(kind="go"), "missing go module"),
        (InstallSpec(kind="download", url="https://x/"), "download install handled separately"),
        (InstallSpec(kind="cargo"), "unsupported installer"),
    ],
)
def test_refusals(spec: InstallSpec, expected: str) -> None:
    assert message(spec) == expected
