"""What a running agent uses: sessions, the watcher, tools, approval, the agent loop, models.

``session`` (the current book, refreshed by version or change; ``reload_report``),
``watch`` (+ ``_watch_parts``, ``_watch_journal``: file changes to reloads);
``tools`` (``read`` and ``exec``; ``_proc`` runs a command, ``process_group`` ends it),
``find_skills`` (the selection tool), ``env`` (a skill's environment), ``secrets``
(``apiKey`` refs); ``approval`` and ``exec_gate`` (whether a model's command runs);
``agent`` (the loop), ``turn`` (its events and results), ``recording`` (the recorder
seam); ``providers`` (chat models); ``trigger_eval`` (do the right skills trigger).
It never imports the experience engine, only the recorder protocol.
"""
