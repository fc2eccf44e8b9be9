"""§8.5 against a real HTTP server on 127.0.0.1: good archives, hostile archives and
servers. Every refusal says why, and nothing is written outside the tools folder: the
whole test folder (minus the skill's tools root and its lock file) is snapshotted
before and after, and the target keeps its old content after a refusal.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from distribution.install.archives import (
    Entry,
    make_tar,
    make_zip,
    shrink_declared_size,
    zip_of_zeros,
)
from distribution.install.install_support import (
    Server,
    server_fixture,  # noqa: F401 (fixtures)
    snapshot,
)
from skillbook.distribution import InstallError
from skillbook.distribution.archives.paths import DEFAULT_LIMITS, ExtractLimits
from skillbook.distribution.install.download import (
    STAGING_DIR_NAME,
    DownloadOptions,
    plan_download,
    run_download,
)
from skillbook.distribution.install.machine import Machine
from skillbook.distribution.install.result import InstallResult
from skillbook.distribution.install.tools_dir import tools_root
from skillbook.distribution.netguard import NetworkPolicy
from skillbook.pipeline.parse.manifest import parse_install_spec

LOCAL = NetworkPolicy(allow_private_network=True)


@dataclass
class Box:
    tmp: Path
    home: Path
    root: Path
    machine: Machine

    @property
    def lock(self) -> Path:
        return self.root.parent / f".{self.root.name}.lock"

    def outside(self) -> dict[str, tuple[str, str]]:
        return snapshot(self.tmp, exclude=(self.root, self.lock))

    def inside(self) -> dict[str, tuple[str, str]]:
        return (
            snapshot(self.root, exclude=(self.root / STAGING_DIR_NAME,))
            if self.root.exists()
            else {}
        )

    def run(
        self,
        url: str,
        *,
        options: DownloadOptions | None = None,
        **fields: Any,
    ) -> InstallResult:
        spec = parse_install_spec({"kind": "download", "url": url, **fields})
        assert spec is not None
        plan = plan_download(spec, tools_root=self.root, home=self.home, timeout_ms=30_000)
        return run_download(
            plan, machine=self.machine, options=options or DownloadOptions(network=LOCAL)
        )

    def refused(self, url: str, **fields: Any) -> InstallResult:
        """Run a download that must be refused: nothing may change, outside or in the target."""
        before_out, before_in = self.outside(), self.inside()
        result = self.run(url, **fields)
        assert not result.ok, result
        assert self.outside() == before_out
        assert self.inside() == before_in
        assert not [
            p
            for p in self.root.parent.iterdir()
            if re.search(r"\.(tmp|old|new)-[a-z0-9]{8}$", p.name)
        ]
        return result


@pytest.fixture
def box(tmp_path: Path) -> Box:
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "keep.txt").write_text("precious")
    machine = Machine(platform="linux", env={"PATH": "/usr/bin:/bin", "HOME": str(home)}, home=home)
    root = tools_root(tmp_path / "state", "my-skill")
    root.parent.mkdir(parents=True)  # <state>/tools: created by any first install
    return Box(tmp_path, home, root, machine)


GOOD = [
    Entry("tool/", kind="dir"),
    Entry("tool/bin/", kind="dir"),
    Entry("tool/bin/mytool", b"#!/bin/sh\necho hi\n", mode=0o755),
    Entry("tool/README", b"read me"),
]


def test_zip_is_extracted_and_kept(box: Box, server: Server) -> None:
    url = server.file("/dl/tool.zip", make_zip(GOOD))
    result = box.run(url)
    assert result == InstallResult(
        ok=True, message=f"Downloaded and extracted to {box.root}", code=0
    )
    assert (box.root / "tool" / "bin" / "mytool").read_bytes() == b"#!/bin/sh\necho hi\n"
    assert os.access(box.root / "tool" / "bin" / "mytool", os.X_OK)
    assert (box.root / "tool.zip").is_file()  # the archive is left in place, as in OpenClaw


def test_tar_gz_strip_components_into_a_relative_target(box: Box, server: Server) -> None:
    url = server.file("/tool.tgz", make_tar(GOOD))
    result = box.run(url, stripComponents=1, targetDir="runtime")
    assert result.ok and result.message == f"Downloaded and extracted to {box.root / 'runtime'}"
    assert (box.root / "runtime" / "bin" / "mytool").read_text() == "#!/bin/sh\necho hi\n"
    assert (box.root / "runtime" / "README").read_text() == "read me"


def test_tar_bz2_through_system_tar(box: Box, server: Server) -> None:
    url = server.file("/tool.tar.bz2", make_tar(GOOD, compression="bz2"))
    result = box.run(url, stripComponents=1)
    assert result.ok, result
    assert (box.root / "bin" / "mytool").read_text() == "#!/bin/sh\necho hi\n"


def test_a_second_install_merges_over_the_first(box: Box, server: Server) -> None:
    box.run(server.file("/a.zip", make_zip([Entry("a.txt", b"A1"), Entry("b.txt", b"B1")])))
    box.run(server.file("/b.zip", make_zip([Entry("a.txt", b"A2")])))
    assert (box.root / "a.txt").read_text() == "A2"
    assert (box.root / "b.txt").read_text() == "B1"


def test_plain_download_without_extraction(box: Box, server: Server) -> None:
    url = server.file("/bin/tool-linux", b"\x7fELF....")
    result = box.run(url)
    assert result == InstallResult(
        ok=True, message=f"Downloaded to {box.root / 'tool-linux'}", stdout="downloaded=8", code=0
    )


def test_extract_requested_without_a_known_type(box: Box, server: Server) -> None:
    result = box.run(server.file("/tool.bin", b"data"), extract=True)
    assert result.message == "extract requested but archive type could not be detected"
    assert (box.root / "tool.bin").read_bytes() == b"data"


def test_unsupported_explicit_archive_type(box: Box, server: Server) -> None:
    result = box.refused(server.file("/tool.rar", b"Rar!"), archive="RAR")
    assert result.message == "Install failed (unknown exit): unsupported archive type: rar"


def test_sha256_is_verified_before_extraction(box: Box, server: Server) -> None:
    data = make_zip(GOOD)
    url = server.file("/tool.zip", data)
    wrong = "0" * 64
    result = box.refused(url, sha256=wrong)
    got = hashlib.sha256(data).hexdigest()
    assert result.message == f"sha256 mismatch for {url}: expected {wrong}, got {got}"
    assert result.reason == "install.checksum-mismatch"
    assert box.run(url, sha256=got.upper()).ok


def test_malformed_sha256_is_refused_before_anything(box: Box, server: Server) -> None:
    url = server.file("/tool.zip", make_zip(GOOD))
    spec = parse_install_spec({"kind": "download", "url": url, "sha256": "abc"})
    assert spec is not None
    with pytest.raises(InstallError, match=r'sha256 "abc" of .* is not 64 hexadecimal digits'):
        plan_download(spec, tools_root=box.root, home=box.home, timeout_ms=1000)
    assert server.hits == []


def test_http_error(box: Box, server: Server) -> None:
    result = box.refused(server.base + "/missing.zip")
    assert (result.message, result.stderr, result.code) == (
        "Download failed (404 Not Found)",
        "Download failed (404 Not Found)",
        None,
    )


def test_lying_content_length(box: Box, server: Server) -> None:
    result = box.refused(server.lying("/short.zip", b"0123456789", announced=1000))
    assert result.message.startswith("Download failed")
    assert "1000" in result.message


def test_announced_size_over_the_cap_is_refused_before_reading(box: Box, server: Server) -> None:
    url = server.file("/big.zip", bytes(5000))
    before = box.outside()
    result = box.run(url, options=DownloadOptions(network=LOCAL, max_download_bytes=1000))
    assert result.message == (
        "Download refused: the server announces 5000 bytes, more than the limit of 1000 bytes"
    )
    assert box.outside() == before


def test_target_dir_outside_the_root_is_refused_before_any_request(
    box: Box, server: Server
) -> None:
    url = server.file("/tool.zip", make_zip(GOOD))
    spec = parse_install_spec({"kind": "download", "url": url, "targetDir": "../outside"})
    assert spec is not None
    with pytest.raises(InstallError, match="Refusing to install outside the skill tools directory"):
        plan_download(spec, tools_root=box.root, home=box.home, timeout_ms=1000)
    assert server.hits == []


# --------------------------------------------------------------------------- hostile entries


@pytest.mark.parametrize(
    ("entries", "strip", "message"),
    [
        (
            [Entry("../../escape.txt", b"x")],
            0,
            "archive entry escapes destination: ../../escape.txt",
        ),
        ([Entry("top/../x", b"x")], 1, "archive entry escapes destination: ../x"),
        ([Entry("/abs.txt", b"x")], 0, "archive entry is absolute: /abs.txt"),
        ([Entry("C:/win.txt", b"x")], 0, "archive entry uses a drive path: C:/win.txt"),
        (
            [Entry("ok.txt", b"x"), Entry("link", kind="symlink", target="/etc/passwd")],
            0,
            "zip entry is a link: link",
        ),
        ([Entry("dev", kind="chr")], 0, "zip entry is a link: dev"),
        ([Entry("pipe", kind="fifo")], 0, "zip entry is a link: pipe"),
    ],
)
def test_hostile_zip_entries(
    box: Box, server: Server, entries: list[Entry], strip: int, message: str
) -> None:
    result = box.refused(server.file("/evil.zip", make_zip(entries)), stripComponents=strip)
    assert result.message == f"Install failed (exit 1): {message}"
    assert result.reason == "install.archive-rejected"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (Entry("link", kind="symlink", target="../../outside"), "tar entry is a link: link"),
        (Entry("hard", kind="hardlink", target="/etc/passwd"), "tar entry is a link: hard"),
        (Entry("dev", kind="chr"), "tar entry is a link: dev"),
        (Entry("disk", kind="blk"), "tar entry is a link: disk"),
        (Entry("pipe", kind="fifo"), "tar entry is a link: pipe"),
        (Entry("../escape", b"x"), "archive entry escapes destination: ../escape"),
        (Entry("/abs", b"x"), "archive entry is absolute: /abs"),
    ],
)
def test_hostile_tar_gz_entries(box: Box, server: Server, entry: Entry, message: str) -> None:
    data = make_tar([Entry("fine.txt", b"ok"), entry])
    result = box.refused(server.file("/evil.tar.gz", data))
    assert result.message == f"Install failed (exit 1): {message}"


def test_encrypted_zip_entries_are_refused(box: Box, server: Server) -> None:
    data = make_zip([Entry("payload.sh", b"x")], encrypted=["payload.sh"])
    result = box.refused(server.file("/locked.zip", data))
    assert result.message == "Install failed (exit 1): zip entry is encrypted: payload.sh"


@pytest.mark.parametrize("kind", ["zip", "tgz"])
def test_no_write_through_a_symlink_already_in_the_target(
    box: Box, server: Server, kind: str
) -> None:
    box.root.mkdir(parents=True)
    (box.root / "evil").symlink_to(box.tmp / "outside")
    (box.root / "keep.txt").symlink_to(box.tmp / "outside" / "keep.txt")
    entries = [Entry("evil/pwned.txt", b"owned")]
    data = make_zip(entries) if kind == "zip" else make_tar(entries)
    result = box.refused(server.file(f"/evil.{kind}", data))
    assert result.message == (
        "Install failed (exit 1): archive entry traverses symlink in destination: evil/pwned.txt"
    )
    data = make_zip([Entry("keep.txt", b"overwritten")])
    result = box.refused(server.file("/over.zip", data))
    assert "archive entry traverses symlink in destination: keep.txt" in result.message
    assert (box.tmp / "outside" / "keep.txt").read_text() == "precious"


def test_zip_bomb_with_honest_sizes_is_refused_before_writing(box: Box, server: Server) -> None:
    bomb = zip_of_zeros({"bomb.bin": DEFAULT_LIMITS.max_entry_bytes + 1})
    assert len(bomb) < 2 * 1024 * 1024
    result = box.refused(server.file("/bomb.zip", bomb))
    assert result.message == "Install failed (exit 1): archive entry extracted size exceeds limit"


def test_zip_bomb_over_the_total(box: Box, server: Server) -> None:
    limits = ExtractLimits(max_entry_bytes=1000, max_extracted_bytes=2500)
    bomb = zip_of_zeros({"a": 900, "b": 900, "c": 900})
    before_out = box.outside()
    result = box.run(
        server.file("/bomb.zip", bomb), options=DownloadOptions(network=LOCAL, limits=limits)
    )
    assert result.message == "Install failed (exit 1): archive extracted size exceeds limit"
    assert box.outside() == before_out
    assert not (box.root / "a").exists()


def test_zip_bomb_lying_about_its_size(box: Box, server: Server) -> None:
    bomb = shrink_declared_size(zip_of_zeros({"bomb.bin": 8 * 1024 * 1024}), "bomb.bin", 1000)
    result = box.refused(server.file("/liar.zip", bomb))
    assert result.message.startswith("Install failed (exit 1): cannot extract bomb.bin: ")


def test_too_many_entries(box: Box, server: Server) -> None:
    many = make_zip([Entry(f"f{i}", b"") for i in range(DEFAULT_LIMITS.max_entries + 1)])
    result = box.refused(server.file("/many.zip", many))
    assert result.message == "Install failed (exit 1): archive entry count exceeds limit"


def test_too_many_tar_entries_while_streaming(box: Box, server: Server) -> None:
    data = make_tar([Entry(f"f{i}", b"x") for i in range(11)])
    limits = ExtractLimits(max_entries=10)
    before = box.outside()
    result = box.run(
        server.file("/many.tgz", data), options=DownloadOptions(network=LOCAL, limits=limits)
    )
    assert result.message == "Install failed (exit 1): archive entry count exceeds limit"
    assert box.outside() == before and not (box.root / "f0").exists()


def test_archive_over_the_size_limit(box: Box, server: Server) -> None:
    data = make_zip(GOOD)
    limits = ExtractLimits(max_archive_bytes=len(data) - 1)
    result = box.run(
        server.file("/t.zip", data), options=DownloadOptions(network=LOCAL, limits=limits)
    )
    assert result.message == "Install failed (exit 1): archive size exceeds limit"


def test_tools_root_rebound_to_a_link_mid_download_fails_closed(box: Box, server: Server) -> None:
    elsewhere = box.tmp / "elsewhere"
    elsewhere.mkdir()
    body = make_zip(GOOD)

    def swap_then_send(h: Any) -> None:
        moved = box.root.with_name("moved-away")
        box.root.rename(moved)
        box.root.symlink_to(elsewhere)
        h.send_response(200)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    server.routes["/t.zip"] = swap_then_send
    result = box.run(server.base + "/t.zip")
    assert not result.ok
    assert (
        result.message == "Invalid skill tools directory: base directory must be a real directory"
    )
    assert list(elsewhere.iterdir()) == []


# --------------------------------------------------------------------------- tar.bz2 preflight


def bz2(box: Box, server: Server, entries: list[Entry], **fields: Any) -> InstallResult:
    return box.refused(server.file("/x.tar.bz2", make_tar(entries, compression="bz2")), **fields)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (Entry("link", kind="symlink", target="/etc"), "tar entry is a link: link"),
        (Entry("pipe", kind="fifo"), "tar entry is a link: pipe"),
        (Entry("../up", b"x"), "archive entry escapes targetDir: ../up"),
    ],
)
def test_tar_bz2_preflight_rejections(box: Box, server: Server, entry: Entry, message: str) -> None:
    result = bz2(box, server, [Entry("ok", b"1"), entry])
    assert result.message == f"Install failed (exit 1): {message}"


def test_tar_bz2_strip_escape(box: Box, server: Server) -> None:
    result = bz2(box, server, [Entry("top/../x", b"1")], stripComponents=1)
    assert result.message == "Install failed (exit 1): archive entry escapes targetDir: ../x"


def test_tar_bz2_entry_over_the_limit(box: Box, server: Server) -> None:
    data = make_tar([Entry("big", bytes(2000))], compression="bz2")
    options = DownloadOptions(network=LOCAL, limits=ExtractLimits(max_entry_bytes=1000))
    result = box.run(server.file("/x.tar.bz2", data), options=options)
    assert result.message == "Install failed (exit 1): archive entry extracted size exceeds limit"


def test_tar_bz2_through_an_existing_symlink(box: Box, server: Server) -> None:
    box.root.mkdir(parents=True)
    (box.root / "evil").symlink_to(box.tmp / "outside")
    result = bz2(box, server, [Entry("evil/pwned", b"x")])
    assert "archive entry traverses symlink in destination: evil" in result.message


def _tar_box(box: Box, tmp_path: Path, script: str) -> Box:
    bin_dir = tmp_path / "tarbin"
    bin_dir.mkdir()
    real = shutil.which("tar")
    assert real is not None
    (bin_dir / "tar").write_text(
        "#!/bin/sh\n" + script.replace("REAL", real) + "\n", encoding="utf-8"
    )
    (bin_dir / "tar").chmod(0o755)
    # tar itself needs bzip2 from the system folders, after the stand-in.
    path = f"{bin_dir}:/usr/bin:/bin"
    machine = Machine(platform="linux", env={"PATH": path, "HOME": str(box.home)}, home=box.home)
    return Box(box.tmp, box.home, box.root, machine)


def test_tar_bz2_changed_during_preflight(box: Box, server: Server, tmp_path: Path) -> None:
    # The stand-in tar appends a byte to the archive while it is being listed verbosely.
    swapped = _tar_box(
        box,
        tmp_path,
        'if [ "$1" = tvf ]; then REAL "$@"; rc=$?; printf x >> "$2"; exit $rc; fi\nexec REAL "$@"',
    )
    result = bz2(swapped, server, [Entry("ok", b"1")])
    assert result.message == (
        "Install failed (exit 1): tar archive changed during safety preflight; refusing to extract"
    )


def test_tar_bz2_listing_mismatch(box: Box, server: Server, tmp_path: Path) -> None:
    liar = _tar_box(
        box, tmp_path, 'if [ "$1" = tf ]; then REAL "$@"; echo extra; exit 0; fi\nexec REAL "$@"'
    )
    result = bz2(liar, server, [Entry("ok", b"1")])
    assert (
        result.message == "Install failed (exit 1): tar verbose/list entry count mismatch (1 vs 2)"
    )


def test_tar_bz2_without_tar(box: Box, server: Server, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    machine = Machine(
        platform="linux", env={"PATH": str(empty), "HOME": str(box.home)}, home=box.home
    )
    result = bz2(Box(box.tmp, box.home, box.root, machine), server, [Entry("ok", b"1")])
    assert (result.message, result.reason) == (
        "Install failed (unknown exit): tar not found on PATH",
        "install.tool-missing",
    )


# --------------------------------------------------------------------------- network guard


def test_strict_guard_refuses_loopback_by_default(box: Box, server: Server) -> None:
    url = server.file("/t.zip", make_zip(GOOD))
    result = box.run(url, options=DownloadOptions())
    assert result.message == "Blocked hostname or private/internal/special-use IP address"
    localhost = url.replace("127.0.0.1", "localhost")
    assert box.run(localhost, options=DownloadOptions()).message == (
        "Blocked hostname or private/internal/special-use IP address"
    )
    named = url.replace("127.0.0.1", "dl.example")
    result = box.run(named, options=DownloadOptions(resolver=lambda host, port: ["127.0.0.1"]))
    assert result.message == "Blocked: resolves to private/internal/special-use IP address"
    assert server.hits == []


def test_redirects_are_followed_and_checked(box: Box, server: Server) -> None:
    target = server.file("/real.zip", make_zip(GOOD))
    assert box.run(server.redirect("/r1", target)).ok
    assert box.refused(server.redirect("/file", "file:///etc/passwd")).message == (
        "Invalid URL: must be http or https"
    )
    server.redirect("/loop-a", server.base + "/loop-b")
    server.redirect("/loop-b", server.base + "/loop-a")
    assert box.refused(server.base + "/loop-a").message == "Redirect loop detected"
    for i in range(4):
        server.redirect(f"/hop{i}", server.base + f"/hop{i + 1}")
    assert box.refused(server.base + "/hop0").message == "Too many redirects (limit: 3)"


def test_allowed_hosts_apply_to_every_hop(box: Box, server: Server) -> None:
    port = server.base.rsplit(":", 1)[1]
    server.file("/real.zip", make_zip(GOOD))
    server.redirect("/go", f"http://evil.example:{port}/real.zip")
    policy = NetworkPolicy(allow_private_network=True, allowed_hosts=("dl.example",))
    options = DownloadOptions(network=policy, resolver=lambda host, p: ["127.0.0.1"])
    ok = box.run(f"http://dl.example:{port}/real.zip", options=options)
    assert ok.ok, ok
    refused = box.run(f"http://dl.example:{port}/go", options=options)
    assert refused.message == "Blocked hostname (not in allowlist): evil.example"


def test_a_half_done_swap_is_recovered_before_the_next_install(box: Box, server: Server) -> None:
    box.root.mkdir(parents=True)
    (box.root / "mine.txt").write_text("kept")
    # A crash between the two renames of the non-atomic swap leaves only the old tree.
    box.root.rename(box.root.with_name(f".{box.root.name}.old-abcd1234"))
    assert box.run(server.file("/t.zip", make_zip(GOOD))).ok
    assert (box.root / "mine.txt").read_text() == "kept"
    assert (box.root / "tool" / "README").read_text() == "read me"
    beside = sorted(p.name for p in box.root.parent.iterdir() if p.name.startswith("."))
    assert beside == [f".{box.root.name}.lock"]  # the install lock, never a swap leftover
