"""Slash commands: command specs, invocation of a chat message, dispatch, chat-platform menus."""
