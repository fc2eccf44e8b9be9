"""Configuration: the config file and its schema, homes and paths, the settings of a run, agent scope, compatibility profiles."""
