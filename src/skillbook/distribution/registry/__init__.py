"""Getting skills: a ClawHub-compatible registry client, git, folder and archive sources.

``refs`` (what a user names), ``endpoint`` and ``client`` (base URL, token, HTTP with
retries), ``api`` (the routes), ``staging`` (every source into a staged tree: ``tree``,
``gitsource``, ``archive_root``, ``clawhub_stage``), ``installer``, ``updater``,
``remove``, ``verify``, ``tracked`` (drift), ``workdir`` (the journal), ``lockfile``,
``origins``, ``pins``, ``backups``, ``trust``, ``lookalike``, ``discovery``,
``skillfiles``. :mod:`skillbook.distribution.fingerprint` is a small pure module with a
stable API that a registry server may import on its own.
"""
