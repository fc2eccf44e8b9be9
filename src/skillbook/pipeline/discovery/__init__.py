"""Discovery: skill roots, sources and plugins into one merged list of skills.

``sources`` (the :class:`~skillbook.pipeline.discovery.sources.SkillSource` seam and the
``skillbook.sources`` factories), ``discover`` (roots into sources, sources merged),
``root_scanner`` with ``root_layouts`` and ``root_containment`` (which folders of a
root are skills), ``recursive_scan`` (2026.9's scan), ``skill_reader`` (one folder into
a :class:`~skillbook.model.Skill`), ``plugins`` (+ ``plugin_discovery``,
``plugin_manifest``), ``learned`` (where learned skills live).
"""
