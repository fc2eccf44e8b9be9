"""The facade: skillbook.load and Loader compose the stages and reuse their caches."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from factories import write_skill, write_workspace

import skillbook
from skillbook.errors import SkillNotFound
from skillbook.pipeline.book import Loader


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    bins = tmp_path / "bin"
    bins.mkdir()
    tool = bins / "have-it"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    return {
        "HOME": str(tmp_path / "home"),
        "PATH": str(bins),
        "SKILLBOOK_STATE_DIR": str(tmp_path / "state"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "bundled"),
    }


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_workspace(
        tmp_path / "ws",
        {
            "alpha": "First skill.",
            "needs-tool": {
                "description": "Needs a binary.",
                "metadata": {"openclaw": {"requires": {"bins": ["missing-tool"]}}},
            },
            "has-tool": {
                "description": "Has its binary.",
                "metadata": {"openclaw": {"requires": {"bins": ["have-it"]}}},
            },
            "legacy": {
                "description": "Legacy gates.",
                "metadata": {"clawdbot": {"requires": {"bins": ["missing-tool"]}}},
            },
            "hidden": {"description": "Slash only.", "disable_model_invocation": True},
        },
    )


def test_three_lines_give_status_catalog_and_section(ws: Path, env: dict[str, str]) -> None:
    book = skillbook.load(ws, env=env)
    ready = {e.name: e.eligible for e in book.status.skills}
    assert ready == {
        "alpha": True,
        "needs-tool": False,
        "has-tool": True,
        "legacy": False,
        "hidden": True,
    }
    assert [s.name for s in book.eligible] == ["alpha", "has-tool", "hidden"]
    assert "<name>alpha</name>" in book.prompt
    assert "<name>hidden</name>" not in book.prompt  # disable-model-invocation
    section = book.system_prompt_section(read_tool="Read")
    assert section.startswith("## Skills (mandatory)\n")
    assert "with `Read`" in section
    assert book.snapshot(version=7).to_json()["version"] == 7


def test_legacy_manifest_keys_can_be_ignored_like_openclaw(ws: Path, env: dict[str, str]) -> None:
    book = Loader(ws, env=env, legacy_manifest_keys=False).load()
    assert book.find("legacy").eligible  # OpenClaw's baseline reads only metadata.openclaw


def test_a_skill_stripped_of_legacy_keys_is_the_same_object_build_after_build(
    ws: Path, env: dict[str, str]
) -> None:
    # The gate, status and catalog memos answer by identity: a skill stripped anew each
    # build would be computed again every time.
    loader = Loader(ws, env=env, legacy_manifest_keys=False)
    first, second = loader.load(), loader.load()
    legacy = [s for s in first.eligible if s.name == "legacy"]
    assert legacy and legacy[0].metadata is None
    assert all(a is b for a, b in zip(first.eligible, second.eligible, strict=True))
    write_skill(ws / "skills" / "legacy", description="Changed.")
    (changed,) = [s for s in loader.load().eligible if s.name == "legacy"]
    assert changed is not legacy[0] and changed.description == "Changed."


def test_find_and_get_by_name_or_skill_key(ws: Path, env: dict[str, str]) -> None:
    write_skill(
        ws / "skills" / "keyed",
        description="Keyed.",
        metadata={"openclaw": {"skillKey": "the-key"}},
    )
    book = skillbook.load(ws, env=env)
    assert book.find("the-key").name == "keyed"
    assert book.get("keyed").skill_key == "the-key"
    with pytest.raises(SkillNotFound):
        book.find("nope")


def test_strict_mode_excludes_with_diagnostics(ws: Path, env: dict[str, str]) -> None:
    write_skill(ws / "skills" / "Bad_Name", description="Breaks the name rules.")
    book = skillbook.load(ws, env=env, mode="strict")
    assert "Bad_Name" in {s.name for s in book.excluded}
    assert "Bad_Name" not in {e.name for e in book.status.skills}
    assert any(d.code == "validate.name-invalid" for d in book.diagnostics)


def test_agent_filter_from_an_openclaw_config(
    ws: Path, env: dict[str, str], tmp_path: Path
) -> None:
    config = tmp_path / "openclaw.json"
    config.write_text(
        "// JSON5, as OpenClaw writes it\n"
        + json.dumps({"agents": {"list": [{"id": "writer", "skills": ["alpha"]}]}}),
        encoding="utf-8",
    )
    book = skillbook.load(ws, env=env, config=config, agent="writer")
    assert [s.name for s in book.eligible] == ["alpha"]
    assert book.skill_filter == ("alpha",)


def test_repeated_load_reuses_parse_status_and_catalog(ws: Path, env: dict[str, str]) -> None:
    loader = Loader(ws, env=env)
    first = loader.load()
    misses = loader.cache.misses
    second = loader.load()
    assert loader.cache.misses == misses  # nothing re-parsed
    assert all(a is b for a, b in zip(first.status.skills, second.status.skills, strict=True))
    assert second.catalog is first.catalog
    # An edit re-parses that file only and re-evaluates only that skill.
    path = write_skill(ws / "skills" / "alpha", description="Changed.", body="") / "SKILL.md"
    os.utime(path, ns=(1, 1))
    third = loader.load()
    assert loader.cache.misses == misses + 1
    changed = {
        e.name for a, e in zip(second.status.skills, third.status.skills, strict=True) if a is not e
    }
    assert changed == {"alpha"}
    assert "Changed." in third.prompt and third.catalog is not second.catalog


def test_a_new_config_is_never_answered_from_the_memo(ws: Path, env: dict[str, str]) -> None:
    loader = Loader(ws, env=env)
    assert loader.load().find("alpha").eligible
    loader.config = skillbook.Config.from_mapping(
        {"skills": {"entries": {"alpha": {"enabled": False}}}}
    )
    assert loader.load().find("alpha").eligibility.disabled


def test_the_status_report_is_built_on_first_use_only(
    ws: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import skillbook.pipeline.book as book_module
    from skillbook.pipeline.gating.status import build_status as real

    calls: list[int] = []

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(book_module, "build_status", counting)
    book = Loader(ws, env=env).load()
    assert "has-tool" in book.prompt and "needs-tool" not in book.prompt
    assert calls == []  # the prompt took the gates' verdicts only
    report = book.status
    assert calls == [1] and book.status is report
    assert [e.name for e in report.skills if e.ready] == [s.name for s in book.eligible]
    assert not book.find("needs-tool").ready


def test_a_workspace_that_does_not_exist_is_a_warning(tmp_path: Path, env: dict[str, str]) -> None:
    """A typo in the path gave a book of the other sources' skills and no word of why."""
    typo = tmp_path / "wrokspace"
    book = skillbook.load(typo, env=env)
    found = [d for d in book.diagnostics if d.code == "discover.workspace-missing"]
    assert [(d.severity, d.path) for d in found] == [("warning", typo)]
    assert f"the workspace {typo} does not exist" in found[0].message
    afile = tmp_path / "notes.txt"
    afile.write_text("x")
    assert "is not a folder" in skillbook.load(afile, env=env).diagnostics[-1].message


def test_an_existing_or_unnamed_workspace_is_no_warning(ws: Path, env: dict[str, str]) -> None:
    codes = [d.code for d in skillbook.load(ws, env=env).diagnostics]
    codes += [d.code for d in skillbook.load(env=env).diagnostics]
    assert "discover.workspace-missing" not in codes
