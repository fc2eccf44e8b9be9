"""Every SKILL.md of the public corpus is accounted for.

Input: ``../shared/corpus`` (390 SKILL.md files from ten public sources). For each
source the skill roots are found (:func:`oracle_cases.skill_roots`: the parent of
every skill folder, such as ``skills/``, ``skills/.curated``, ``plugins/*/skills``,
``skills/<owner>`` and ``.agents/skills``; skill folders nested inside another skill
folder are loaded as roots of their own) and discovered with limits raised so that
nothing is cut. Each file must then either load as a skill or be named by at least
one diagnostic (its path or its folder) with a registered code.

Run ``pytest tests/conformance/test_corpus.py -s`` to see the table of counts per source.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from oracle_cases import is_skill_dir, skill_files, skill_roots, sources

from skillbook.config.limits import Limits
from skillbook.diagnostics import CODES, Diagnostic
from skillbook.model import Source
from skillbook.pipeline.discovery.discover import DiscoverOptions, Discovery, Root, discover
from skillbook.pipeline.parse.skill_file import parse_skill_text

pytestmark = pytest.mark.corpus

#: Large enough that no corpus root is truncated (the test is about files, not limits).
UNLIMITED = 1_000_000
#: Codes that explain why a file has no description (so it cannot be a skill).
NO_DESCRIPTION_CODES = frozenset(
    {
        "parse.no-frontmatter",
        "parse.unterminated-frontmatter",
        "parse.empty-frontmatter",
        "parse.missing-description",
        "parse.binary",
        "parse.yaml-not-mapping",
    }
)
#: What parse_skill_text says when it caught one of its own exceptions (a bug).
PARSER_CRASH = "could not parse this file"


def corpus_roots(source_dir: Path) -> list[Path]:
    """Skill roots of a source, plus every skill folder nested in another skill folder.

    A root that is itself a skill yields only itself (spec §3.3 step 4), so the
    skill folders under it are loaded from roots of their own.
    """
    nested = [md.parent for md in skill_files(source_dir) if is_skill_dir(md.parent.parent)]
    return skill_roots(source_dir) + nested


def discover_source(source_dir: Path) -> Discovery:
    limits = Limits(max_candidates_per_root=UNLIMITED, max_skills_loaded_per_source=UNLIMITED)
    roots = [Root(Source.EXTRA, r) for r in corpus_roots(source_dir)]
    return discover(roots, options=DiscoverOptions(limits=limits))


@dataclass
class Tally:
    files: int = 0
    loaded: int = 0
    diagnosed: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    unexplained: list[str] = field(default_factory=list)


def _naming(diagnostics: tuple[Diagnostic, ...]) -> dict[Path, set[str]]:
    out: dict[Path, set[str]] = {}
    for d in diagnostics:
        if d.path is not None and d.code in CODES:
            out.setdefault(d.path, set()).add(d.code)
    return out


def test_every_corpus_skill_loads_or_is_diagnosed(corpus_dir: Path) -> None:
    """§12 Loading: a file that does not load is never dropped silently."""
    tallies: dict[str, Tally] = {}
    for name in sources(corpus_dir):
        source_dir = corpus_dir / name
        found = discover_source(source_dir)
        loaded = {s.file_path for s in found.loaded}
        naming = _naming(found.diagnostics)
        tally = tallies.setdefault(name, Tally())
        for md in skill_files(source_dir):
            tally.files += 1
            if md in loaded:
                tally.loaded += 1
                continue
            codes = naming.get(md, set()) | naming.get(md.parent, set())
            if codes:
                tally.diagnosed += 1
                tally.codes.update(codes)
            else:
                tally.unexplained.append(str(md.relative_to(corpus_dir)))
    table = _table(tallies)
    print("\n" + table)
    total = sum(t.files for t in tallies.values())
    unexplained = [p for t in tallies.values() for p in t.unexplained]
    assert total >= 390, f"expected the 390 files of the public corpus, found {total}\n{table}"
    assert not unexplained, (
        f"{len(unexplained)} SKILL.md neither loaded nor diagnosed:\n"
        + "\n".join(unexplained)
        + "\n"
        + table
    )
    assert sum(t.loaded for t in tallies.values()) > 0.9 * total, table


def _table(tallies: dict[str, Tally]) -> str:
    width = max(len(n) for n in tallies) if tallies else 6
    lines = [f"{'source':<{width}}  files  loaded  diagnosed  unexplained  codes (not loaded)"]
    for name, t in tallies.items():
        codes = ", ".join(f"{c}={n}" for c, n in sorted(t.codes.items()))
        lines.append(
            f"{name:<{width}}  {t.files:>5}  {t.loaded:>6}  {t.diagnosed:>9}  "
            f"{len(t.unexplained):>11}  {codes}"
        )
    sums = [sum(getattr(t, k) for t in tallies.values()) for k in ("files", "loaded", "diagnosed")]
    missing = sum(len(t.unexplained) for t in tallies.values())
    lines.append(f"{'total':<{width}}  {sums[0]:>5}  {sums[1]:>6}  {sums[2]:>9}  {missing:>11}")
    return "\n".join(lines)


def test_parse_accounts_for_every_corpus_file(corpus_dir: Path) -> None:
    """§12 Frontmatter: parsing never raises; a file gives a name and a description, or
    diagnostics that say which is missing and why."""
    problems: list[str] = []
    count = 0
    for md in skill_files(corpus_dir):
        count += 1
        rel = md.relative_to(corpus_dir)
        data = md.read_bytes()
        try:
            parsed = parse_skill_text(data, path=md)
            from_text = parse_skill_text(data.decode("utf-8", errors="replace"), path=md)
        except Exception as exc:  # the contract is "never raises": report, do not stop
            problems.append(f"{rel}: raised {type(exc).__name__}: {exc}")
            continue
        codes = {d.code for d in parsed.diagnostics}
        if any(PARSER_CRASH in d.message for d in parsed.diagnostics):
            problems.append(f"{rel}: parser crashed: {[d.message for d in parsed.diagnostics]}")
        if unregistered := codes - set(CODES):
            problems.append(f"{rel}: unregistered codes {sorted(unregistered)}")
        if not parsed.description and not codes & NO_DESCRIPTION_CODES:
            problems.append(f"{rel}: no description and no diagnostic saying why ({sorted(codes)})")
        if not parsed.name and "parse.missing-name" not in codes and parsed.description:
            problems.append(f"{rel}: no name and no parse.missing-name ({sorted(codes)})")
        if (parsed.name, parsed.description) != (from_text.name, from_text.description):
            problems.append(f"{rel}: bytes and str input parse differently")
        if any(d.path not in (None, md) for d in parsed.diagnostics):
            problems.append(f"{rel}: a diagnostic names another path")
    assert count >= 390, f"expected the 390 files of the public corpus, found {count}"
    assert not problems, "\n".join(problems)


def test_discovery_agrees_with_parse_on_the_corpus(corpus_dir: Path) -> None:
    """A file loads iff parse finds a description (or discover says why not), and the
    loaded skill carries the parsed name (or the folder name) and description."""
    problems: list[str] = []
    for name in sources(corpus_dir):
        found = discover_source(corpus_dir / name)
        by_path = {s.file_path: s for s in found.loaded}
        naming = _naming(found.diagnostics)
        for md in skill_files(corpus_dir / name):
            rel = md.relative_to(corpus_dir)
            parsed = parse_skill_text(md.read_bytes(), path=md)
            skill = by_path.get(md)
            if skill is None:
                discover_codes = {c for c in naming.get(md, set()) if c.startswith("discover.")}
                if parsed.description and not discover_codes:
                    problems.append(f"{rel}: has a description but did not load")
                continue
            if skill.description != parsed.description:
                problems.append(f"{rel}: description differs from parse")
            if skill.name != (parsed.name or md.parent.name.strip()):
                problems.append(f"{rel}: name {skill.name!r} vs parsed {parsed.name!r}")
            if skill.base_dir != md.parent:
                problems.append(f"{rel}: base dir {skill.base_dir}")
    assert not problems, "\n".join(problems)
