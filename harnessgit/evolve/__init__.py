"""`harnessgit evolve`: GEPA's reflective loop with every step on the record."""

from harnessgit.evolve.loop import evolve
from harnessgit.evolve.state import Budget, EvolveReport

__all__ = ["Budget", "EvolveReport", "evolve"]
