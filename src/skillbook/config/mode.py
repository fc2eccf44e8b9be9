"""The spec modes: which rules decide what a skill is (``--mode``, ``skills.load.mode``).

``openclaw`` loads exactly what OpenClaw loads; ``mixed`` and ``legacy`` also load
standalone ``*.md`` files of a root; ``strict`` loads like ``openclaw`` and then
excludes skills that break the Agent Skills rules (:mod:`skillbook.pipeline.validation.validate`).
Every stage, the config schema and the CLI take this one type; a plain string with
one of the values is accepted wherever a mode is passed in.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = ["DEFAULT_MODE", "MODE_NAMES", "Mode"]


class Mode(enum.StrEnum):
    OPENCLAW = "openclaw"
    MIXED = "mixed"
    LEGACY = "legacy"
    STRICT = "strict"

    @classmethod
    def of(cls, value: Mode | str) -> Mode:
        """``value`` as a :class:`Mode`; raises ``ValueError`` naming the known modes."""
        try:
            return cls(value)
        except ValueError:
            raise ValueError(
                f"unknown mode {value!r}; expected one of {', '.join(MODE_NAMES)}"
            ) from None

    @property
    def loads_standalone(self) -> bool:
        """Whether standalone ``*.md`` files of a root are skills in this mode."""
        return self is Mode.MIXED or self is Mode.LEGACY

    @property
    def is_strict(self) -> bool:
        """Whether skills that break the Agent Skills rules are excluded."""
        return self is Mode.STRICT


#: The mode names in the order ``--help`` lists them.
MODE_NAMES: Final[tuple[str, ...]] = tuple(m.value for m in Mode)
#: Loading follows OpenClaw unless told otherwise.
DEFAULT_MODE: Final = Mode.OPENCLAW
