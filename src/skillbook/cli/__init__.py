"""The ``skillbook`` command line: click commands that call one library function each.

``entry`` is the executable (``--version`` and a cached ``prompt`` answered before click
loads), ``app`` the root group with the small commands; bigger commands live in
``<name>_cmd`` modules, loaded on first use. ``context`` (global options, settings,
output and errors) and the other helpers sit below the commands.
"""
