"""Caching, the pipeline's first stage: every cache and memo that keeps builds cheap.

``parse_store`` (+ ``parse_codec``: parsed files on disk between processes),
``root_memo`` (a root's scan while its files' ``stat`` holds), ``merge_memo`` (the last merge),
``skill_memo`` (values per skill object), ``change_hint`` (what a watcher saw change);
``result_store`` (whole command outputs) with ``footprint`` (what a build read, and
whether it still holds) and ``scan_reads`` (one root's reads, for the footprint).
A cache never changes a result: each checks what it depended on.
"""
