"""The reading pipeline: SKILL.md files in, catalog, status and slash commands out.

Stages, each a subpackage or module that may import only itself and earlier stages:
``cache`` → ``parse`` → ``discovery`` → ``gating`` → ``prompt`` → ``commands`` →
``snapshot``, ``lookup``, ``validation`` → ``book`` (``load``, ``Loader``, ``SkillBook``:
the stages run in order, with their caches kept between builds).
"""
