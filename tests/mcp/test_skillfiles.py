"""Skill folders as the MCP Skills extension publishes them (SEP-2640 §1.3-1.5, §3.1, §4.7).

Pure file-system tests of ``skillbook.mcp._skillfiles``: digests over raw bytes,
``skill://`` URIs, the per-skill limits, text vs blob, and the server hygiene
(containment, symlink escapes, hidden files, ``node_modules``, ``.git``).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from factories import skill_text, write_file, write_skill
from hypothesis import given
from hypothesis import strategies as st

from skillbook.mcp import _skillfiles as sf
from skillbook.mcp import _skillformat as fmt


def scan(folder: Path, **kw: object) -> sf.SkillFiles:
    return sf.scan_skill(folder.name, folder, folder / "SKILL.md", **kw)  # type: ignore[arg-type]


def test_digest_is_sha256_of_raw_bytes_lowercase() -> None:
    data = b"a\r\nb\xef\xbb\xbf"
    digest = fmt.digest_of(data)
    assert digest == "sha256:" + hashlib.sha256(data).hexdigest()
    assert fmt.is_valid_digest(digest)
    assert not fmt.is_valid_digest(digest.upper().replace("SHA256", "sha256"))
    assert not fmt.is_valid_digest("sha256:abc")


def test_skill_md_first_and_manifest_complete(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "alpha")
    (folder / "references").mkdir()
    (folder / "references" / "guide.md").write_text("guide\n")
    (folder / "a.txt").write_text("a")
    files = scan(folder)
    assert [f.rel for f in files.files] == ["SKILL.md", "a.txt", "references/guide.md"]
    assert files.uri == "skill://alpha/SKILL.md"
    manifest = files.manifest()
    assert manifest[0]["uri"] == files.uri
    assert len({m["uri"] for m in manifest}) == len(manifest)
    for item, entry in zip(manifest, files.files, strict=True):
        raw = (folder / entry.rel).read_bytes()
        assert item == {"uri": entry.uri, "digest": fmt.digest_of(raw), "size": len(raw)}
    assert files.directories == ("", "references")


def test_text_keeps_bom_and_crlf_and_binary_is_blob(tmp_path: Path) -> None:
    """§1.5: no newline normalisation, no BOM stripping; non-UTF-8 is a blob."""
    folder = write_skill(tmp_path / "alpha")
    (folder / "crlf.md").write_bytes(b"\xef\xbb\xbfline\r\nnext\r\n")
    (folder / "latin1.txt").write_bytes(b"caf\xe9")
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (folder / "tiny.png").write_bytes(b"abc")  # valid UTF-8, but an image: still a blob
    (folder / "Makefile").write_bytes(b"all:\n\ttrue\n")
    (folder / "blob").write_bytes(b"a\x00b")
    files = scan(folder)
    crlf = files.file("crlf.md")
    assert crlf is not None and crlf.text is not None
    assert crlf.text.encode("utf-8") == (folder / "crlf.md").read_bytes()
    assert crlf.mime == "text/markdown"
    latin1 = files.file("latin1.txt")
    assert latin1 is not None and latin1.text is None and latin1.mime == "text/plain"
    for name in ("logo.png", "tiny.png"):
        blob = files.file(name)
        assert blob is not None and blob.text is None and blob.mime == "image/png"
    makefile = files.file("Makefile")
    assert makefile is not None and makefile.mime == "text/plain" and makefile.text is not None
    unknown = files.file("blob")
    assert unknown is not None and unknown.mime == "application/octet-stream"
    assert unknown.text is None


def test_hidden_files_node_modules_and_git_are_not_served(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "alpha")
    for rel in (".env", ".git/config", "node_modules/x/index.js", "sub/.secret"):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("secret")
    (folder / "sub" / "ok.md").write_text("ok")
    files = scan(folder)
    assert [f.rel for f in files.files] == ["SKILL.md", "sub/ok.md"]
    assert ".git" not in files.directories and "node_modules" not in files.directories


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_symlink_escapes_are_skipped_and_internal_links_served(tmp_path: Path) -> None:
    """§4.7: no symlink leaves the skill tree; realpath containment for every file."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    folder = write_skill(tmp_path / "skills" / "alpha")
    (folder / "leak.txt").symlink_to(outside / "secret.txt")
    (folder / "leakdir").symlink_to(outside, target_is_directory=True)
    (folder / "real.md").write_text("real")
    (folder / "alias.md").symlink_to(folder / "real.md")
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    files = scan(folder)
    served = {f.rel for f in files.files}
    assert served == {"SKILL.md", "alias.md", "real.md"}
    reasons = {s.rel: s.reason for s in files.skipped}
    assert "outside" in reasons["leak.txt"]
    assert "outside" in reasons["leakdir"]
    assert "not followed" in reasons["loop"]
    assert all("secret" not in (f.text or "") for f in files.files)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_not_read(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "alpha")
    os.mkfifo(folder / "pipe")
    files = scan(folder)
    assert [f.rel for f in files.files] == ["SKILL.md"]
    assert any(s.rel == "pipe" and "regular" in s.reason for s in files.skipped)


