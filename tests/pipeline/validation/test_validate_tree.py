"""validate_tree: validation follows discovery, and no SKILL.md is left out silently."""

from __future__ import annotations

from pathlib import Path

from factories import write_skill

from skillbook.model import Source
from skillbook.pipeline.discovery.discover import DiscoverOptions, Root, discover
from skillbook.pipeline.validation.validate import validate_many, validate_tree


def names(report_paths: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in report_paths]


def test_a_repository_root_is_read_through_its_nested_skills_folder(tmp_path: Path) -> None:
    """extraDirs accept a repository: <repo>/skills/* is the root, the rest is explained."""
    repo = tmp_path / "repo"
    write_skill(repo / "skills/alpha")
    write_skill(repo / "skills/beta")
    write_skill(repo / "docs-skill")  # hidden by the nested root, as in the loader
    report = validate_tree([repo], "openclaw")
    assert names([r.path for r in report.results], repo) == ["skills/alpha", "skills/beta"]
    assert [d.path for d in report.not_discovered] == [repo / "docs-skill" / "SKILL.md"]
    message = report.not_discovered[0].message
    assert message.startswith("not a skill for the loader: the loader reads the nested root")
    assert report.not_discovered[0].code == "validate.not-discovered"
    # The loader itself agrees on what it reads.
    found = discover([Root(Source.EXTRA, repo)], options=DiscoverOptions())
    assert sorted(s.name for s in found.skills) == ["alpha", "beta"]


def test_every_skill_md_is_validated_or_explained(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "good")
    write_skill(root / "good/references/inner")  # inside a skill
    write_skill(root / "ops/db-backup")  # grouped layout
    write_skill(root / ".curated/hidden")  # hidden folder
    write_skill(root / "node_modules/pkg")  # never searched
    write_skill(root / "deep/a/b")  # too deep
    (root / "good" / "references" / "inner" / "SKILL.md").rename(
        root / "good" / "references" / "inner" / "skill.md"
    )
    report = validate_tree([root], "openclaw")
    assert [r.name for r in report.results] == ["good"]
    reasons = {
        d.path.relative_to(root).as_posix(): d.message
        for d in report.not_discovered
        if d.path is not None
    }
    assert set(reasons) == {
        "good/references/inner/skill.md",
        "ops/db-backup/SKILL.md",
        ".curated/hidden/SKILL.md",
        "node_modules/pkg/SKILL.md",
        "deep/a/b/SKILL.md",
    }
    assert "inside the skill folder" in reasons["good/references/inner/skill.md"]
    assert "skills.load.grouped: true" in reasons["ops/db-backup/SKILL.md"]
    assert "hidden folder" in reasons[".curated/hidden/SKILL.md"]
    assert "node_modules" in reasons["node_modules/pkg/SKILL.md"]
    assert "too deep" in reasons["deep/a/b/SKILL.md"]
    assert report.ok  # explanations are warnings, not failures


def test_grouped_layouts_are_validated_when_grouped_is_on(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "ops/db-backup")
    write_skill(root / "ops/restore", description="")
    report = validate_tree([root], "openclaw", grouped=True)
    assert [r.name for r in report.results] == ["db-backup", "restore"]
    assert [r.ok for r in report.results] == [True, False]
    assert report.not_discovered == () and not report.ok


def test_a_root_that_is_a_skill_and_standalone_files(tmp_path: Path) -> None:
    one = write_skill(tmp_path / "one")
    assert [r.path for r in validate_tree([one], "openclaw").results] == [one]
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "notes.md").write_text("# Notes\n\nTake notes.\n", encoding="utf-8")
    (flat / "README.md").write_text("# Readme\n", encoding="utf-8")
    legacy = validate_tree([flat], "legacy")
    assert [r.path.name for r in legacy.results] == ["notes.md"] and legacy.ok
    # Outside mixed/legacy a folder with no skill is reported, not passed.
    strict = validate_tree([flat], "strict")
    assert [r.path for r in strict.results] == [flat] and not strict.ok


def test_failing_skills_name_the_modes_that_accept_them(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "flow", description="Flow.", body="", metadata={"openclaw": {"emoji": "x"}})
    write_skill(root / "broken", description="")
    report = validate_tree([root], "strict")
    by_name = {r.name: r for r in report.results}
    assert by_name["flow"].passes_in == ("openclaw", "mixed", "legacy")
    assert by_name["broken"].passes_in == ()
    assert by_name["broken"].to_json()["passesIn"] == []
    assert "passesIn" not in validate_tree([root / "flow"], "openclaw").results[0].to_json()
    data = report.to_json()
    assert list(data) == ["mode", "ok", "results", "notDiscovered"] and data["ok"] is False


def test_validate_many_follows_the_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_skill(repo / "skills/alpha")
    assert [r.name for r in validate_many([repo], "strict")] == ["alpha"]
