"""Configuration: what a run reads before any skill.

``file`` (``openclaw.json``/``skillbook.json`` into :class:`~skillbook.config.file.Config`)
with its ``schema``, ``source_sections``, ``errors`` and ``checks``; ``paths`` (homes,
state and skill folders, which config file is read); ``run_settings`` (a run's paths,
config, workspace, agent and mode, each with its reason); ``agent_scope`` and
``skill_filter`` (agent ids, workspaces, allowlists); ``profile`` (the rules in which
OpenClaw releases differ), ``mode`` and ``limits``; ``experience`` (``skills.experience``).
"""
