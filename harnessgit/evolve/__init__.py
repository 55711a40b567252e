"""`harnessgit evolve`: GEPA's reflective loop with every step on the record."""

from harnessgit.evolve.loop import Budget, EvolveReport, IterationOutcome, evolve

__all__ = ["Budget", "EvolveReport", "IterationOutcome", "evolve"]
