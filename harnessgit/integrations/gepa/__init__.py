"""GEPA (gepa-ai/gepa): its runs recorded as candidates and records (owned by the recorder)."""
