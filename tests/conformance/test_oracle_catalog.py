"""End to end against OpenClaw itself: the public corpus through both implementations.

For each corpus source, :func:`oracle_cases.materialise` lays the source out as an
OpenClaw machine would see it (workspace ``skills/``, ``.agents/skills``, extra,
bundled, managed and personal folders) with the same HOME, state dir, bundled dir,
``PATH`` of stub binaries and environment on both sides. One oracle process per
source runs the ``prompt`` and ``status`` ops for every configuration below; our
:class:`skillbook.pipeline.book.Loader` runs with ``check_command="openclaw skills check"``
and ``legacy_manifest_keys=False`` (the baseline reads only ``metadata.openclaw``).

Configurations: the defaults (spec §12 "Prompt": 30 000-character budget, 150
skills), a 4 000- and a 900-character budget (compact format, binary-searched
truncation, note-only prompt), a 7-skill count limit, config ``entries`` (one
skill disabled, an ``apiKey`` for a ``primaryEnv`` skill, ``env`` for a
``requires.env`` skill, ``requires.config`` paths set) with ``allowBundled``,
an agent filter (``agents.list[].skills``, id normalised), the agent defaults for
an unknown agent, and an explicit skill filter.

Every difference is collected; the test fails listing all of them. The only
differences allowed are the deliberate ones in ``docs/oracle-differences.md``:
a SKILL.md with a UTF-8 BOM loads in skillbook, and an ``always: true`` skill
whose ``os`` excludes the host is reported ineligible.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from oracle_cases import (
    CORPUS,
    LEGACY_MANIFEST_KEYS,
    SHARED_ENV,
    Case,
    OracleLike,
    Sandbox,
    deep_merge,
    diff_json,
    diff_status,
    has_bom,
    materialise,
    sources,
)

from skillbook.config.file import Config
from skillbook.model import SkillMetadata, Source
from skillbook.pipeline.book import OPENCLAW_CHECK_COMMAND, Loader, SkillBook

pytestmark = [pytest.mark.oracle, pytest.mark.corpus]

SOURCES = sources(CORPUS) if CORPUS.is_dir() else []
#: Configurations that can change the status report. OpenClaw's status ignores prompt
#: limits, agents and skill filters, so the others are compared with the default one
#: (one op fewer per case on the oracle, which reloads every skill per op).
STATUS_CASES = frozenset({"default", "entries", "limits"})
SMALL_BUDGET = 4000
TINY_BUDGET = 900
COUNT_LIMIT = 7
AGENT_ID = "Writer Bot"  # normalised to "writer-bot" by both sides
API_KEY = "sk-test-key"


def load_ours(
    sandbox: Sandbox,
    case: Case,
    *,
    legacy: bool = False,
    check: str = OPENCLAW_CHECK_COMMAND,
    compat: str | None = None,
) -> SkillBook:
    return Loader(
        sandbox.workspace,
        config=Config.from_mapping(case.config),
        agent=case.agent,
        skill_filter=case.skill_filter,
        env=sandbox.skillbook_env(),
        cwd=sandbox.root,
        check_command=check,
        legacy_manifest_keys=legacy,
        compat=compat,
    ).load()


def build_cases(sandbox: Sandbox, first: SkillBook) -> list[Case]:
    """The configurations, with skill names taken from a default load of our side."""
    base = sandbox.base_config()
    bom = {str(s.file_path) for s in first.skills if s.parsed.had_bom}
    entries = [e for e in first.status.skills if str(e.file_path) not in bom]
    names = [e.name for e in entries]
    # BOM skills load only here (deliberate): keep them out of the compared prompts.
    unfiltered = tuple(names) if bom else None

    skill_entries: dict[str, Any] = {}
    if entries:
        skill_entries[entries[0].skill_key] = {"enabled": False}
    with_key = [
        e
        for e in entries[1:]
        if e.primary_env and e.primary_env in e.requirements.env and e.primary_env not in SHARED_ENV
    ]
    if with_key:
        skill_entries[with_key[0].skill_key] = {"apiKey": API_KEY}
    with_env = [
        e
        for e in entries[1:]
        if e.skill_key not in skill_entries and any(v not in SHARED_ENV for v in e.requirements.env)
    ]
    if with_env:
        var = next(v for v in with_env[0].requirements.env if v not in SHARED_ENV)
        skill_entries[with_env[0].skill_key] = {"env": {var: "from-entry"}}
    # `requires.config` gates: a skill's own `skills.entries.<key>.enabled` is set true;
    # another path outside the validated `skills`/`agents` sections is set false (so a
    # default such as `browser.enabled` is overridden).
    override: dict[str, Any] = {}
    for path in (p for e in entries for p in e.requirements.config):
        parts = path.split(".")
        if len(parts) == 4 and parts[:2] == ["skills", "entries"] and parts[3] == "enabled":
            skill_entries.setdefault(parts[2], {})["enabled"] = True
        elif not override and _free_path(path):
            override = _set_path(path, False)
    bundled = [e.skill_key for e in entries if e.source == Source.BUNDLED.value]
    allow = bundled[::2] or ["no-bundled-skill-here"]

    chosen = [*names[::3], "no-such-skill"]
    defaults = names[1:3]
    return [
        Case("default", base, skill_filter=unfiltered),
        Case(
            "budget-4000",
            deep_merge(base, {"skills": {"limits": {"maxSkillsPromptChars": SMALL_BUDGET}}}),
            skill_filter=unfiltered,
        ),
        Case(
            "budget-900",
            deep_merge(base, {"skills": {"limits": {"maxSkillsPromptChars": TINY_BUDGET}}}),
            skill_filter=unfiltered,
        ),
        Case(
            "count-7",
            deep_merge(base, {"skills": {"limits": {"maxSkillsInPrompt": COUNT_LIMIT}}}),
            skill_filter=unfiltered,
        ),
        Case(
            "entries",
            deep_merge(
                deep_merge(base, override),
                {"skills": {"entries": skill_entries, "allowBundled": allow}},
            ),
            skill_filter=unfiltered,
        ),
        Case(
            "agent",
            deep_merge(
                base,
                {
                    "agents": {
                        "defaults": {"skills": defaults},
                        "list": [{"id": AGENT_ID, "skills": chosen}],
                    }
                },
            ),
            agent="writer-bot",
        ),
        Case(
            "agent-defaults",
            deep_merge(base, {"agents": {"defaults": {"skills": defaults}}}),
            agent="someone-else",
        ),
        Case("filter", base, skill_filter=tuple(names[1::2])),
        # Discovery limits: few candidates and loads per root, small files refused.
        Case(
            "limits",
            deep_merge(
                base,
                {
                    "skills": {
                        "limits": {
                            "maxCandidatesPerRoot": 5,
                            "maxSkillsLoadedPerSource": 3,
                            "maxSkillFileBytes": 3000,
                        }
                    }
                },
            ),
            skill_filter=unfiltered,
        ),
    ]


def _free_path(dotted: str) -> bool:
    parts = [p for p in dotted.split(".") if p]
    return (
        bool(parts) and parts[0] not in {"skills", "agents"} and not any(p.isdigit() for p in parts)
    )


def _set_path(dotted: str, value: Any) -> dict[str, Any]:
    out: Any = value
    for part in reversed([p for p in dotted.split(".") if p]):
        out = {part: out}
    return out if isinstance(out, dict) else {}


@dataclass
class SourceRun:
    """Both sides' results for one source, computed once and shared by the tests."""

    sandbox: Sandbox
    cases: list[Case]
    #: case id -> (op -> oracle result object)
    oracle: dict[str, dict[str, Any]]


