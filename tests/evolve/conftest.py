"""The evolve tests' repository fixture (defined in evolve_fixtures, which the CLI tests import too)."""

from tests.evolve.evolve_fixtures import triage

__all__ = ["triage"]
