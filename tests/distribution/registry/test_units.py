"""Pure parts: references and slugs, base URL and token resolution, the fingerprint and
the file set it covers, lock/origin files, archive roots."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillbook.distribution.archives.layout import find_skill_root
from skillbook.distribution.fingerprint import fingerprint_files, fingerprint_hashes, sha256_hex
from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.endpoint import DEFAULT_REGISTRY, Endpoint, resolve_endpoint
from skillbook.distribution.registry.lockfile import dumps, read_lock, read_origin
from skillbook.distribution.registry.refs import (
    ArchiveRef,
    FolderRef,
    GitRef,
    RegistryRef,
    parse_ref,
)
from skillbook.distribution.registry.skillfiles import list_skill_files


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("weather", RegistryRef("weather")),
        ("  Weather ", RegistryRef("Weather")),
        ("@Steipete/weather", RegistryRef("weather", "steipete")),
        ("owner/repo", GitRef("https://github.com/owner/repo.git")),
        (
            "owner/repo/skills/pdf@v2",
            GitRef("https://github.com/owner/repo.git", "skills/pdf", "v2"),
        ),
        (
            "https://github.com/o/r/tree/main/skills/x",
            GitRef("https://github.com/o/r.git", "skills/x", "main"),
        ),
        ("https://github.com/o/r", GitRef("https://github.com/o/r.git")),
        ("https://git.example/r.git#v1", GitRef("https://git.example/r.git", ref="v1")),
        ("git@github.com:o/r.git", GitRef("git@github.com:o/r.git")),
        ("file:///srv/r", GitRef("file:///srv/r")),
        ("https://example.com/s.zip", ArchiveRef("https://example.com/s.zip")),
        ("skill.tar.gz", ArchiveRef("skill.tar.gz")),
        ("./here", FolderRef("./here")),
        ("~/skills/x", FolderRef("~/skills/x")),
    ],
)
def test_references(raw: str, expected: object) -> None:
    assert parse_ref(raw) == expected


@pytest.mark.parametrize(
    "raw",
    ["", "gіthub", "a_b", "-x", "x-", "@owner", "@/x", "@a/b/c", "o/../x", "ftp://x/y", "@Ünï/x"],
)
def test_bad_references(raw: str) -> None:
    with pytest.raises(RegistryError) as info:
        parse_ref(raw)
    assert info.value.code == "registry.invalid-ref"


def test_credentials_in_a_git_url_are_never_shown() -> None:
    ref = parse_ref("https://bob:ghp_secret@git.example/r.git")
    assert isinstance(ref, GitRef) and "ghp_secret" in ref.url
    assert str(ref) == ref.public_url == "https://git.example/r.git"


def test_invalid_slug_message_is_openclaws() -> None:
    with pytest.raises(RegistryError, match=r"^Invalid skill slug: gіthub$"):
        parse_ref("gіthub")


def write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


def test_base_url_order(tmp_path: Path) -> None:
    home = tmp_path / "home"

    def resolve(env: dict[str, str], **kw: Any) -> Endpoint:
        return resolve_endpoint(env, home=home, platform="linux", **kw)

    assert resolve({}).base_url == DEFAULT_REGISTRY
    write(home / ".config/clawhub/config.json", {"registry": "https://cached.example/"})
    assert (resolve({}).base_url, resolve({}).base_reason.startswith("registry in")) == (
        "https://cached.example",
        True,
    )
    assert resolve({}, config_url="https://cfg.example").base_url == "https://cfg.example"
    env = {"CLAWDHUB_REGISTRY": "https://d.example", "CLAWHUB_REGISTRY": "https://c.example"}
    assert resolve(env).base_url == "https://c.example"
    env["CLAWHUB_URL"] = "https://u.example/"
    env["OPENCLAW_CLAWHUB_URL"] = " https://o.example// "
    assert (resolve(env).base_url, resolve(env).base_reason) == (
        "https://o.example",
        "OPENCLAW_CLAWHUB_URL",
    )
    assert resolve(env, explicit="http://127.0.0.1:1").base_reason == "--registry"
    write(home / ".config/clawhub/config.json", {"registry": "https://registry.clawhub.ai"})
    assert resolve({}).base_url == DEFAULT_REGISTRY  # a legacy host is skipped
    with pytest.raises(RegistryError, match="Invalid registry URL"):
        resolve({"CLAWHUB_URL": "clawhub.ai"})


def test_tokens(tmp_path: Path) -> None:
    home = tmp_path / "home"

    def resolve(env: dict[str, str], **kw: Any) -> Endpoint:
        return resolve_endpoint(env, home=home, platform="linux", **kw)

    assert resolve({}).token is None
    write(
        home / ".config/clawdhub/config.json", {"registry": DEFAULT_REGISTRY, "token": "clh_legacy"}
    )
    assert resolve({}).token == "clh_legacy"
    write(
        home / ".config/clawhub/config.json",
        {"registry": "https://clawhub.ai/", "auth": {"accessToken": "clh_a"}},
    )
    found = resolve({})
    assert (found.token, found.token_reason) == (
        "clh_a",
        f"token in {home}/.config/clawhub/config.json",
    )
    # A config token belongs to its registry: never sent to another one.
    assert resolve({}, explicit="https://self.example").token is None
    assert resolve({"CLAWHUB_TOKEN": "clh_env"}, explicit="https://self.example").token == "clh_env"
    assert resolve({"OPENCLAW_CLAWHUB_TOKEN": "a", "CLAWHUB_TOKEN": "b"}).token == "a"
    custom = write(tmp_path / "c.json", {"session": {"user": {"apiToken": "clh_deep"}}})
    assert resolve({"CLAWHUB_CONFIG_PATH": str(custom)}).token == "clh_deep"
    assert "clh_deep" not in repr(resolve({"CLAWHUB_CONFIG_PATH": str(custom)}))
    with pytest.raises(RegistryError, match="Invalid API token"):
        resolve({"CLAWHUB_TOKEN": "a\nb"})
    xdg = tmp_path / "xdg"
    write(xdg / "clawhub/config.json", {"registry": DEFAULT_REGISTRY, "token": "clh_xdg"})
    assert resolve({"XDG_CONFIG_HOME": str(xdg)}).token == "clh_xdg"
    mac = home / "Library/Application Support/clawhub/config.json"
    write(mac, {"registry": DEFAULT_REGISTRY, "token": "clh_mac"})
    assert resolve_endpoint({}, home=home, platform="darwin").token == "clh_mac"


def test_fingerprint_known_orders() -> None:
    files = [("SKILL.md", b"a"), ("references/a.md", b"b"), ("_meta.json", b"c"), ("1.md", b"d")]
    lines = [
        f"{p}:{sha256_hex(b)}"
        for p, b in sorted(
            files, key=lambda f: ["_meta.json", "1.md", "references/a.md", "SKILL.md"].index(f[0])
        )
    ]
    assert fingerprint_files(files) == sha256_hex("\n".join(lines).encode())
    pairs = [(p, sha256_hex(b)) for p, b in files]
    assert fingerprint_hashes(pairs, order="bytes") == sha256_hex(
        "\n".join(f"{p}:{h}" for p, h in sorted(pairs)).encode()
    )
    assert fingerprint_hashes([("", "x"), ("a", "")]) == sha256_hex(b"")


@given(
    st.lists(
        st.tuples(st.text("abcABC_-./09", min_size=1, max_size=8), st.binary(max_size=8)),
        max_size=6,
        unique_by=lambda t: t[0],
    )
)
def test_fingerprint_does_not_depend_on_input_order(files: list[tuple[str, bytes]]) -> None:
    assert fingerprint_files(files) == fingerprint_files(list(reversed(files)))


def test_the_file_set_is_the_clis(tmp_path: Path) -> None:
    root = tmp_path / "s"
    for rel in ("SKILL.md", "a/b.md", "build/out.js", "keep.log", "x.log", "node_modules/m.js",
                ".hidden", "a/.env", ".git/config", "sub/node_modules/z"):  # fmt: skip
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / ".gitignore").write_text("*.log\n!keep.log\nbuild/\n")
    (root / "link.md").symlink_to(root / "SKILL.md")
    listed = list_skill_files(root)
    assert sorted(listed.hashes) == ["SKILL.md", "a/b.md", "keep.log"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert list_skill_files(empty).fingerprint is None


def test_json_is_written_as_javascript_writes_it() -> None:
    value = {"version": 1, "skills": {"b": {"v": "é"}, "10": {}, "2": {}, "a": []}}
    assert dumps(value) == (
        '{\n  "version": 1,\n  "skills": {\n    "2": {},\n    "10": {},\n'
        '    "b": {\n      "v": "é"\n    },\n    "a": []\n  }\n}\n'
    )


def test_lock_and_origin_reading(tmp_path: Path) -> None:
    assert read_lock(tmp_path).skills == {}
    write(tmp_path / ".clawdhub/lock.json", {"version": 1, "skills": {"x": {"version": "1"}}})
    lock = read_lock(tmp_path)
    assert (
        lock.skills == {"x": {"version": "1"}}
        and lock.read_from == tmp_path / ".clawdhub/lock.json"
    )
    assert lock.path == tmp_path / ".clawhub/lock.json"
    write(tmp_path / ".clawhub/lock.json", {"version": 1})
    with pytest.raises(RegistryError):
        read_lock(tmp_path)
    assert read_lock(tmp_path, strict=False).skills == {"x": {"version": "1"}}
    skill = tmp_path / "skills/x"
    good = {
        "version": 1,
        "registry": "https://r",
        "slug": "x",
        "installedVersion": "1",
        "installedAt": 5,
    }
    write(skill / ".clawdhub/origin.json", good)
    origin = read_origin(skill)
    assert origin is not None and origin.legacy and origin.describe() == "https://r x@1"
    for bad in ({**good, "installedAt": "5"}, {**good, "version": 2}, {**good, "registry": ""}):
        write(skill / ".clawhub/origin.json", bad)
        assert read_origin(skill) == origin  # invalid: the legacy file is read instead


def test_archive_roots(tmp_path: Path) -> None:
    def make(*files: str) -> Path:
        base = tmp_path / str(len(list(tmp_path.iterdir())))
        for f in files:
            (base / f).parent.mkdir(parents=True, exist_ok=True)
            (base / f).write_text("x")
        base.mkdir(exist_ok=True)
        return base

    flat = make("SKILL.md", "package.json")
    assert find_skill_root(flat) == flat
    pkg = make("package/SKILL.md", "other/SKILL.md")
    assert find_skill_root(pkg) == pkg / "package"
    one = make("repo-abc/skill.md", "README")
    assert find_skill_root(one) == one / "repo-abc"
    with pytest.raises(RegistryError, match=r"unexpected archive layout \(dirs: \)"):
        find_skill_root(make("README.md"))
    with pytest.raises(RegistryError, match=r"missing SKILL\.md"):
        find_skill_root(make("package/README.md"))
    linked = make("real/SKILL.md")
    os.symlink(linked / "real", linked / "alias")
    assert find_skill_root(linked) == linked / "real"


def test_skills_sh_references() -> None:
    from skillbook.distribution.registry.refs import RegistryRef, parse_ref

    ref = parse_ref("skills-sh:vercel-labs/agent-skills/web-design")
    assert ref == RegistryRef(
        "web-design", reference="skills-sh:vercel-labs/agent-skills/web-design"
    )
    assert str(ref) == "skills-sh:vercel-labs/agent-skills/web-design"
    for bad in ("skills-sh/a/b/c", "skills-sh:a/b", "skills-sh:a/../c", "skills-sh:-a/b/c",
                "skills-sh:a/b/c/d", "skills-sh:a/b/Bad_Slug"):  # fmt: skip
        with pytest.raises(RegistryError):
            parse_ref(bad)
