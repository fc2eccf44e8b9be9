"""Discovery: skill roots, sources, plugins and learned skills into one merged list of skills."""
