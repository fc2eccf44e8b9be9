"""Discovery: spec §12 "Loading / discovery / precedence" plus skillbook's additions.

Plugin lines of the checklist do not apply (skillbook has no plugins).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from factories import skill_text, write_file, write_skill

from skillbook.config.limits import (
    DEFAULT_MAX_CANDIDATES_PER_ROOT,
    DEFAULT_MAX_SKILL_FILE_BYTES,
    DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE,
    Limits,
)
from skillbook.config.mode import Mode
from skillbook.config.paths import Paths
from skillbook.config.profile import OPENCLAW_2026_9
from skillbook.diagnostics import Diagnostic
from skillbook.model import Source
from skillbook.pipeline.cache.parse_cache import ParseCache
from skillbook.pipeline.discovery.discover import (
    DiscoverOptions,
    Discovery,
    Root,
    discover,
    resolve_roots,
)


def run(*roots: tuple[Source, Path], **opts: object) -> Discovery:
    return discover([Root(s, p) for s, p in roots], options=DiscoverOptions(**opts))  # type: ignore[arg-type]


def names(d: Discovery) -> list[str]:
    return [s.name for s in d.skills]


def codes(d: Discovery) -> list[str]:
    return [x.code for x in d.diagnostics]


def diags(d: Discovery, code: str) -> list[Diagnostic]:
    return [x for x in d.diagnostics if x.code == code]


@pytest.fixture()
def env(tmp_path: Path) -> tuple[Paths, Path]:
    home = tmp_path / "home"
    home.mkdir()
    paths = Paths.from_env(
        {
            "HOME": str(home),
            "SKILLBOOK_STATE_DIR": str(tmp_path / "state"),
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "bundled"),
        },
        cwd=tmp_path,
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    return paths, ws


# -- basics -------------------------------------------------------------------------------


def test_empty_and_missing_dirs_give_nothing(env: tuple[Paths, Path]) -> None:
    """§12: empty managed dir → [] without throwing; missing dirs → empty."""
    paths, ws = env
    paths.managed_dir.mkdir(parents=True)
    d = discover(resolve_roots(ws, paths))
    assert d.skills == () and d.loaded == ()
    # Default roots that are missing are not diagnosed.
    assert d.diagnostics == ()


def test_missing_extra_dir_is_diagnosed(env: tuple[Paths, Path], tmp_path: Path) -> None:
    paths, ws = env
    d = discover(resolve_roots(ws, paths, extra_dirs=["  ", str(tmp_path / "nope")]))
    [diag] = diags(d, "discover.root-missing")
    assert diag.path == tmp_path / "nope"


@pytest.mark.parametrize(
    ("kind", "what"),
    [
        ("broken", "is a symbolic link to a folder that does not exist"),
        ("loop", "is a symbolic link that loops back to itself"),
        ("file", "is not a folder"),
    ],
)
def test_a_default_root_that_is_there_but_no_folder_is_diagnosed(
    env: tuple[Paths, Path], kind: str, what: str
) -> None:
    """`<workspace>/skills` as a broken link (its target moved), a looping link or a
    file hid every workspace skill without a word (found by the crash hunt)."""
    paths, ws = env
    skills = ws / "skills"
    ws.mkdir(parents=True, exist_ok=True)
    if kind == "broken":
        skills.symlink_to(ws / "moved-away")
    elif kind == "loop":
        skills.symlink_to("skills")
    else:
        skills.write_text("not a folder")
    d = discover(resolve_roots(ws, paths))
    [diag] = diags(d, "discover.root-missing")
    assert diag.path == skills
    assert f"({Source.WORKSPACE.value}) {what}" in diag.message


def test_resolve_roots_order_and_extra_dir_expansion(env: tuple[Paths, Path]) -> None:
    paths, ws = env
    roots = resolve_roots(ws, paths, extra_dirs=[" ~/x ", "", "rel"], cwd=ws)
    assert [r.source for r in roots] == [
        Source.EXTRA,
        Source.EXTRA,
        Source.BUNDLED,
        Source.MANAGED,
        Source.PERSONAL,
        Source.PROJECT,
        Source.WORKSPACE,
        Source.WORKSPACE,
    ]
    # skillbook's learned skills, just before the workspace's own (skillbook.pipeline.discovery.learned).
    assert [r.path.relative_to(ws) for r in roots[-2:]] == [Path("skills/auto"), Path("skills")]
    assert roots[0].path == paths.home / "x"
    assert roots[1].path == ws / "rel"
    assert roots[-3].path == ws / ".agents" / "skills"
    assert roots[-1].path == ws / "skills"
    no_bundled = dataclasses.replace(paths, bundled_dir=None)
    assert Source.BUNDLED not in [r.source for r in resolve_roots(None, no_bundled)]


def test_bundled_skill_loads(env: tuple[Paths, Path]) -> None:
    """§12: a bundled skill loads with its name, description and SKILL.md path."""
    paths, ws = env
    assert paths.bundled_dir is not None
    md = write_skill(paths.bundled_dir / "peekaboo", description="Capture UI") / "SKILL.md"
    d = discover(resolve_roots(ws, paths))
    [skill] = d.skills
    assert (skill.name, skill.description, skill.source) == (
        "peekaboo",
        "Capture UI",
        "openclaw-bundled",
    )
    assert skill.file_path == md and skill.base_dir == md.parent


def test_name_falls_back_to_directory(env: tuple[Paths, Path]) -> None:
    """§12: frontmatter without `name` falls back to the directory name."""
    paths, ws = env
    write_skill(ws / "skills" / "dir-name", None)
    d = discover(resolve_roots(ws, paths))
    assert names(d) == ["dir-name"]


def test_missing_description_is_diagnosed(env: tuple[Paths, Path]) -> None:
    paths, ws = env
    md = write_skill(ws / "skills" / "nodesc", "x", description=None) / "SKILL.md"
    (ws / "skills" / "nofm").mkdir()
    (ws / "skills" / "nofm" / "SKILL.md").write_text("just text\n")
    d = discover(resolve_roots(ws, paths))
    assert d.skills == ()
    missing = diags(d, "parse.missing-description")
    assert {x.path for x in missing} == {md, ws / "skills" / "nofm" / "SKILL.md"}
    assert diags(d, "parse.no-frontmatter")[0].path == ws / "skills" / "nofm" / "SKILL.md"


# -- precedence ---------------------------------------------------------------------------


def test_precedence_of_all_six_sources(env: tuple[Paths, Path], tmp_path: Path) -> None:
    """§12: workspace > project > personal > managed > bundled > extra (same name)."""
    paths, ws = env
    assert paths.bundled_dir is not None
    extra = tmp_path / "extra"
    dirs = {
        Source.EXTRA: extra,
        Source.BUNDLED: paths.bundled_dir,
        Source.MANAGED: paths.managed_dir,
        Source.PERSONAL: paths.personal_dir,
        Source.PROJECT: ws / ".agents" / "skills",
        Source.WORKSPACE: ws / "skills",
    }
    for source, folder in dirs.items():
        write_skill(folder / "same", description=f"from {source.value}")
    order = list(dirs)
    while order:
        d = discover(resolve_roots(ws, paths, extra_dirs=[str(extra)]))
        [skill] = d.skills
        assert skill.source == order[-1].value
        assert skill.description == f"from {order[-1].value}"
        assert len(d.shadowed) == len(order) - 1
        assert all(s.winner is skill for s in d.shadowed)
        # Remove the winner: the next source down takes over.
        os.remove(dirs[order[-1]] / "same" / "SKILL.md")
        order.pop()


def test_unique_skills_from_all_sources_in_first_seen_order(
    env: tuple[Paths, Path], tmp_path: Path
) -> None:
    """§12: unique skills of the .agents sources appear alongside others; first-seen order."""
    paths, ws = env
    extra = tmp_path / "extra"
    write_skill(extra / "zz-extra", None)
    write_skill(extra / "shared", description="extra")
    write_skill(paths.managed_dir / "b-managed", None)
    write_skill(paths.personal_dir / "a-personal", None)
    write_skill(ws / ".agents" / "skills" / "c-project", None)
    write_skill(ws / "skills" / "B-ws", None)
    write_skill(ws / "skills" / "a-ws", None)
    write_skill(ws / "skills" / "shared", description="workspace")
    d = discover(resolve_roots(ws, paths, extra_dirs=[str(extra)]))
    # Extra first (JS sort), then managed, personal, project, workspace (B < a in code units);
    # "shared" keeps its first position with the workspace value.
    assert names(d) == [
        "shared",
        "zz-extra",
        "b-managed",
        "a-personal",
        "c-project",
        "B-ws",
        "a-ws",
    ]
    assert d.skills[0].description == "workspace"
    [sh] = d.shadowed
    assert sh.hidden.source == "openclaw-extra" and sh.winner.source == "openclaw-workspace"
    [diag] = diags(d, "discover.shadowed")
    assert diag.skill == "shared" and diag.path == extra / "shared" / "SKILL.md"
    assert "openclaw-workspace" in diag.message and str(ws / "skills" / "shared") in diag.message
    assert len(d.loaded) == 8


# -- symlinks -----------------------------------------------------------------------------


def test_symlinked_skill_dir_inside_root_loads(env: tuple[Paths, Path]) -> None:
    paths, ws = env
    write_skill(ws / "skills" / "store" / "real-one", "linked")
    (ws / "skills" / "link").symlink_to(ws / "skills" / "store" / "real-one")
    d = discover(resolve_roots(ws, paths))
    assert names(d) == ["linked"]
    assert d.skills[0].base_dir == ws / "skills" / "link"


def test_symlinked_skill_dir_outside_is_an_escape(env: tuple[Paths, Path], tmp_path: Path) -> None:
    """§12: workspace symlink pointing outside → skipped + reason=symlink-escape warning."""
    paths, ws = env
    outside = tmp_path / "outside" / "evil"
    write_skill(outside, None)
    (ws / "skills").mkdir()
    (ws / "skills" / "evil").symlink_to(outside)
    d = discover(resolve_roots(ws, paths))
    assert d.skills == ()
    [diag] = diags(d, "discover.symlink-escape")
    for part in (
        "Skipping escaped skill path outside its configured root:",
        "reason=symlink-escape",
        "source=openclaw-workspace",
        f"root={ws / 'skills'}",
        f"requested={ws / 'skills' / 'evil'}",
        f"resolved={outside}",
        "allowSymlinkTargets",
    ):
        assert part in diag.message
    assert diag.path == ws / "skills" / "evil"


def test_bundled_symlink_escape_reason(env: tuple[Paths, Path], tmp_path: Path) -> None:
    """§12: bundled symlink escape → reason=bundled-symlink-escape with the stray hint."""
    paths, ws = env
    assert paths.bundled_dir is not None
    write_skill(tmp_path / "elsewhere" / "x", None)
    paths.bundled_dir.mkdir()
    (paths.bundled_dir / "x").symlink_to(tmp_path / "elsewhere" / "x")
    d = discover(resolve_roots(ws, paths))
    [diag] = diags(d, "discover.symlink-escape")
    assert "source=openclaw-bundled" in diag.message
    assert (
        "reason=bundled-symlink-escape hint=likely-stray-local-symlink-or-checkout-mutation"
        in diag.message
    )


def test_allow_symlink_targets(env: tuple[Paths, Path], tmp_path: Path) -> None:
    paths, ws = env
    shared = tmp_path / "shared-skills"
    write_skill(shared / "tool")
    (ws / "skills").mkdir()
    (ws / "skills" / "tool").symlink_to(shared / "tool")
    roots = resolve_roots(ws, paths)
    assert discover(roots).skills == ()
    d = discover(roots, options=DiscoverOptions(allow_symlink_targets=(shared,)))
    assert names(d) == ["tool"]
    assert d.skills[0].base_dir == ws / "skills" / "tool"
    assert "discover.symlink-escape" not in codes(d)


@pytest.mark.parametrize("target_inside", [True, False])
def test_symlinked_skill_md_is_refused(
    env: tuple[Paths, Path], tmp_path: Path, target_inside: bool
) -> None:
    """§12: SKILL.md symlinked outside → skipped; symlinked inside the root → also skipped."""
    paths, ws = env
    if target_inside:
        target = write_skill(ws / "skills" / "store-dir-md", "store") / "real.md"
        write_file(target, skill_text("linked", "d", body=""))
        os.remove(ws / "skills" / "store-dir-md" / "SKILL.md")
    else:
        target = write_file(tmp_path / "real.md", skill_text("linked", "d", body=""))
    (ws / "skills" / "linked").mkdir(parents=True)
    (ws / "skills" / "linked" / "SKILL.md").symlink_to(target)
    d = discover(resolve_roots(ws, paths))
    assert "linked" not in names(d)
    found = diags(d, "discover.symlinked-skill-md") + diags(d, "discover.symlink-escape")
    assert [x.path for x in found] == [ws / "skills" / "linked" / "SKILL.md"]


def test_dedupe_by_realpath(env: tuple[Paths, Path], tmp_path: Path) -> None:
    paths, ws = env
    # Same folder twice in one source under two names (no `name:` field).
    write_skill(ws / "skills" / "orig", None)
    (ws / "skills" / "alias").symlink_to(ws / "skills" / "orig")
    d = discover(resolve_roots(ws, paths))
    assert len(d.loaded) == 2
    assert names(d) == ["orig"]
    [diag] = diags(d, "discover.duplicate-realpath")
    assert diag.skill == "alias"
    # OpenClaw's behaviour on request: both names.
    d = discover(resolve_roots(ws, paths), options=DiscoverOptions(dedupe_realpath=False))
    assert sorted(names(d)) == ["alias", "orig"]


def test_same_folder_in_two_sources_loads_once(env: tuple[Paths, Path]) -> None:
    paths, ws = env
    write_skill(ws / "skills" / "tool")
    d = discover(resolve_roots(ws, paths, extra_dirs=[str(ws / "skills")]))
    [skill] = d.skills
    assert skill.source == "openclaw-workspace"  # OpenClaw's winner (later source)
    assert codes(d).count("discover.duplicate-realpath") == 1
    assert "discover.shadowed" not in codes(d)


# -- nested roots, limits -----------------------------------------------------------------


def test_nested_repo_root_with_limits_5_5(tmp_path: Path) -> None:
    """§12: nested `extraDir/skills/*` with limits 5/5: ≤5 skills, first present, last absent."""
    repo = tmp_path / "repo"
    for i in range(8):
        write_skill(repo / "skills" / f"repo-skill-{i:02d}", None)
    limits = Limits(max_candidates_per_root=5, max_skills_loaded_per_source=5)
    d = run((Source.EXTRA, repo), limits=limits)
    got = names(d)
    assert len(got) <= 5
    assert "repo-skill-00" in got and "repo-skill-07" not in got
    assert "discover.nested-root" in codes(d)
    over = diags(d, "discover.over-limit")
    assert over and "repo-skill-07" in over[0].message
    assert "maxSkillsLoadedPerSource" in over[0].message


def test_nested_root_detected_at_entry_30_of_30(tmp_path: Path) -> None:
    """§12: nested root detected when the only SKILL.md is in entry 30 of 30 (limits 30)."""
    repo = tmp_path / "repo"
    for i in range(29):
        (repo / "skills" / f"entry-{i:02d}").mkdir(parents=True)
    write_skill(repo / "skills" / "entry-29", None)
    limits = Limits(max_candidates_per_root=30, max_skills_loaded_per_source=30)
    d = run((Source.EXTRA, repo), limits=limits)
    assert names(d) == ["entry-29"]


def test_nested_root_hiding_direct_skills_is_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write_skill(root / "direct", None)
    write_skill(root / "skills" / "nested", None)
    d = run((Source.EXTRA, root))
    assert names(d) == ["nested"]
    [diag] = diags(d, "discover.nested-root")
    assert diag.severity == "warning" and "direct" in diag.message


def test_default_limits() -> None:
    lim = Limits()
    assert (lim.max_candidates_per_root, lim.max_skills_loaded_per_source) == (300, 200)
    assert (lim.max_skills_in_prompt, lim.max_skills_prompt_chars) == (150, 30_000)
    assert lim.max_skill_file_bytes == 256_000
    assert DEFAULT_MAX_CANDIDATES_PER_ROOT == 300
    assert DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE == 200
    assert DEFAULT_MAX_SKILL_FILE_BYTES == 256_000


def test_over_limit_sorts_by_name_and_names_the_dropped(tmp_path: Path) -> None:
    root = tmp_path / "root"
    # One candidate whose SKILL.md is invalid yields three grandchild skills.
    (root / "a-group").mkdir(parents=True)
    (root / "a-group" / "SKILL.md").write_text("no frontmatter\n")
    for leaf in ("zeta", "Beta", "alpha"):
        write_skill(root / "a-group" / leaf, None)
    write_skill(root / "b-single", None)
    d = run((Source.EXTRA, root), limits=Limits(max_skills_loaded_per_source=2))
    assert names(d) == ["alpha", "Beta"]
    messages = " ".join(x.message for x in diags(d, "discover.over-limit"))
    assert "zeta" in messages and "b-single" in messages


@pytest.mark.parametrize("root_level", [False, True])
def test_max_skill_file_bytes(tmp_path: Path, root_level: bool) -> None:
    """§12: maxSkillFileBytes 1000 skips a 5 KB SKILL.md (child and root-level)."""
    root = tmp_path / "root"
    folder = root if root_level else root / "big"
    md = write_skill(folder, "big", body="x" * 5000) / "SKILL.md"
    limits = Limits(max_skill_file_bytes=1000)
    d = run((Source.EXTRA, root), limits=limits)
    assert d.skills == ()
    [diag] = diags(d, "discover.file-too-large")
    assert diag.path == md
    assert str(md.stat().st_size) in diag.message and "1000" in diag.message
    assert "skills.limits.maxSkillFileBytes" in diag.message
    # Exactly at the limit loads (strict `>`).
    d = run((Source.EXTRA, root), limits=Limits(max_skill_file_bytes=md.stat().st_size))
    assert names(d) == ["big"]


def test_root_that_is_a_skill(tmp_path: Path) -> None:
    root = tmp_path / "single"
    write_skill(root, "solo")
    write_skill(root / "child", None)  # hidden by the root skill, as in OpenClaw
    d = run((Source.EXTRA, root))
    assert names(d) == ["solo"]


def test_invalid_skill_md_falls_back_to_grandchildren(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write_skill(root / "pack", description=None, body="")
    write_skill(root / "pack" / "inner-b", None)
    write_skill(root / "pack" / "inner-a", None)
    d = run((Source.EXTRA, root))
    assert names(d) == ["inner-a", "inner-b"]
    assert diags(d, "parse.missing-description")[0].path == root / "pack" / "SKILL.md"


# -- ignored entries and layouts OpenClaw cannot see ---------------------------------------


def test_hidden_and_node_modules_skipped(env: tuple[Paths, Path]) -> None:
    paths, ws = env
    write_skill(ws / "skills" / ".hidden-skill", None)
    write_skill(ws / "skills" / "node_modules", None)
    write_skill(ws / "skills" / "visible", None)
    d = discover(resolve_roots(ws, paths))
    assert names(d) == ["visible"]
    [diag] = diags(d, "discover.hidden-dir")
    assert diag.path == ws / "skills" / ".hidden-skill"


def test_dot_directory_layout_is_diagnosed(env: tuple[Paths, Path]) -> None:
    paths, ws = env
    write_skill(ws / "skills" / ".curated" / "gh-fix-ci", None)
    write_skill(ws / "skills" / ".system" / "installer", None)
    d = discover(resolve_roots(ws, paths))
    assert d.skills == ()
    hidden = diags(d, "discover.hidden-dir")
    assert [x.path for x in hidden] == [ws / "skills" / ".curated", ws / "skills" / ".system"]
    assert ".curated/gh-fix-ci" in hidden[0].message
    assert "skills.load.extraDirs" in hidden[0].message


def test_grouped_layout_diagnosed_then_loaded_on_request(env: tuple[Paths, Path]) -> None:
    paths, ws = env
    write_skill(ws / "skills" / "owner" / "tool-b", None)
    write_skill(ws / "skills" / "owner" / "tool-a", "named-a")
    write_skill(ws / "skills" / "plain", None)
    (ws / "skills" / "scripts").mkdir()
    roots = resolve_roots(ws, paths)
    d = discover(roots)
    assert names(d) == ["plain"]
    [diag] = diags(d, "discover.grouped-layout")
    assert diag.path == ws / "skills" / "owner"
    assert "skills.load.grouped: true" in diag.message and "owner/tool-b" in diag.message
    d = discover(roots, options=DiscoverOptions(grouped=True))
    # Direct children first, then the grouped ones; name from frontmatter or leaf folder.
    assert names(d) == ["plain", "named-a", "tool-b"]
    assert d.skills[2].base_dir == ws / "skills" / "owner" / "tool-b"
    assert "discover.grouped-layout" not in codes(d)


def test_grouped_escape_is_refused(env: tuple[Paths, Path], tmp_path: Path) -> None:
    paths, ws = env
    write_skill(tmp_path / "out" / "leaf", None)
    (ws / "skills" / "group").mkdir(parents=True)
    (ws / "skills" / "group" / "leaf").symlink_to(tmp_path / "out" / "leaf")
    d = discover(resolve_roots(ws, paths), options=DiscoverOptions(grouped=True))
    assert d.skills == ()
    assert "discover.symlink-escape" in codes(d)


def test_wrong_case_skill_md(env: tuple[Paths, Path]) -> None:
    paths, ws = env
    (ws / "skills" / "lower").mkdir(parents=True)
    (ws / "skills" / "lower" / "skill.md").write_text("---\ndescription: d\n---\n")
    if (ws / "skills" / "lower" / "SKILL.md").exists():
        pytest.skip("case-insensitive file system")
    d = discover(resolve_roots(ws, paths))
    assert d.skills == ()
    assert "discover.skill-md-case" in codes(d)


def test_wrong_case_skill_md_is_reported_by_the_2026_9_search(tmp_path: Path) -> None:
    """2026.9's recursive search passed a `skill.md` folder by with no diagnostic (found
    by the crash hunt), at the top and deeper down."""
    root = tmp_path / "skills"
    write_file(root / "lower" / "skill.md", skill_text("lower", "d"))
    write_file(root / "group" / "deep" / "Skill.md", skill_text("deep", "d"))
    if (root / "lower" / "SKILL.md").exists():
        pytest.skip("case-insensitive file system")
    d = run((Source.WORKSPACE, root), profile=OPENCLAW_2026_9)
    assert d.skills == ()
    found = diags(d, "discover.skill-md-case")
    assert sorted(str(x.path) for x in found) == [
        str(root / "group" / "deep" / "Skill.md"),
        str(root / "lower" / "skill.md"),
    ]


def test_broken_symlink_candidate_is_diagnosed(env: tuple[Paths, Path], tmp_path: Path) -> None:
    paths, ws = env
    (ws / "skills").mkdir()
    (ws / "skills" / "gone").symlink_to(tmp_path / "missing")
    d = discover(resolve_roots(ws, paths))
    assert [x.path for x in diags(d, "discover.unreadable")] == [ws / "skills" / "gone"]


# -- modes --------------------------------------------------------------------------------


def test_standalone_markdown_in_mixed_mode(env: tuple[Paths, Path]) -> None:
    paths, ws = env
    root = ws / "skills"
    write_skill(root / "folder-skill", None)
    (root / "deploy.md").write_text("# Deploy helper\n\nShips the app to production.\nMore.\n")
    write_file(root / "fm.md", skill_text("from-fm", "Has frontmatter", body="body\n"))
    (root / "plain.md").write_text("Just one line " + "y" * 300 + "\n")
    (root / "README.md").write_text("# Readme\n\nnot a skill\n")
    (root / "empty.md").write_text("# Only a heading\n")
    roots = resolve_roots(ws, paths)
    assert names(discover(roots)) == ["folder-skill"]
    d = discover(roots, options=DiscoverOptions(mode=Mode.MIXED))
    by_name = {s.name: s for s in d.skills}
    assert list(by_name) == ["folder-skill", "Deploy helper", "from-fm", "plain"]
    assert by_name["Deploy helper"].description == "Ships the app to production."
    assert by_name["from-fm"].description == "Has frontmatter"
    assert len(by_name["plain"].description) == 180
    assert by_name["plain"].file_path == root / "plain.md"
    assert by_name["plain"].base_dir == root
    assert len(diags(d, "discover.standalone-md")) == 3
    assert diags(d, "parse.missing-description")[0].path == root / "empty.md"
    assert names(discover(roots, options=DiscoverOptions(mode=Mode.LEGACY))) == list(by_name)


def test_unknown_mode_is_a_caller_error() -> None:
    with pytest.raises(ValueError):
        DiscoverOptions(mode="bogus")  # type: ignore[arg-type]


# -- cache --------------------------------------------------------------------------------


def test_cache_sees_edits(env: tuple[Paths, Path]) -> None:
    paths, ws = env
    md = write_skill(ws / "skills" / "tool", None, description="first") / "SKILL.md"
    roots = resolve_roots(ws, paths)
    cache = ParseCache()
    assert discover(roots, cache=cache).skills[0].description == "first"
    write_skill(ws / "skills" / "tool", None, description="second version")
    assert discover(roots, cache=cache).skills[0].description == "second version"
    # Same mtime, different size → still re-parsed.
    st = md.stat()
    md.write_text("---\ndescription: third, longer text\n---\n")
    os.utime(md, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert discover(roots, cache=cache).skills[0].description == "third, longer text"


def test_cache_hit_reads_nothing(env: tuple[Paths, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    paths, ws = env
    for i in range(5):
        write_skill(ws / "skills" / f"s{i}", None)
    roots = resolve_roots(ws, paths)
    cache = ParseCache()
    first = discover(roots, cache=cache)
    assert cache.misses == 5 and len(cache) == 5
    import skillbook.pipeline.discovery.skill_reader

    def boom(*_a: object, **_k: object) -> None:
        raise AssertionError("parsed again")

    # Where the reader looks the parser up (it imports the name from skillbook.pipeline.parse.skill_file).
    monkeypatch.setattr(skillbook.pipeline.discovery.skill_reader, "parse_skill_text", boom)
    second = discover(roots, cache=cache)
    assert cache.hits == 5
    assert [s.to_json() for s in second.skills] == [s.to_json() for s in first.skills]


def test_cached_discovery_reparses_nothing(env: tuple[Paths, Path]) -> None:
    """A repeated discovery of an unchanged tree is served from the cache.

    The speed-up itself is measured in benchmarks/, never asserted as a time here.
    """
    paths, ws = env
    for i in range(150):
        write_skill(
            ws / "skills" / f"skill-{i:03d}",
            description=f"Does thing {i}",
            body="Body text.\n" * 50,
            metadata={"openclaw": {"requires": {"bins": ["a", "b"]}}},
        )
    roots = resolve_roots(ws, paths)
    cache = ParseCache()
    first = discover(roots, cache=cache)
    assert cache.misses >= 150
    misses = cache.misses
    for _ in range(5):
        again = discover(roots, cache=cache)
    assert cache.misses == misses
    assert cache.hits >= 150 * 5
    assert [s.to_json() for s in again.skills] == [s.to_json() for s in first.skills]


def test_hidden_skill_folders_one_level_down_are_diagnosed(env: tuple[Paths, Path]) -> None:
    """A repository root as an extra dir whose skills/ holds only dot-folders (openai/skills)."""
    paths, ws = env
    repo = ws.parent / "repo"
    write_skill(repo / "skills" / ".curated" / "gh-fix-ci", description="Fix CI", body="")
    roots = resolve_roots(ws, paths, extra_dirs=[str(repo)])
    found = discover(roots)
    assert [s.name for s in found.skills if s.source == "openclaw-extra"] == []
    hidden = [d for d in found.diagnostics if d.code == "discover.hidden-dir"]
    assert hidden and ".curated/gh-fix-ci" in hidden[0].message


def test_a_hand_written_auto_skill_hiding_learned_skills_is_reported(
    tmp_path: Path,
) -> None:
    """``skills/auto/SKILL.md`` makes ``auto/`` one skill (as OpenClaw reads it); the
    learned skills promoted below it are then not loaded, and a warning says which."""
    import skillbook

    env = {"HOME": str(tmp_path / "home"), "SKILLBOOK_STATE_DIR": str(tmp_path / "state")}
    auto = tmp_path / "ws" / "skills" / "auto"
    write_skill(auto / "20260101-0900-fetch-report", name="fetch-report")
    book = skillbook.load(tmp_path / "ws", env=env)
    assert "fetch-report" in {s.name for s in book.skills}
    assert not [d for d in book.diagnostics if d.code == "discover.learned-hidden"]

    write_skill(auto, name="auto")
    book = skillbook.load(tmp_path / "ws", env=env)
    names = {s.name for s in book.skills}
    assert "auto" in names and "fetch-report" not in names
    [diag] = [d for d in book.diagnostics if d.code == "discover.learned-hidden"]
    assert diag.path == auto / "SKILL.md"
    assert "20260101-0900-fetch-report" in diag.message
