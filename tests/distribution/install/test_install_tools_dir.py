"""§8.4 tools dir and §8.5 step 2 target checks."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle_support import Oracle

from skillbook.distribution import InstallError
from skillbook.distribution.install.tools_dir import (
    assert_canonical_within,
    resolve_target_dir,
    safe_path_segment_hashed,
    tools_root,
)


def test_examples() -> None:
    assert safe_path_segment_hashed("weather") == "weather"
    assert safe_path_segment_hashed("  weather ") == "weather"
    digest = hashlib.sha256(b"my skill").hexdigest()[:10]
    assert safe_path_segment_hashed(" my skill ") == f"my-skill-{digest}"
    assert safe_path_segment_hashed("..").startswith("skill-")
    assert safe_path_segment_hashed("a/b").startswith("a-b-")
    assert len(safe_path_segment_hashed("x" * 61)) == 61
    assert tools_root(Path("/s"), "my skill") == Path("/s/tools") / safe_path_segment_hashed(
        "my skill"
    )


@pytest.mark.oracle
@settings(max_examples=1, deadline=None)
@given(st.lists(st.text(max_size=80), min_size=300, max_size=300))
def test_same_as_openclaw(oracle_chunks: Path, keys: list[str]) -> None:
    keys += ["", " ", ".", "..", "a/../b", "ü" * 70, "x" * 60, "x" * 61, "-a-", "\ud800x", "😀"]
    keys = [k for k in keys if "\ud800" not in k or k == "\ud800x"]
    script = (
        f"import {{ a }} from {json.dumps(str(oracle_chunks))};"
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>"
        "console.log(JSON.stringify(JSON.parse(s).map(a))));"
    )
    payload = json.dumps(keys, ensure_ascii=True)
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        input=payload,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert [safe_path_segment_hashed(k) for k in keys] == json.loads(out)


@pytest.fixture(scope="module")
def oracle_chunks(oracle: Oracle) -> Path:
    root = oracle.root / "node_modules" / "openclaw" / "dist"
    found = sorted(root.glob("install-safe-path-*.js"))
    if not found:
        pytest.skip("OpenClaw's install-safe-path chunk not found in the oracle")
    return found[0]


def test_target_dir_resolution(tmp_path: Path) -> None:
    root = tmp_path / "tools" / "k"
    assert resolve_target_dir(root, None, home=tmp_path) == root
    assert resolve_target_dir(root, "  ", home=tmp_path) == root
    assert resolve_target_dir(root, "runtime", home=tmp_path) == root / "runtime"
    assert resolve_target_dir(root, str(root / "x"), home=tmp_path) == root / "x"


@pytest.mark.parametrize("raw", ["../outside", "/etc", "~/elsewhere", "a/../../b"])
def test_target_dir_outside_is_refused_with_openclaws_message(tmp_path: Path, raw: str) -> None:
    root = tmp_path / "tools" / "k"
    with pytest.raises(InstallError) as info:
        resolve_target_dir(root, raw, home=tmp_path / "home")
    resolved = (
        os.path.normpath(os.path.join(root, raw))
        if not raw.startswith(("/", "~"))
        else raw.replace("~", str(tmp_path / "home"))
    )
    assert info.value.message == (
        "Refusing to install outside the skill tools directory. "
        f'targetDir="{raw}" resolves to "{resolved}". Allowed root: "{root}".'
    )
    assert info.value.code == "install.target-escape"


def test_canonical_checks_fail_closed_on_links(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    assert_canonical_within(real, real / "sub", "skill tools directory")
    assert_canonical_within(real, real / "missing", "skill tools directory")
    link_root = tmp_path / "link"
    link_root.symlink_to(real)
    with pytest.raises(
        InstallError, match="Invalid skill tools directory: base directory must be a real directory"
    ):
        assert_canonical_within(link_root, link_root / "sub", "skill tools directory")
    (real / "out").symlink_to(tmp_path)
    with pytest.raises(InstallError, match="Invalid path: must stay within skill tools directory"):
        assert_canonical_within(real, real / "out", "skill tools directory")
    with pytest.raises(InstallError, match="Invalid path: must stay within skill tools directory"):
        assert_canonical_within(real, tmp_path / "other", "skill tools directory")
