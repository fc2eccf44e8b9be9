"""Caching has one home: the file-system helpers and the configuration report to no cache.

``skillbook.base`` and ``skillbook.config`` sit below the pipeline; the result cache's
footprint is recorded by the discovery stage and the book from what these return, so
neither imports anything of ``skillbook.pipeline`` (cache, discovery or any other
stage), at any level: module top, function bodies and ``TYPE_CHECKING`` blocks alike.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "skillbook"


def _imported(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports, anywhere in it, as (line, absolute name)."""
    package = ".".join(path.relative_to(SRC.parent).with_suffix("").parts[:-1])
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            found.append((node.lineno, base))
            # `from skillbook import pipeline` names the package as an attribute.
            found.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
    return found


@pytest.mark.parametrize("part", ["base", "config"])
def test_base_and_config_import_nothing_of_the_pipeline(part: str) -> None:
    modules = sorted((SRC / part).rglob("*.py"))
    assert modules, f"no modules under {SRC / part}"
    upward = [
        f"{path.relative_to(SRC.parent)}:{line} imports {name}"
        for path in modules
        for line, name in _imported(path)
        if name == "skillbook.pipeline" or name.startswith("skillbook.pipeline.")
    ]
    assert upward == []


# -- the recording points that replace the helpers' own reports -------------------------


@pytest.fixture
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    from skillbook.pipeline.cache import footprint

    monkeypatch.setattr(footprint, "RACY_NS", -(10**18))


def test_a_listing_names_every_entry_whose_kind_came_through_a_link(tmp_path: Path) -> None:
    from factories import write_file, write_skill

    from skillbook.base.listing import list_child_dirs
    from skillbook.pipeline.cache.scan_reads import scanning
    from skillbook.pipeline.discovery import scan_fs

    write_skill(tmp_path / "plain")
    write_file(tmp_path / "notes.txt", "x")
    (tmp_path / "to-dir").symlink_to(tmp_path / "plain")
    (tmp_path / "to-file").symlink_to(tmp_path / "notes.txt")
    (tmp_path / "broken").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    listing = list_child_dirs(str(tmp_path))
    # A link to a file is no candidate, but its target can turn into a folder unseen
    # by the folder's stat: it is named too.
    assert set(listing.followed) == {"to-dir", "to-file", "broken", "loop"}
    with scanning() as scan:
        scan_fs.list_child_dirs(str(tmp_path))
    assert scan.paths == {str(tmp_path), *(str(tmp_path / n) for n in listing.followed)}


def test_a_checked_file_is_recorded_with_the_lstat_of_its_check(tmp_path: Path) -> None:
    from factories import write_skill

    from skillbook.base.verified_read import ReadFailure, Verified, verify_file
    from skillbook.pipeline.cache.realpath_memo import RealpathMemo
    from skillbook.pipeline.cache.scan_reads import checked, scanning

    write_skill(tmp_path / "real")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "LINK.md").symlink_to(tmp_path / "real" / "SKILL.md")
    path, real = str(tmp_path / "alias" / "SKILL.md"), str(tmp_path / "real" / "SKILL.md")
    memo = RealpathMemo()
    with scanning() as scan:
        got = verify_file(path, root_real=str(tmp_path), max_bytes=1 << 20, realpath=memo.realpath)
        checked(path, got)
        link = str(tmp_path / "real" / "LINK.md")
        refused = verify_file(link, root_real=str(tmp_path), max_bytes=1, realpath=memo.realpath)
        checked(link, refused)
    assert isinstance(got, Verified) and got.real == real and got.info is not None
    assert isinstance(refused, ReadFailure) and refused.kind == "symlink"
    # The file read, by both its names, signed from the lstat the check took; the
    # real paths taken come from the memo; a refused link is recorded by its own path.
    assert scan.paths == {path, real, link}
    assert scan.stats[path] is got.info and scan.stats[real] is got.info
    assert scan.reals == {path: real, link: real}


def _openclaw_home(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    import json

    from factories import write_skill

    home = tmp_path / "home"
    (home / ".openclaw").mkdir(parents=True)
    (home / ".openclaw" / "openclaw.json").write_text(json.dumps({}), encoding="utf-8")
    write_skill(home / ".openclaw" / "workspace" / "skills" / "one")
    env = {"HOME": str(home), "PATH": "", "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "nb")}
    return home, env


@pytest.mark.usefixtures("no_racy_window")
def test_settings_record_the_default_places_their_config_was_chosen_from(tmp_path: Path) -> None:
    from skillbook.config.run_settings import Settings
    from skillbook.pipeline.book import Loader
    from skillbook.pipeline.cache.footprint import RecordedEnv, recording, still_valid

    home, env = _openclaw_home(tmp_path)
    with recording() as fp:
        settings = Settings.resolve(env=RecordedEnv(env, fp), cwd=tmp_path)
        Loader.from_settings(settings).load()
    record = fp.record()
    assert record is not None
    assert str(home / ".openclaw" / "openclaw.json") in record["paths"]
    assert still_valid(record, env)
    # skillbook's own config at its default place wins over OpenClaw's: the record
    # made from OpenClaw's no longer holds.
    (home / ".skillbook").mkdir()
    (home / ".skillbook" / "skillbook.json").write_text("{}", encoding="utf-8")
    assert not still_valid(record, env)


@pytest.mark.usefixtures("no_racy_window")
def test_a_loader_records_the_config_it_reads_and_opens_for_the_account_home(
    tmp_path: Path,
) -> None:
    from skillbook.pipeline.book import Loader
    from skillbook.pipeline.cache.footprint import RecordedEnv, recording, still_valid

    home, env = _openclaw_home(tmp_path)
    config = home / ".openclaw" / "openclaw.json"
    with recording() as fp:
        Loader(env=RecordedEnv(env, fp), cwd=tmp_path).load()
    record = fp.record()
    assert record is not None and still_valid(record, env)
    config.write_text('{"skills": {"entries": {"one": {"enabled": false}}}}', encoding="utf-8")
    assert not still_valid(record, env)
    no_home = {k: v for k, v in env.items() if k != "HOME"}
    with recording() as fp:
        Loader(env=RecordedEnv(no_home, fp), cwd=tmp_path).load()
    assert fp.reasons == ["the account's home directory"]
