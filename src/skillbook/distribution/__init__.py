"""Distribution: getting skills onto a machine and serving them (registry client and server, installers, sync, agents)."""
