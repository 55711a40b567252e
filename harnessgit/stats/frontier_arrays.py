"""The frontier computed on a score matrix, for pools of thousands of programs
(`harnessgit.stats.frontier` has the rule and the plain-Python path, `frontier_types`
the results).

The same answer as the rule read step by step, without a Python loop over 20,000
programs x 300 instances: each instance's front is a boolean row; a candidate can only
be kept by a front where it comes last in gepa's removal order (ascending mean, ties in
order of first appearance), so every candidate that is no front's last is dropped, and
only the lasts (at most one per instance) are checked in order. A front's set, whose
CPython iteration order gepa reads, is built only where that order decides something.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from itertools import groupby
from typing import TYPE_CHECKING, overload

from harnessgit.stats.frontier_types import Frontier, FrontierRow, InstanceFront

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


def frontier_of(
    ids: list[str],
    parents: list[str | None],
    instances: list[str],
    scores: NDArray[np.float64],
    means: NDArray[np.float64] | None = None,
) -> Frontier:
    """`compute_frontier` on a complete score matrix (a row per candidate in pool order,
    a column per instance), checked as `ScorePool` checks a pool: what `frontier` hands
    over at 20,000 candidates x 300 instances without making 6 million Python floats.

    ``means``: each candidate's mean score, which orders gepa's removal of dominated
    candidates, when the columns are not the instances themselves. GEPA's "objective",
    "hybrid" and "cartesian" frontier types keep fronts per objective, or per instance
    and objective, and still remove dominated programs in order of their mean valset
    score (gepa/core/state.py ``_get_pareto_front_mapping``, gepa_utils.py
    ``remove_dominated_programs``); `harnessgit.gate.frontier_keys` builds such columns."""
    import numpy as np

    if not instances or not ids:
        raise ValueError("a pool needs at least one instance and one candidate")
    if scores.shape != (len(ids), len(instances)):
        raise ValueError(f"{scores.shape} scores for {len(ids)} candidates x {len(instances)} instances")
    if not np.isfinite(scores).all():
        raise ValueError("a score is not a finite number")
    if means is not None and means.shape != (len(ids),):
        raise ValueError(f"{means.shape} means for {len(ids)} candidates")
    fronts = _Fronts(scores)
    means = row_means(scores) if means is None else means
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


def row_means(scores: NDArray[np.float64]) -> NDArray[np.float64]:
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
