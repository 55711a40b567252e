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
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


@dataclass(frozen=True)
class PoolCandidate:
    id: str
    parent: str | None  # None for the base
    scores: list[float]  # one per pool instance, in pool order


@dataclass(frozen=True)
class ScorePool:
    """Candidates by selection instances. ``candidates`` in pool order: the base tip
    first, then candidates in creation order (gepa's program index)."""

    instances: list[str]
    candidates: list[PoolCandidate]

    def __post_init__(self) -> None:
        if not self.instances or not self.candidates:
            raise ValueError("a pool needs at least one instance and one candidate")
        if len(set(self.instances)) != len(self.instances):
            raise ValueError("instance ids must be unique")
        ids = [c.id for c in self.candidates]
        if len(set(ids)) != len(ids):
            raise ValueError("candidate ids must be unique")
        for candidate in self.candidates:
            if len(candidate.scores) != len(self.instances):
                raise ValueError(
                    f"candidate {candidate.id} has {len(candidate.scores)} scores for "
                    f"{len(self.instances)} instances: the pool must be complete"
                )
            if not all(map(math.isfinite, candidate.scores)):
                raise ValueError(f"candidate {candidate.id} has a score that is not a finite number")


@dataclass(frozen=True)
class InstanceFront:
    instance: str
    best_score: float
    best: list[str]  # every candidate with the best score, in pool order
    kept: list[str]  # those that survive dominated-candidate removal


@dataclass(frozen=True)
class FrontierRow:
    candidate: str
    parent: str | None
    mean: float
    instances_led: int  # instances whose pruned front holds this candidate
    weight: int  # GEPA's sampling weight: the instances led


@dataclass(frozen=True)
class Frontier:
    # Frontier candidates in GEPA's sampling order (first appearance in the pruned
    # fronts); sort a copy for display, `sample_parent` relies on this order.
    rows: list[FrontierRow]
    # One per instance, in pool order; left out of `harnessgit frontier --json`, which
    # would otherwise repeat every instance's scores.
    # Built when read: `frontier` and evolve read only how many there are, and at
    # 20,000 candidates x 300 instances building them all took ~0.1 s.
    fronts: Sequence[InstanceFront] = field(metadata={"json": False})
    dominated: list[str]  # led an instance but every front they lead is covered
    never_best: list[str]  # best on no instance

    @property
    def members(self) -> list[str]:
        return [row.candidate for row in self.rows]


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


