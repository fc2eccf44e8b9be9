"""The prompt catalog: the skills section the model sees, within its budget.

``skills_section`` (the full and compact formats, the section, ``CatalogMemo``),
``budget`` (2026.9's bounded catalog), ``entries`` (each entry's shown path and text,
reused while unchanged), ``home_paths`` (``~/`` compaction).
"""
