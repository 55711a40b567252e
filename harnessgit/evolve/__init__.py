"""`harnessgit evolve`: GEPA's reflective loop with every step on the record (evolve.py)."""