def frontier_of(
    ids: list[str], parents: list[str | None], instances: list[str], scores: NDArray[np.float64]
) -> Frontier:
    """`compute_frontier` on a complete score matrix (a row per candidate in pool order,
    a column per instance), checked as `ScorePool` checks a pool: what `frontier` hands
    over at 20,000 candidates x 300 instances without making 6 million Python floats."""
    import numpy as np

    if not instances or not ids:
        raise ValueError("a pool needs at least one instance and one candidate")
    if scores.shape != (len(ids), len(instances)):
        raise ValueError(f"{scores.shape} scores for {len(ids)} candidates x {len(instances)} instances")
    if not np.isfinite(scores).all():
        raise ValueError("a score is not a finite number")
    fronts = _Fronts(scores)
    means = _row_means(scores)
    dropped = fronts.dropped(means)
    alive: NDArray[np.bool_] = np.asarray(fronts.on.any(axis=0))
    alive[sorted(dropped)] = False
    kept = [fronts.pruned(column, alive) for column in range(len(instances))]
    led: dict[int, int] = {}
    for pruned in kept:
        for i in pruned:
            led[i] = led.get(i, 0) + 1
    names = np.array(ids, dtype=object)
    rows = [
        FrontierRow(candidate=ids[i], parent=parents[i], mean=float(means[i]), instances_led=n, weight=n)
        for i, n in led.items()
    ]

    def front(column: int) -> InstanceFront:
        members = fronts.members(column)
        return InstanceFront(
            instance=instances[column],
            best_score=float(scores[members[0], column]),
            best=names[members].tolist(),
            kept=[ids[i] for i in sorted(kept[column])],
        )

    return Frontier(
        rows=rows,
        fronts=_Lazy(len(instances), front),
        dominated=[ids[i] for i in sorted(dropped)],
        never_best=names[~fronts.on.any(axis=0)].tolist(),
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


class _Lazy(Sequence[InstanceFront]):
    """A sequence whose items are made on first read."""

    def __init__(self, length: int, make: Callable[[int], InstanceFront]) -> None:
        self._length, self._make = length, make
        self._made: dict[int, InstanceFront] = {}

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> InstanceFront: ...
    @overload
    def __getitem__(self, index: slice) -> list[InstanceFront]: ...
    def __getitem__(self, index: int | slice) -> InstanceFront | list[InstanceFront]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if not -self._length <= index < self._length:
            raise IndexError(index)
        index %= self._length
        if index not in self._made:
            self._made[index] = self._make(index)
        return self._made[index]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


class _Fronts:
    """Each instance's front (the candidates with its best score), and the order gepa
    iterates it in. That order is a CPython set's (module docstring), so it is had by
    building the set as GEPA's state builds it, but only for the fronts whose order
    decides something (a tie on the mean between candidates first seen there, or a
    pruned front of two or more), not for all 300 fronts of 20,000 candidates."""

    def __init__(self, scores: NDArray[np.float64]) -> None:
        import numpy as np

        self.on = np.ascontiguousarray((scores == scores.max(axis=0)).T)  # instance x candidate
        # Where each candidate is first seen: the first front holding it.
        self.first = np.where(self.on.any(axis=0), self.on.argmax(axis=0), len(self.on))
        self._members: dict[int, NDArray[np.intp]] = {}
        self._orders: dict[int, dict[int, int]] = {}

    def members(self, column: int) -> NDArray[np.intp]:
        """The front's candidates, ascending."""
        if column not in self._members:
            import numpy as np

            self._members[column] = np.flatnonzero(self.on[column])
        return self._members[column]

    def order(self, column: int) -> dict[int, int]:
        """candidate -> its place in the front as gepa iterates it: the set GEPA's state
        holds (a new best starts it, each tie is added, in pool order), then copied as
        ``get_pareto_front_mapping`` copies it."""
        if column not in self._orders:
            front = set(set(self.members(column).tolist()))
            self._orders[column] = {i: place for place, i in enumerate(front)}
        return self._orders[column]

    def latest(self, candidates: NDArray[np.intp], means: NDArray[np.float64]) -> int:
        """The candidate that comes last in gepa's removal order (ascending mean, ties in
        order of first appearance in the fronts)."""
        theirs = means[candidates]
        top = candidates[theirs == theirs.max()]
        seen = self.first[top]
        tied: list[int] = top[seen == seen.max()].tolist()
        if len(tied) > 1:
            order = self.order(int(self.first[tied[0]]))
            tied = [max(tied, key=order.__getitem__)]
        return tied[0]

    def dropped(self, means: NDArray[np.float64]) -> set[int]:
        """gepa's removal of dominated candidates, in its order (ascending mean), computed
        from the few candidates it can keep. A candidate is kept only when, at its turn, it
        is the last survivor of one of its fronts; the candidates after it in the order
        are still there, so that front's last candidate in the order is the only one it
        can keep. So every candidate that is no front's last is dropped, and the lasts (at
        most one per instance) are kept or dropped in their order: kept when one of the
        fronts it is last of holds no other kept candidate."""
        import numpy as np

        last_of: dict[int, list[int]] = {}
        for column in range(len(self.on)):
            last = self.latest(self.members(column), means)
            last_of.setdefault(last, []).append(column)
        kept: list[int] = []
        for i in self._in_order(list(last_of), means):
            others = [k for k in kept if k != i]
            if any(not self.on[column, others].any() for column in last_of[i]):
                kept.append(i)
        seen = set(np.flatnonzero(self.on.any(axis=0)).tolist())
        return seen - set(kept)

    def _in_order(self, candidates: list[int], means: NDArray[np.float64]) -> list[int]:
        """``candidates`` in gepa's removal order; a front's set is built only to order
        candidates that tie on the mean and are first seen in that front."""
        ranked = sorted(candidates, key=lambda i: (means[i], self.first[i]))
        groups = [list(group) for _, group in groupby(ranked, key=lambda i: (means[i], self.first[i]))]
        return [
            i
            for group in groups
            for i in (
                group
                if len(group) == 1
                else sorted(group, key=self.order(int(self.first[group[0]])).__getitem__)
            )
        ]

    def pruned(self, column: int, alive: NDArray[np.bool_]) -> set[int]:
        """The front without the dropped candidates, as gepa builds it (a set
        comprehension over the front, so inserted in the front's order)."""
        members = self.members(column)
        survivors = members[alive[members]].tolist()
        if len(survivors) > 1:
            survivors.sort(key=self.order(column).__getitem__)
        return {i for i in survivors}


def _row_means(scores: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each row's ``sum(row) / len(row)`` with Python's own float operations, so that
    two candidates tie on the mean exactly when they do in gepa: a running sum in
    column order before Python 3.12, Neumaier's compensated sum from 3.12 on (what
    ``sum`` of floats does there), each vectorised over the candidates."""
    import numpy as np

    columns = np.ascontiguousarray(scores.T)
    total: NDArray[np.float64] = columns[0] + 0.0  # sum starts from the int 0: 0 + -0.0 is 0.0
    if sys.version_info < (3, 12):
        for column in columns[1:]:
            total = total + column
        running: NDArray[np.float64] = total / scores.shape[1]
        return running
    compensation = np.zeros_like(total)
    for column in columns[1:]:
        moved = total + column
        compensation += np.where(
            np.abs(total) >= np.abs(column), (total - moved) + column, (column - moved) + total
        )
        total = moved
    finite = (compensation != 0) & np.isfinite(compensation)
    means: NDArray[np.float64] = np.where(finite, total + compensation, total) / scores.shape[1]
    return means


def sample_parent(frontier: Frontier, seed: int) -> str:
    """Draw a parent with probability proportional to the instances it leads
    (GEPA's rule), reproducibly for a seed."""
    if not frontier.rows:
        raise ValueError("the frontier is empty")
    tickets = [row.candidate for row in frontier.rows for _ in range(row.weight)]
    return random.Random(seed).choice(tickets)
