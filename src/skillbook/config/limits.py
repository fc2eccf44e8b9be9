"""``skills.limits.*`` (spec §3.3): how much discovery scans, loads and the prompt shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillbook.config.file import LimitsConfig
    from skillbook.config.profile import Profile

__all__ = [
    "DEFAULT_MAX_CANDIDATES_PER_ROOT",
    "DEFAULT_MAX_SKILLS_IN_PROMPT",
    "DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE",
    "DEFAULT_MAX_SKILLS_PROMPT_CHARS",
    "DEFAULT_MAX_SKILL_FILE_BYTES",
    "Limits",
]

DEFAULT_MAX_CANDIDATES_PER_ROOT = 300
DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE = 200
DEFAULT_MAX_SKILLS_IN_PROMPT = 150
DEFAULT_MAX_SKILLS_PROMPT_CHARS = 30_000
DEFAULT_MAX_SKILL_FILE_BYTES = 256_000


@dataclass(frozen=True, slots=True)
class Limits:
    """``skills.limits.*``; the prompt limits are used by the catalog."""

    max_candidates_per_root: int = DEFAULT_MAX_CANDIDATES_PER_ROOT
    max_skills_loaded_per_source: int = DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE
    max_skills_in_prompt: int = DEFAULT_MAX_SKILLS_IN_PROMPT
    max_skills_prompt_chars: int = DEFAULT_MAX_SKILLS_PROMPT_CHARS
    max_skill_file_bytes: int = DEFAULT_MAX_SKILL_FILE_BYTES

    @classmethod
    def from_config(cls, given: LimitsConfig, profile: Profile | None = None) -> Limits:
        """``skills.limits`` with each key that is not set at its default (the prompt
        budget's default is the ``profile``'s)."""
        base = cls()
        if profile is not None:
            base = cls(max_skills_prompt_chars=profile.catalog.default_max_chars)
        return cls(
            max_candidates_per_root=_or(
                given.max_candidates_per_root, base.max_candidates_per_root
            ),
            max_skills_loaded_per_source=_or(
                given.max_skills_loaded_per_source, base.max_skills_loaded_per_source
            ),
            max_skills_in_prompt=_or(given.max_skills_in_prompt, base.max_skills_in_prompt),
            max_skills_prompt_chars=_or(
                given.max_skills_prompt_chars, base.max_skills_prompt_chars
            ),
            max_skill_file_bytes=_or(given.max_skill_file_bytes, base.max_skill_file_bytes),
        )


def _or(value: int | None, default: int) -> int:
    return default if value is None else value