def test_limits_at_and_over_the_maximum(tmp_path: Path) -> None:
    """§1.4: 512 files / 16 MiB are servable; one more is over (only SKILL.md kept)."""
    folder = write_skill(tmp_path / "alpha")
    for i in range(fmt.MAX_RESOURCES_PER_SKILL - 1):
        (folder / f"f{i:03}.txt").write_text("x")
    at_limit = scan(folder)
    assert at_limit.over_limit is None and len(at_limit.files) == fmt.MAX_RESOURCES_PER_SKILL
    (folder / "one-more.txt").write_text("x")
    over = scan(folder)
    assert over.over_limit is not None and "513 files" in over.over_limit
    assert [f.rel for f in over.files] == ["SKILL.md"]
    assert over.directories == ("",)


def test_byte_limit_is_checked_before_reading(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "alpha")
    md_size = (folder / "SKILL.md").stat().st_size
    with open(folder / "big.bin", "wb") as fh:
        fh.truncate(fmt.MAX_BYTES_PER_SKILL - md_size)
    assert scan(folder).over_limit is None
    with open(folder / "big.bin", "wb") as fh:
        fh.truncate(fmt.MAX_BYTES_PER_SKILL - md_size + 1)
    over = scan(folder)
    assert over.over_limit is not None and str(fmt.MAX_BYTES_PER_SKILL) in over.over_limit
    small = scan(folder, limits=sf.FileLimits(max_files=1, max_bytes=10**9))
    assert small.over_limit is not None and "2 files" in small.over_limit


def test_standalone_markdown_skill_serves_only_its_file(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "other")
    write_file(root / "note.md", skill_text("note", "d", body="body\n"))
    files = sf.scan_skill("note", root, root / "note.md")
    assert [(f.rel, f.uri) for f in files.files] == [("SKILL.md", "skill://note/SKILL.md")]
    assert files.file("SKILL.md") is not None
    assert files.children("") == [("SKILL.md", "skill://note/SKILL.md", "text/markdown")]


def test_missing_skill_md_is_unreadable(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    files = scan(folder)
    assert files.skill_md is None and files.unreadable == "no servable SKILL.md"


def test_children_lists_directories_and_files(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "alpha")
    (folder / "assets" / "icons").mkdir(parents=True)
    (folder / "assets" / "logo.png").write_bytes(b"\x89")
    (folder / "empty").mkdir()
    files = scan(folder)
    assert files.children("") == [
        ("SKILL.md", "skill://alpha/SKILL.md", "text/markdown"),
        ("assets", "skill://alpha/assets", fmt.DIRECTORY_MIME),
        ("empty", "skill://alpha/empty", fmt.DIRECTORY_MIME),
    ]
    assert files.children("assets") == [
        ("icons", "skill://alpha/assets/icons", fmt.DIRECTORY_MIME),
        ("logo.png", "skill://alpha/assets/logo.png", "image/png"),
    ]
    assert files.children("empty") == []


def test_uris_percent_encode_odd_names() -> None:
    assert fmt.file_uri("alpha", "a b/ü#.md") == "skill://alpha/a%20b/%C3%BC%23.md"
    assert fmt.encode_skill_path("Bad Name") == "Bad%20Name"
    assert fmt.encode_skill_path("git-workflow") == "git-workflow"


@given(st.text(), st.text())
def test_plain_names_take_the_short_way_with_the_same_encoding(name: str, rel: str) -> None:
    """A name or path of unreserved characters is its own encoding (no ``quote`` per
    segment): whatever the text, the encoding is ``quote``'s, segment by segment."""
    assert fmt.encode_skill_path(name) == quote(name, safe="!$&'()*+,;=")
    assert fmt.encode_file_path(rel) == "/".join(
        quote(part, safe="!$&'()*+,;=:@") for part in rel.split("/")
    )


def test_name_rules() -> None:
    assert fmt.is_valid_skill_name("git-workflow")
    for bad in ("Git", "-a", "a-", "a--b", "", "a" * 65, None, "a_b"):
        assert not fmt.is_valid_skill_name(bad)


def test_containment_and_relative_paths() -> None:
    """§3.1: a URI belongs to a skill below its root; relative paths stay inside it."""
    md = "skill://acme/billing/refunds/SKILL.md"
    assert fmt.is_within_skill(md, "skill://acme/billing/refunds/a/b.md")
    assert not fmt.is_within_skill(md, "skill://acme/billing/refundsX/a.md")
    assert fmt.normalize_relative("a/./b/../c.md") == "a/c.md"
    for bad in ("../x", "/abs", "~/x", "a/../../x", "C:\\x", ".", ""):
        assert fmt.normalize_relative(bad) is None


def test_cache_rereads_only_after_a_change(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "alpha")
    cache = sf.SkillFilesCache()
    first = cache.get("alpha", folder, folder / "SKILL.md")
    assert cache.get("alpha", folder, folder / "SKILL.md") is first and cache.reads == 1
    (folder / "new.md").write_text("new")
    second = cache.get("alpha", folder, folder / "SKILL.md")
    assert cache.reads == 2 and second.file("new.md") is not None
    cache.retain(set())
    cache.get("alpha", folder, folder / "SKILL.md")
    assert cache.reads == 3


def test_importing_skillfiles_does_not_import_the_sdk() -> None:
    code = "import sys, skillbook.mcp._skillfiles; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
