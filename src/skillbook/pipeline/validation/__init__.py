"""Validation: the Agent Skills rules and why the loader skips a SKILL.md."""
