"""Parse: SKILL.md bytes into a ParsedSkillFile (frontmatter, YAML, the line parser, the manifest)."""