class Runner:
    def __init__(self, oracle: OracleLike, tmp: pytest.TempPathFactory) -> None:
        self._oracle = oracle
        self._tmp = tmp
        self._runs: dict[str, SourceRun] = {}

    def get(self, source: str) -> SourceRun:
        if source not in self._runs:
            self._runs[source] = self._run(source)
        return self._runs[source]

    def _run(self, source: str) -> SourceRun:
        sandbox = materialise(CORPUS / source, self._tmp.mktemp(source))
        first = load_ours(sandbox, Case("probe", sandbox.base_config()))
        cases = build_cases(sandbox, first)
        return SourceRun(sandbox, cases, ask_oracle(self._oracle, sandbox, cases))


def ask_oracle(
    oracle: OracleLike, sandbox: Sandbox, cases: list[Case]
) -> dict[str, dict[str, Any]]:
    """One oracle process for all cases: case id -> op -> result."""
    batch = [
        c.oracle_request(op, sandbox)
        for c in cases
        for op in ("prompt", "status", "commands")
        if op != "status" or c.id in STATUS_CASES
    ]
    answer = oracle.run(batch)
    out: dict[str, dict[str, Any]] = {}
    for req, res in zip(batch, answer["results"], strict=True):
        if not res.get("ok"):
            raise AssertionError(f"oracle failed on {req['id']}: {res.get('error')}")
        case_id, op = req["id"].split(":")
        out.setdefault(case_id, {})[op] = res["result"]
    return out


