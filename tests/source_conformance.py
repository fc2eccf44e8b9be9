"""The contract every skill source keeps (:class:`SourceConformance`), shared by the
sources' tests (``tests/pipeline/discovery/test_sources.py``, ``tests/mcp/test_source.py``);
not a test module: a subclass named ``Test...`` provides the ``source`` fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbook.diagnostics import CODES, Diagnostic
from skillbook.pipeline.discovery.sources import Precedence, SkillSource, SourceLoad


class SourceConformance:
    """What every :class:`SkillSource` promises; subclasses provide ``source``."""

    @pytest.fixture
    def source(self, tmp_path: Path) -> SkillSource:
        raise NotImplementedError

    def test_is_a_skill_source(self, source: SkillSource) -> None:
        assert isinstance(source, SkillSource)
        assert isinstance(source.label, str) and source.label
        assert isinstance(source.precedence, Precedence)

    def test_load_gives_labelled_skills_and_registered_diagnostics(
        self, source: SkillSource
    ) -> None:
        got = source.load()
        assert isinstance(got, SourceLoad)
        assert got.skills, "the fixture must hold at least one skill"
        assert all(s.source == source.label for s in got.skills)
        assert all(isinstance(d, Diagnostic) and d.code in CODES for d in got.diagnostics)

    def test_loading_twice_gives_the_same_skills(self, source: SkillSource) -> None:
        first, second = source.load(), source.load()
        assert [(s.name, s.file_path) for s in first.skills] == [
            (s.name, s.file_path) for s in second.skills
        ]
