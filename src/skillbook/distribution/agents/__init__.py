"""Skills for other coding agents: the ``skills`` CLI's table of agents and its folder layout.

:mod:`~skillbook.distribution.agents.table` lists the agents and where each reads skills;
:mod:`~skillbook.distribution.agents.layout` plans and places a skill for a set of them;
:mod:`~skillbook.distribution.agents.ops` installs (from the sources of
:mod:`~skillbook.distribution.agents.sources`), lists and removes;
:mod:`~skillbook.distribution.agents.update` updates; ``rows``, ``lock`` (the project's
``skills-lock.json``) and ``globallock`` (the ``skills`` CLI's global lock) are what
they show and record; ``placing`` is what install and update share around placing.
This ``__init__`` holds :class:`AgentsError`.
"""

from __future__ import annotations

from skillbook.errors import SkillbookError


class AgentsError(SkillbookError):
    """A refused ``--for`` operation, with a stable code (``agents.*``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
