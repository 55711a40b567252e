"""The statistics behind every decision: pure, numbers in and numbers out.

Nothing in this package imports the store, GitPython, pydantic or the configuration
(tests/stats/test_pure.py imports each module in a fresh interpreter to keep it so):
`pairing` (per-instance means, paired scores), `decision` (the gate's comparison,
alpha spending, detectable effect, verdict), `bootstrap` and `signtest` (its two
tests), `distributions` (exact tails) and `frontier` (GEPA's Pareto frontier).
"""
