"""The Pareto frontier of candidates on the selection split (GEPA's rule), and
GEPA's parent sampling from it.

Pure: a complete score matrix in, frozen models out; no git, no I/O.

The rule (GEPA, arXiv 2507.19457, sec. 3 and Algorithm 2; gepa's
``gepa_utils.remove_dominated_programs``): for each selection instance keep the
candidates with the best score, ties kept (an instance's *front*). Then remove
dominated candidates: take the candidates that lead at least one instance in
ascending order of mean score, and drop one if every front it belongs to still
holds another candidate that has not been dropped. A candidate is on the frontier
when it survives; it *leads* the instances whose pruned front holds it, and GEPA
samples the next parent with probability proportional to the number of instances
led.

Matching gepa exactly, including ties, for pools of any size (tests/stats/test_frontier.py
compares with gepa's own code and a real ``GEPAState`` on random matrices of 1-60
programs):

- Means are ``sum(row) / len(row)`` summed in instance order, as gepa's state
  computes them, so that two candidates tie on the mean exactly when they do in gepa.
- Each instance's front is a Python ``set`` of pool indices built by the operations
  GEPA's state performs as programs arrive (a new best replaces it with ``{i}``, a tie
  adds ``i``), then copied as ``get_pareto_front_mapping`` copies it. gepa reads its
  fronts in the set's iteration order: the order in which candidates first appear
  (which breaks ties of the mean sort) and the order of the sampling tickets. That
  order is CPython's hash-table layout, ascending index only for pools of up to 8
  programs; the same operations on the same ints give the same layout, so harnessgit
  reproduces it rather than assuming it. Give ``candidates`` in creation order (base
  first), as gepa numbers its programs.
- gepa restarts its scan after every removal. A single pass is equivalent: dropping a
  candidate only removes cover from the fronts, so one that could not be dropped
  earlier in the scan still cannot.
- Sampling: gepa draws ``rng.choice`` from a list holding each frontier candidate
  once per instance led, in order of first appearance in the pruned fronts (each
  pruned front a set comprehension over its front, iterated as gepa iterates it). The
  frontier rows keep that order, so `sample_parent(frontier, seed)` draws what
  ``select_program_candidate_from_pareto_front(..., random.Random(seed))`` draws, with
  the same odds (weight = instances led) and, for a seed, the same parent.

The pool must be complete (every candidate scored on every instance): GEPA's
validation scores are complete, and a missing score would silently drop a
candidate from that instance's front. The caller restricts the pool to evaluations
with one evaluator fingerprint, manifest hash and model.
"""

from __future__ import annotations

import math
import random

from harnessgit.stats.frontier_arrays import frontier_of
from harnessgit.stats.frontier_types import Frontier, FrontierRow, InstanceFront, ScorePool

# Pools up to this many scores are computed in plain Python: `status` and evolve's small
# pools then do not import numpy (about 90 ms), and below it Python is as fast.
SMALL_POOL = 100_000


def compute_frontier(pool: ScorePool) -> Frontier:
    if len(pool.candidates) * len(pool.instances) <= SMALL_POOL:
        return _step_by_step(pool)
    import numpy as np

    scores = np.array([c.scores for c in pool.candidates], dtype=np.float64)
    return frontier_of(
        [c.id for c in pool.candidates], [c.parent for c in pool.candidates], pool.instances, scores
    )


def _step_by_step(pool: ScorePool) -> Frontier:
    """The rule as the module docstring reads it, in plain Python: each front a set built
    as GEPA's state builds it, every candidate seen in the fronts scanned once in
    ascending mean (ties in order of first appearance), dropped when each of its fronts
    still has another survivor. `frontier_of` gives the same answer from arrays, for
    pools of thousands (tests/stats/test_frontier.py holds them to each other and to gepa)."""
    candidates = pool.candidates
    means = [sum(c.scores) / len(c.scores) for c in candidates]
    best = [-math.inf] * len(pool.instances)
    building: list[set[int]] = [set() for _ in pool.instances]
    for i, candidate in enumerate(candidates):
        for column, score in enumerate(candidate.scores):
            if score > best[column]:
                best[column], building[column] = score, {i}
            elif score == best[column]:
                building[column].add(i)
    fronts = [set(front) for front in building]  # the copy get_pareto_front_mapping hands out
    first_seen: dict[int, None] = {}  # an ordered set
    for front in fronts:
        first_seen.update(dict.fromkeys(front))
    fronts_of: dict[int, list[int]] = {i: [] for i in first_seen}
    for f, front in enumerate(fronts):
        for i in front:
            fronts_of[i].append(f)
    alive = [len(front) for front in fronts]  # survivors per front
    dropped: set[int] = set()
    for i in sorted(first_seen, key=lambda i: means[i]):  # stable: ties keep first appearance
        if all(alive[f] >= 2 for f in fronts_of[i]):
            dropped.add(i)
            for f in fronts_of[i]:
                alive[f] -= 1
    kept = [{i for i in front if i not in dropped} for front in fronts]
    led: dict[int, int] = {}
    for pruned in kept:
        for i in pruned:
            led[i] = led.get(i, 0) + 1
    ids = [c.id for c in candidates]
    return Frontier(
        rows=[
            FrontierRow(
                candidate=ids[i], parent=candidates[i].parent, mean=means[i], instances_led=n, weight=n
            )
            for i, n in led.items()
        ],
        fronts=[
            InstanceFront(
                instance=instance,
                best_score=best[column],
                best=[ids[i] for i in sorted(fronts[column])],
                kept=[ids[i] for i in sorted(kept[column])],
            )
            for column, instance in enumerate(pool.instances)
        ],
        dominated=[ids[i] for i in sorted(dropped)],
        never_best=[ids[i] for i in range(len(candidates)) if i not in first_seen],
    )


def sample_parent(frontier: Frontier, seed: int) -> str:
    """Draw a parent with probability proportional to the instances it leads
    (GEPA's rule), reproducibly for a seed."""
    if not frontier.rows:
        raise ValueError("the frontier is empty")
    tickets = [row.candidate for row in frontier.rows for _ in range(row.weight)]
    return random.Random(seed).choice(tickets)
