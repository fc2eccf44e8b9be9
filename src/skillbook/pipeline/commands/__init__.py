"""Slash commands: specs, a chat message's invocation, dispatch, chat-platform menus.

``specs`` (command names and descriptions from skills and bundle commands),
``bundle_commands`` (Claude bundles' ``commands/*.md``), ``invocation`` (a message into
an :class:`~skillbook.pipeline.commands.invocation.Invocation`), ``dispatch``
(``commandExec`` and the dispatch kind), ``channels`` (Telegram and Discord menus).
"""
