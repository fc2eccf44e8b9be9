"""skillbook: skills for LLM agents, the Python home of the OpenClaw skill system."""

__version__ = "0.1.0"
