"""Proposers: ask an LLM (or any command) for an edit to one harness component."""
