"""What the frontier keeps a front for, by GEPA's frontier type (``frontier_type`` of
``gepa.optimize``; gepa/core/state.py ``_get_pareto_front_mapping``):

- ``instance`` (the default): one front per selection instance, on its score.
- ``objective``: one front per objective, on the candidate's mean score on that objective
  over the selection split (GEPA's ``prog_candidate_objective_scores``).
- ``hybrid``: both, the instances' fronts first, then the objectives'.
- ``cartesian``: one front per (instance, objective) pair, on that instance's score on
  that objective, instance by instance.

Whatever the type, GEPA removes dominated programs in order of their mean score on the
valset (``per_program_tracked_scores``), not of anything the fronts hold: the columns
built here go to `frontier_of` with those means.

Pure: score matrices in, columns out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from harnessgit.stats.frontier_arrays import frontier_of, row_means
from harnessgit.stats.frontier_types import Frontier

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

FrontierType = Literal["instance", "objective", "hybrid", "cartesian"]
FRONTIER_TYPES: tuple[FrontierType, ...] = ("instance", "objective", "hybrid", "cartesian")
# objective name -> one score per instance, in the pool's instance order
Objectives = dict[str, tuple[float, ...]]


def frontier_columns(
    frontier_type: FrontierType,
    instances: Sequence[str],
    scores: NDArray[np.float64],
    objectives: Sequence[Objectives],
) -> tuple[list[str], NDArray[np.float64]]:
    """The fronts' names and a score matrix with a column per front, a row per
    candidate. ``scores``: candidates x instances; ``objectives``: one per candidate
    (ignored for ``instance``), each with the same objectives. Objectives are taken in
    name order (GEPA takes them in the order the adapter gives them: the frontier is the
    same, the order of candidates first seen can differ, which decides only between
    candidates of exactly equal mean score)."""
    import numpy as np

    if frontier_type == "instance":
        return list(instances), scores
    if not objectives or len(objectives) != scores.shape[0]:
        raise ValueError(f"{len(objectives)} candidates' objective scores for {scores.shape[0]} candidates")
    names = sorted(objectives[0])
    if not names or any(sorted(found) != names for found in objectives):
        raise ValueError("every candidate needs scores on the same objectives")
    # candidate x objective x instance
    cube = np.array([[found[name] for name in names] for found in objectives], dtype=np.float64)
    if cube.shape[2] != len(instances):
        raise ValueError(f"objective scores for {cube.shape[2]} instances, not {len(instances)}")
    if frontier_type == "cartesian":
        labels = [f"{name}@{instance}" for instance in instances for name in names]
        return labels, cube.transpose(0, 2, 1).reshape(len(objectives), -1)
    means = objective_means(cube)
    labels = [f"objective:{name}" for name in names]
    if frontier_type == "objective":
        return labels, means
    if frontier_type == "hybrid":
        return [*instances, *labels], np.concatenate([scores, means], axis=1)
    raise ValueError(f"unknown frontier type {frontier_type!r}")


def frontier_by_type(
    frontier_type: FrontierType,
    ids: list[str],
    parents: list[str | None],
    instances: Sequence[str],
    scores: NDArray[np.float64],
    objectives: Sequence[Objectives],
) -> Frontier:
    """GEPA's frontier of this type: fronts on `frontier_columns`, dominated candidates
    removed in order of each candidate's mean score on the instances."""
    labels, columns = frontier_columns(frontier_type, instances, scores, objectives)
    means = None if frontier_type == "instance" else row_means(scores)
    return frontier_of(ids, parents, labels, columns, means)


def objective_means(cube: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each candidate's mean per objective, as GEPA's state computes it
    (``_aggregate_objective_scores``: a running sum from 0.0 in instance order, divided
    by the count), so that two candidates tie on an objective exactly when they do in
    GEPA."""
    total = cube[:, :, 0] + 0.0
    for column in range(1, cube.shape[2]):
        total = total + cube[:, :, column]
    means: NDArray[np.float64] = total / cube.shape[2]
    return means
