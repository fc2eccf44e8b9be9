"""Validation: the Agent Skills (strict) rules, and why the loader skips a SKILL.md.

``validate`` (modes, ``validate_path``, ``validate_tree``), ``strict_rules`` (the
spec's rules), ``layout`` (a folder read as the loader reads it).
"""
