"""Parse: SKILL.md bytes into a ParsedSkillFile; pure, never raises on a bad file.

``skill_file`` runs the steps: ``text`` (bytes to text, the frontmatter block),
``frontmatter`` (+ ``frontmatter_rules``; the YAML core schema in ``yaml_core``, its
fast paths ``yaml_simple`` and ``yaml_flow``, OpenClaw's ``line_parser``),
``invocation_policy`` (the §2.4 keys), ``manifest`` (+ ``url``, ``json_readback``: the
``metadata`` JSON5 into :class:`~skillbook.model.SkillMetadata`).
"""
