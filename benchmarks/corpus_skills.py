"""The public corpus (``../shared/corpus``) as skills, for the selection benchmark and evals.

``corpus_roots()`` lists the folders that hold skill folders (a skill nested inside
another skill folder is loaded from its own folder); ``corpus_skills()`` discovers
them all with limits raised and keeps the first skill of each name, as one workspace
would. ``python benchmarks/corpus_skills.py > corpus.json`` prints a skillbook
config whose ``extraDirs`` are those roots, for ``skillbook --config corpus.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from skillbook.config.limits import Limits
from skillbook.model import Skill, Source
from skillbook.pipeline.discovery.discover import DiscoverOptions, Root, discover

CORPUS = (Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus").resolve()
UNLIMITED = 1_000_000


def corpus_roots(corpus: Path = CORPUS) -> list[Path]:
    roots: dict[Path, None] = {}
    for md in sorted(corpus.rglob("SKILL.md")):
        folder = md.parent
        nested = (folder.parent / "SKILL.md").is_file()
        roots[folder if nested else folder.parent] = None
    return list(roots)


def corpus_skills(corpus: Path = CORPUS) -> list[Skill]:
    limits = Limits(max_candidates_per_root=UNLIMITED, max_skills_loaded_per_source=UNLIMITED)
    found = discover(
        [Root(Source.EXTRA, r) for r in corpus_roots(corpus)],
        options=DiscoverOptions(limits=limits),
    )
    out: dict[str, Skill] = {}
    for skill in found.skills:
        out.setdefault(skill.name, skill)
    return list(out.values())


def corpus_config(corpus: Path = CORPUS) -> dict[str, object]:
    return {
        "skills": {
            "load": {"extraDirs": [str(r) for r in corpus_roots(corpus)]},
            "limits": {
                "maxCandidatesPerRoot": UNLIMITED,
                "maxSkillsLoadedPerSource": UNLIMITED,
            },
        }
    }


if __name__ == "__main__":
    print(json.dumps(corpus_config(), indent=2))
