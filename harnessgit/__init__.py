"""harnessgit: version, review and optimise an LLM harness with git as the database."""

__version__ = "0.1.0"
