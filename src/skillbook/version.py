"""skillbook's version, one value below every part that names it.

The CLI's ``--version``, the registry client's User-Agent, SARIF reports, the MCP
server's ``serverInfo`` and the parse cache's key all read it here, so none of them
imports the package's face from below. ``pyproject.toml`` states the same number.
"""

__version__ = "0.1.0"
