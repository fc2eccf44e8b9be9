"""``skillbook validate`` text and JSON: collapsed findings, unread SKILL.md files, mode hints."""

from __future__ import annotations

import json

from factories import write_skill

from cli.conftest import Shell


def test_repeated_findings_are_one_line_with_their_line_numbers(shell: Shell) -> None:
    skill = write_skill(
        shell.project / "skills" / "flows",
        description="Flows.",
        body="Body\n",
        # Three flow mappings on lines 5 to 7: one finding, three line numbers.
        raw='metadata:\n  one: {"a": "b"}\n  two: {"c": "d"}\n  three: {"e": "f"}',
    )
    result = shell.run("validate", "--mode", "strict", str(skill))
    assert result.exit_code == 1
    flows = [line for line in result.stdout.splitlines() if "a flow mapping" in line]
    assert flows == [
        f"    {skill / 'SKILL.md'}:5,6,7: error [validate.yaml-style] strict YAML readers "
        "(skills-ref) refuse a flow mapping `{...}`; use block style (one `key: value` per "
        "line) or quote the text"
    ]
    # Different messages on one line stay apart.
    assert sum("[validate.field-type]" in line for line in result.stdout.splitlines()) == 3
    # JSON keeps one diagnostic per occurrence.
    data = json.loads(shell.run("validate", "--json", "--mode", "strict", str(skill)).stdout)
    found = [d for d in data["results"][0]["diagnostics"] if "a flow mapping" in d["message"]]
    assert [d["line"] for d in found] == [5, 6, 7]


def test_unread_skill_files_are_listed_with_the_reason(shell: Shell) -> None:
    skills = shell.project / "skills"
    write_skill(skills / "good", description="Good.")
    write_skill(skills / "ops/db-backup", "db-backup", "Backups.")
    result = shell.run("validate", str(skills))
    assert result.exit_code == 0, result.stdout
    lines = result.stdout.splitlines()
    assert lines[0] == f"✓ {skills / 'good'} (good)"
    assert "Not read by the loader (1 SKILL.md file):" in lines
    assert any(
        line.startswith(f"  {skills / 'ops' / 'db-backup' / 'SKILL.md'}: it is in the grouped")
        for line in lines
    )
    assert lines[-1] == "1 valid, 0 invalid (openclaw mode)"
    # With grouped layouts on, the config makes validate read them too.
    cfg = shell.project / "c.json"
    cfg.write_text("{skills: {load: {grouped: true}}}", encoding="utf-8")
    grouped = shell.run("-c", str(cfg), "validate", str(skills), "--json")
    data = json.loads(grouped.stdout)
    assert [r["name"] for r in data["results"]] == ["good", "db-backup"]
    assert data["notDiscovered"] == []


def test_the_summary_names_the_modes_that_would_accept(shell: Shell) -> None:
    skills = shell.project / "skills"
    write_skill(skills / "flow", description="Flow.", metadata={"openclaw": {"emoji": "x"}})
    write_skill(skills / "broken", description=None)
    result = shell.run("validate", "--mode", "strict", str(skills))
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-3:] == [
        "0 valid, 2 invalid (strict mode)",
        "  fails in every mode: broken",
        "  would pass with --mode openclaw (also mixed, legacy): flow",
    ]


def test_a_missing_path_is_a_json_error_under_json(shell: Shell) -> None:
    result = shell.run("validate", "--json", "nope")
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "error": "no such file or folder: nope",
        "code": "path-not-found",
    }
