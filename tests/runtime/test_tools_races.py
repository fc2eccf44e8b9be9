"""The agent's ``read`` tool while a folder of a skill is swapped for a symlink.

Every read under the swap returns the skill's own text or a tool error: never the
outside folder's content, and never an exception (``FileNotFoundError``/``OSError``).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from factories import write_skill
from races import OUTSIDE_MARKER, FolderSwapper, outside_copy

from skillbook.config.mode import Mode
from skillbook.model import Skill, Source
from skillbook.pipeline.discovery.discover import DiscoverOptions, Root, discover
from skillbook.runtime.tools import ReadTool

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symlink swaps need POSIX renames")

#: Reads of each file per test, under the swap.
ROUNDS = 300
#: Every so many rounds, the files are also read with the folder held in place.
IN_PLACE_EVERY = 30


#: The skill under attack: ``alpha`` with a ``references`` folder to swap.
GUIDE = {"references/guide.md": "# Guide\n"}


def load(root: Path) -> tuple[Skill, ...]:
    found = discover([Root(Source.WORKSPACE, root)], options=DiscoverOptions())
    return found.skills


@pytest.mark.parametrize("swapped", ["references", "."])
def test_reads_under_a_folder_swap_never_leave_the_skill(tmp_path: Path, swapped: str) -> None:
    folder = write_skill(tmp_path / "skills" / "alpha", files=GUIDE)
    tool = ReadTool(load(tmp_path / "skills"), home=tmp_path)
    target = (folder / swapped).resolve()
    outside = tmp_path / "outside" / target.name
    outside_copy(target, outside)
    paths = [os.fspath(folder / "SKILL.md"), os.fspath(folder / "references" / "guide.md")]
    with FolderSwapper(target, outside) as swapper:
        for i in range(ROUNDS):
            for path in paths:
                result = tool.run({"path": path})  # raising here fails the test
                assert OUTSIDE_MARKER not in result.text, result
            if i % IN_PLACE_EVERY == 0:
                with swapper.in_place():
                    for path in paths:
                        assert not tool.run({"path": path}).is_error
    assert swapper.swaps > 0


def test_a_folder_swapped_after_discovery_is_refused(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "skills" / "alpha", files=GUIDE)
    tool = ReadTool(load(tmp_path / "skills"), home=tmp_path)
    outside = tmp_path / "outside" / "alpha"
    outside_copy(folder, outside)
    os.rename(folder, folder.with_name("alpha.aside"))
    folder.symlink_to(outside, target_is_directory=True)
    for path in (folder / "SKILL.md", folder / "references" / "guide.md"):
        result = tool.run({"path": os.fspath(path)})
        assert result.is_error and OUTSIDE_MARKER not in result.text
        assert "not inside a skill folder" in result.text


def test_a_sub_folder_swapped_between_realpath_and_open_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_skill(tmp_path / "skills" / "alpha", files=GUIDE)
    tool = ReadTool(load(tmp_path / "skills"), home=tmp_path)
    outside = tmp_path / "outside" / "references"
    outside_copy(folder / "references", outside)
    real_realpath = os.path.realpath

    def realpath_then_swap(path: str | os.PathLike[str], **kw: bool) -> str:
        out = real_realpath(path, **kw)
        if str(path).endswith("guide.md") and not (folder / "references").is_symlink():
            os.rename(folder / "references", folder / "references.aside")
            (folder / "references").symlink_to(outside, target_is_directory=True)
        return out

    monkeypatch.setattr(os.path, "realpath", realpath_then_swap)
    result = tool.run({"path": os.fspath(folder / "references" / "guide.md")})
    assert result.is_error and "changed while opening" in result.text


def test_a_vanishing_file_is_a_tool_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_skill(tmp_path / "skills" / "alpha", files=GUIDE)
    tool = ReadTool(load(tmp_path / "skills"), home=tmp_path)

    def gone(path: object) -> bool:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(os.path, "isdir", gone)
    result = tool.run({"path": os.fspath(folder / "SKILL.md")})
    assert result.is_error and "No such file or directory" in result.text


def test_a_standalone_markdown_skill_reads_its_one_file(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    root.mkdir()
    (root / "notes.md").write_text("# Notes\nTake notes well.\n")
    (root / "private.txt").write_text("not a skill file\n")
    found = discover([Root(Source.WORKSPACE, root)], options=DiscoverOptions(mode=Mode.MIXED))
    notes = next(s for s in found.skills if s.name == "Notes")
    tool = ReadTool([dataclasses.replace(notes)], home=tmp_path)
    result = tool.run({"path": os.fspath(root / "notes.md")})
    assert not result.is_error and "Take notes well." in result.text
    other = tool.run({"path": os.fspath(root / "private.txt")})
    assert other.is_error
