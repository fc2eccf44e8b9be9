"""Installing a registry archive whose file names the registry would refuse to publish.

The archive is served by a ClawHub-compatible server on 127.0.0.1; the installer must
refuse it with ``install.archive-rejected`` naming the rule, and leave nothing behind.
Tool downloads (``skillbook.distribution.install``'s ``download`` kind) keep OpenClaw's rules only.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from distribution.registry.clawhub_server import ClawHub
from distribution.registry.conftest import DEMO_V1
from skillbook.distribution import InstallError
from skillbook.distribution.archives.extract import extract_tar, extract_zip
from skillbook.distribution.archives.paths import DEFAULT_LIMITS
from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.installer import Installer, InstallOptions
from skillbook.distribution.registry.workdir import Workdir

SKILL = DEMO_V1["SKILL.md"]


def _zip(names: list[str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("SKILL.md", SKILL)
        for name in names:
            zf.writestr(name, b"x")
    return buf.getvalue()


HOSTILE = {
    "long": (["a" * 256], "name-too-long"),
    "con": (["CON"], "windows-reserved"),
    "con-txt": (["docs/con.txt"], "windows-reserved"),
    "nul": (["NUL"], "windows-reserved"),
    "com1": (["COM1.md"], "windows-reserved"),
    "drive": (["c:x"], "drive-or-stream"),
    "stream": (["a:b"], "drive-or-stream"),
    "bidi": (["evil\u202egpj.sh"], "invisible-character"),
    "zero-width": (["a\u200bb.md"], "invisible-character"),
    "case": (["skill.md"], "case"),
    "nfc-nfd": (["caf\u00e9.md", "cafe\u0301.md"], "normalisation"),
    "file-folder": (["docs", "docs/a.md"], "file-folder"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_registry_archive_with_a_refused_name_is_not_installed(
    hub: ClawHub, installer: Installer, workdir: Workdir, options: InstallOptions, name: str
) -> None:
    names, rule = HOSTILE[name]
    hub.state.publish("evil", "1.0.0", DEMO_V1, archive=_zip(names))
    with pytest.raises(RegistryError) as info:
        installer.install("evil", options)
    assert info.value.code == "install.archive-rejected"
    assert f"archive entry name refused ({rule})" in str(info.value)
    assert "\u202e" not in str(info.value)  # the message spells invisible characters out
    assert sorted(p.name for p in (workdir.root / "skills").iterdir()) == []
    assert not (workdir.root / ".clawhub").exists()


def test_a_tar_with_a_case_clash_is_refused_as_a_skill_archive(tmp_path: Path) -> None:
    archive = tmp_path / "skill.tar.gz"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        folder = tarfile.TarInfo("Docs")
        folder.type = tarfile.DIRTYPE
        tf.addfile(folder)
        for name, data in (("SKILL.md", SKILL), ("docs/a.md", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    archive.write_bytes(buf.getvalue())
    (tmp_path / "out").mkdir()
    with pytest.raises(InstallError, match=r"name refused \(case\)"):
        extract_tar(archive, tmp_path / "out", strip=0, limits=DEFAULT_LIMITS, names=True)


def test_tool_downloads_keep_openclaws_rules(tmp_path: Path) -> None:
    # A tool's own archive is not a published skill: a name Windows reserves is fine on Linux.
    archive = tmp_path / "tool.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("bin/tool", b"x")
        zf.writestr("share/con.txt", b"y")
    (tmp_path / "out").mkdir()
    extract_zip(archive, tmp_path / "out", strip=0, limits=DEFAULT_LIMITS)
    assert (tmp_path / "out" / "share" / "con.txt").read_bytes() == b"y"
