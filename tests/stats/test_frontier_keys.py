"""The frontier of GEPA's "objective", "hybrid" and "cartesian" frontier types: the
columns of `frontier_columns` with the valset means, against a real ``GEPAState`` of
each type and gepa's own removal and sampling, on random pools with frequent ties."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest
from gepa import gepa_utils
from gepa.core.state import GEPAState, ValsetEvaluation
from gepa.gepa_utils import select_program_candidate_from_pareto_front

from harnessgit.stats.frontier import sample_parent
from harnessgit.stats.frontier_arrays import frontier_of, row_means
from harnessgit.stats.frontier_keys import FRONTIER_TYPES, FrontierType, frontier_columns, objective_means

NAMES = ["accuracy", "brevity", "cost"]  # in name order: GEPA's order is the adapter's


def random_pool(rng: random.Random) -> tuple[list[list[float]], list[list[dict[str, float]]]]:
    """Scores and per-example objective scores on coarse grids, some programs repeated."""
    programs, instances = rng.randint(1, 10), rng.randint(1, 8)
    grid = rng.choice([[0.0, 1.0], [0.0, 0.5, 1.0], [0.1, 0.2, 0.3]])
    names = NAMES[: rng.randint(1, 3)]
    rows = [[rng.choice(grid) for _ in range(instances)] for _ in range(programs)]
    objectives = [
        [{name: rng.choice(grid) for name in names} for _ in range(instances)] for _ in range(programs)
    ]
    for _ in range(rng.randint(0, 2)):
        k = rng.randrange(programs)
        rows[k], objectives[k] = list(rows[0]), list(objectives[0])
    return rows, objectives


def gepa_state(
    rows: list[list[float]], objectives: list[list[dict[str, float]]], kind: FrontierType
) -> GEPAState[object, int]:
    def evaluation(k: int) -> ValsetEvaluation[object, int]:
        return ValsetEvaluation(
            outputs_by_val_id={},
            scores_by_val_id=dict(enumerate(rows[k])),
            objective_scores_by_val_id=dict(enumerate(objectives[k])),
        )

    state: GEPAState[object, int] = GEPAState({"p": "0"}, evaluation(0), frontier_type=kind)
    for k in range(1, len(rows)):
        state.update_state_with_new_program([0], {"p": str(k)}, evaluation(k), None, 0)
    return state


@pytest.mark.parametrize("kind", FRONTIER_TYPES)
def test_agrees_with_gepa_for_each_frontier_type(kind: FrontierType) -> None:
    rng = random.Random(29)
    for _ in range(300):
        rows, objectives = random_pool(rng)
        state = gepa_state(rows, objectives, kind)
        fronts, means = state.get_pareto_front_mapping(), state.per_program_tracked_scores
        instances = [str(j) for j in range(len(rows[0]))]
        scores = np.array(rows, dtype=np.float64)
        per_objective = [
            {name: tuple(example[name] for example in found) for name in found[0]} for found in objectives
        ]
        labels, columns = frontier_columns(kind, instances, scores, per_objective)
        assert len(labels) == len(fronts) == columns.shape[1]
        ids = [str(k) for k in range(len(rows))]
        frontier = frontier_of(ids, [None] * len(rows), labels, columns, row_means(scores))

        remove: Any = gepa_utils.remove_dominated_programs  # unannotated in gepa
        pruned = remove(fronts, means)
        weights = Counter(p for front in pruned.values() for p in front)
        assert {int(row.candidate): row.weight for row in frontier.rows} == dict(weights)
        assert [row.mean for row in frontier.rows] == [means[int(row.candidate)] for row in frontier.rows]
        seed = rng.randrange(1 << 30)
        expected = select_program_candidate_from_pareto_front(fronts, means, random.Random(seed))
        assert int(sample_parent(frontier, seed)) == expected


def test_objective_means_are_gepas_running_sums() -> None:
    # 0.1 + 0.2 + 0.3 summed left to right is 0.6000000000000001; fsum would say 0.6
    cube = np.array([[[0.1, 0.2, 0.3]], [[-0.0, -0.0, -0.0]]])
    assert objective_means(cube).tolist() == [[(0.0 + 0.1 + 0.2 + 0.3) / 3], [0.0]]
    state = GEPAState._aggregate_objective_scores({0: {"a": 0.1}, 1: {"a": 0.2}, 2: {"a": 0.3}})
    assert objective_means(cube)[0, 0] == state["a"]


@pytest.mark.parametrize(
    ("objectives", "message"),
    [
        ([], "0 candidates' objective scores for 1"),
        ([{}], "the same objectives"),
        ([{"a": (1.0,)}], "for 1 instances, not 2"),
    ],
)
def test_columns_refuse_uneven_objectives(
    objectives: list[dict[str, tuple[float, ...]]], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        frontier_columns("objective", ["i0", "i1"], np.zeros((1, 2)), objectives)


def test_two_candidates_with_different_objectives_are_refused() -> None:
    with pytest.raises(ValueError, match="the same objectives"):
        frontier_columns("hybrid", ["i0"], np.zeros((2, 1)), [{"a": (1.0,)}, {"b": (1.0,)}])
