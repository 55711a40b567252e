"""Hooks into other optimisers' runs, written against `harnessgit.api` (docs/gepa.md)."""
