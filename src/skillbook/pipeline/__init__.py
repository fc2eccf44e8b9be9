"""The reading pipeline: parse, discovery, gating, the prompt catalog and slash commands, and the book that wires them."""
