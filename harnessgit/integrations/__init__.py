"""Integrations with optimisers people already run (GEPA): their runs recorded in git."""