@pytest.fixture(scope="module")
def runner(
    oracle: OracleLike, corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Runner:
    return Runner(oracle, tmp_path_factory)


def _always_os_paths(book: SkillBook) -> set[str]:
    """Skills with ``always: true`` whose ``os`` excludes the host (deliberate fix)."""
    return {
        str(e.file_path) for e in book.status.skills if e.always and e.missing.os and not e.eligible
    }


def _deliberate(line: str, path: str, always_os: set[str]) -> bool:
    """Deliberate difference 2: ``always: true`` does not override a failed ``os`` gate."""
    return path in always_os and (
        line.endswith(".eligible: ours=false oracle=true") or ".missing.os:" in line
    )


def compare_case(run: SourceRun, case: Case, book: SkillBook) -> list[str]:
    """Every difference for one configuration, minus the deliberate ones."""
    label = f"{run.sandbox.layout.source}/{case.id}"
    theirs = run.oracle[case.id]
    problems: list[str] = []
    if book.catalog.text != theirs["prompt"]["prompt"]:
        problems.append(_prompt_diff(label, book.catalog.text, theirs["prompt"]["prompt"]))
    if "commands" in theirs:
        commands = book.commands().to_json()
        problems += diff_json(commands, theirs["commands"]["commands"], f"{label}/commands")
    ours_status = book.status.to_json()
    expected = (theirs.get("status") or run.oracle["default"]["status"])["report"]
    lines, one_sided = diff_status(ours_status, expected, label=f"{label}/status")
    always_os = _always_os_paths(book)
    ours_by_path = {e["filePath"]: e for e in ours_status["skills"]}
    for line in lines:
        path = _path_of(line)
        if path in one_sided and path in ours_by_path and has_bom(Path(path)):
            continue  # deliberate: BOM files load here, OpenClaw cannot see their frontmatter
        if path is not None and _deliberate(line, path, always_os):
            continue
        problems.append(line)
    return problems


def _path_of(line: str) -> str | None:
    if "/status[" in line:
        return line.split("/status[", 1)[1].split("]", 1)[0]
    if ": skill " in line and " only in " in line:
        return line.split(": skill ", 1)[1].rsplit(" only in ", 1)[0]
    return None


def _prompt_diff(label: str, ours: str, theirs: str) -> str:
    i = next(
        (k for k, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
        min(len(ours), len(theirs)),
    )
    return (
        f"{label}/prompt: differs at char {i} (ours {len(ours)} chars, oracle {len(theirs)}): "
        f"ours={ours[max(0, i - 60) : i + 80]!r} oracle={theirs[max(0, i - 60) : i + 80]!r}"
    )


@pytest.mark.parametrize("source", SOURCES)
def test_prompt_and_status_match_openclaw(runner: Runner, source: str) -> None:
    """§12 Prompt + Status: byte-identical catalog and identical status entries per config."""
    run = runner.get(source)
    problems: list[str] = []
    for case in run.cases:
        problems.extend(compare_case(run, case, load_ours(run.sandbox, case)))
    assert not problems, f"{len(problems)} difference(s):\n" + "\n".join(problems[:80])


@pytest.mark.parametrize("source", SOURCES)
def test_cases_exercise_the_interesting_paths(runner: Runner, source: str) -> None:
    """Guards the test itself: the configurations really change what OpenClaw returns."""
    run = runner.get(source)
    default = run.oracle["default"]["prompt"]["prompt"]
    statuses = [e for e in run.oracle["default"]["status"]["report"]["skills"]]
    assert statuses, f"{source}: no skill loaded at all"
    assert default.startswith("\n\n") or "Skills truncated" in default
    tiny = run.oracle["budget-900"]["prompt"]["prompt"]
    assert "Skills truncated" in tiny or "compact format" in tiny
    count = run.oracle["count-7"]["prompt"]["prompt"]
    visible = sum(1 for e in statuses if e["eligible"])
    assert count.count("<skill>") <= COUNT_LIMIT
    if visible > COUNT_LIMIT:
        assert "Skills truncated: included" in count
    disabled = [e for e in run.oracle["entries"]["status"]["report"]["skills"] if e["disabled"]]
    assert len(disabled) >= 1


def test_runs_cover_every_source_label_and_config_feature(runner: Runner) -> None:
    """Guards the test itself: across the corpus the compared runs use all six source
    labels (§12 Loading) and every config feature changes some skill's status (§12
    Eligibility): ``enabled: false``, ``allowBundled``, ``apiKey`` with ``primaryEnv``,
    ``entries.env`` and a ``requires.config`` path."""
    labels: set[str] = set()
    seen: set[str] = set()
    for source in SOURCES:
        run = runner.get(source)
        before = {e["filePath"]: e for e in run.oracle["default"]["status"]["report"]["skills"]}
        labels |= {e["source"] for e in before.values()}
        config = next(c for c in run.cases if c.id == "entries").config["skills"]["entries"]
        for after in run.oracle["entries"]["status"]["report"]["skills"]:
            old = before[after["filePath"]]
            entry = config.get(after["skillKey"], {})
            if after["disabled"] and entry.get("enabled") is False:
                seen.add("disabled")
            if after["blockedByAllowlist"]:
                seen.add("allowBundled")
            key = after.get("primaryEnv")
            if (
                "apiKey" in entry
                and key in old["missing"]["env"]
                and key not in after["missing"]["env"]
            ):
                seen.add("apiKey")
            if any(
                v in old["missing"]["env"] and v not in after["missing"]["env"]
                for v in entry.get("env", {})
            ):
                seen.add("env")
            if [c["satisfied"] for c in after["configChecks"]] != [
                c["satisfied"] for c in old["configChecks"]
            ]:
                seen.add("config")
    assert labels >= {s.value for s in Source if s is not Source.REMOTE}, labels
    assert seen == {"disabled", "allowBundled", "apiKey", "env", "config"}, seen


def _observable(meta: SkillMetadata) -> bool:
    """Whether a manifest changes anything a status entry shows."""
    shown = meta.to_json()
    requires = shown.get("requires")
    if requires is not None and not any(requires.values()):
        del shown["requires"]
    if shown.get("always") is False:
        del shown["always"]
    return bool(shown)


def test_legacy_manifest_keys_are_the_only_difference(runner: Runner) -> None:
    """skillbook's default reads ``clawdbot``/``clawdis``/``moltbot`` manifests; OpenClaw's
    baseline does not. The skills whose status differs are exactly the legacy-key skills
    whose manifest shows anything, and those whose eligibility differs are exactly the
    legacy-key skills whose gates fail here."""
    legacy_total = 0
    problems: list[str] = []
    for source in SOURCES:
        run = runner.get(source)
        case = next(c for c in run.cases if c.id == "default")
        book = load_ours(run.sandbox, case, legacy=True)
        theirs = {e["filePath"]: e for e in run.oracle["default"]["status"]["report"]["skills"]}
        ours = {e["filePath"]: e for e in book.status.to_json()["skills"]}
        bom = {p for p in set(ours) - set(theirs) if has_bom(Path(p))}
        if set(ours) - bom != set(theirs):
            problems.append(f"{source}: skill sets differ: {sorted(set(ours) ^ set(theirs))}")
            continue
        legacy = {
            str(s.file_path): s.metadata
            for s in book.skills
            if s.metadata is not None and s.metadata.manifest_key in LEGACY_MANIFEST_KEYS
        }
        legacy_total += len(legacy)
        differing = {p for p in theirs if ours[p] != theirs[p]}
        expected = {p for p, m in legacy.items() if _observable(m)}
        eligibility = {p for p in theirs if ours[p]["eligible"] != theirs[p]["eligible"]}
        gated = {p for p in legacy if not ours[p]["eligible"]}
        for p in sorted(differing ^ expected):
            problems.append(f"{source}: {p}: {diff_json(ours[p], theirs[p], 'status')}")
        for p in sorted(eligibility ^ gated):
            problems.append(f"{source}: {p}: eligibility ours={ours[p]['eligible']}")
        print(
            f"{source}: {len(legacy)} legacy-key skills, {len(differing)} differ in status, "
            f"{len(eligibility)} in eligibility"
        )
    assert legacy_total > 0, "the corpus has no legacy-key skill: the test checks nothing"
    assert not problems, "\n".join(problems[:60])


def test_bom_skill_loads_only_in_skillbook(
    oracle: OracleLike, corpus_dir: Path, tmp_path: Path
) -> None:
    """Deliberate difference 1: a SKILL.md that starts with a UTF-8 BOM.

    OpenClaw reads the file without stripping the BOM, so ``---`` is not at the start
    and the skill has no description: it is dropped silently. skillbook strips the
    BOM (``parse.bom``) and loads it; everything else is identical.
    """
    source = corpus_dir / "obra-superpowers"
    sandbox = materialise(source, tmp_path)
    target = sandbox.workspace / "skills" / "brainstorming" / "SKILL.md"
    target.write_bytes(b"\xef\xbb\xbf" + target.read_bytes())
    case = Case("bom", sandbox.base_config())
    answer = oracle.run([case.oracle_request(op, sandbox) for op in ("status", "prompt")])
    theirs = answer["results"][0]["result"]["report"]
    book = load_ours(sandbox, case)
    ours = book.status.to_json()
    lines, one_sided = diff_status(ours, theirs, label="bom")
    assert one_sided == {str(target)}
    assert lines == [f"bom: skill {target} only in ours"]
    assert any(d.code == "parse.bom" and d.path == target for d in book.diagnostics)
    # The prompts differ by that skill alone.
    others = [s.name for s in book.skills if s.file_path != target]
    assert len(others) == len(book.skills) - 1
    without = load_ours(sandbox, Case("bom", sandbox.base_config(), skill_filter=tuple(others)))
    assert "<name>brainstorming</name>" in book.catalog.text
    assert without.catalog.text == answer["results"][1]["result"]["prompt"]


def test_always_with_foreign_os_is_the_only_difference(
    oracle: OracleLike, corpus_dir: Path, tmp_path: Path
) -> None:
    """Deliberate difference 2: ``always: true`` on a skill whose ``os`` excludes the host.

    OpenClaw's status report calls it eligible with nothing missing while its prompt
    leaves it out; skillbook reports ``missing.os`` and not eligible, as its runtime
    gate decides. The prompts are identical; the comparison filters exactly this.
    """
    sandbox = materialise(corpus_dir / "openclaw-openclaw", tmp_path)
    target = sandbox.bundled / "apple-notes" / "SKILL.md"
    text = target.read_text(encoding="utf-8")
    assert '"os": ["darwin"],' in text
    target.write_text(text.replace('"os": ["darwin"],', '"always": true, "os": ["darwin"],'))
    case = Case("default", sandbox.base_config())
    run = SourceRun(sandbox, [case], ask_oracle(oracle, sandbox, [case]))
    book = load_ours(sandbox, case)
    if book.status.find("apple-notes").eligible:
        pytest.skip("the host is macOS: the os gate passes on both sides")
    raw, _ = diff_status(
        book.status.to_json(), run.oracle["default"]["status"]["report"], label="x/status"
    )
    assert {line.split("]", 1)[1].split(":")[0] for line in raw} == {".eligible", ".missing.os"}
    assert all(str(target) in line for line in raw)
    assert compare_case(run, case, book) == []
