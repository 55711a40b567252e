"""The frontier: GEPA's per-instance fronts, dominated-candidate removal and sampling.

Pure: no git. The agreement tests run gepa's own code (a dev dependency) on random
score matrices with frequent ties and require exactly the same answer.
"""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from gepa.core.state import GEPAState, ValsetEvaluation
from gepa.gepa_utils import (
    find_dominator_programs,
    remove_dominated_programs,
    select_program_candidate_from_pareto_front,
)

from harnessgit.stats.frontier import compute_frontier, sample_parent
from harnessgit.stats.frontier_arrays import frontier_of
from harnessgit.stats.frontier_types import Frontier, PoolCandidate, ScorePool


def pool_of(rows: list[list[float]], parents: list[str | None] | None = None) -> ScorePool:
    parents = parents or [None] + ["c0"] * (len(rows) - 1)
    return ScorePool(
        instances=[f"i{j}" for j in range(len(rows[0]))],
        candidates=[
            PoolCandidate(id=f"c{k}", parent=parent, scores=row)
            for k, (row, parent) in enumerate(zip(rows, parents, strict=True))
        ],
    )


def test_hand_example() -> None:
    # i0 i1 i2 i3
    rows = [
        [0.0, 0.0, 1.0, 0.0],  # c0 base: leads i2 with c2
        [1.0, 0.0, 0.0, 0.0],  # c1: leads i0 alone
        [0.0, 1.0, 1.0, 0.0],  # c2: leads i1 alone, i2 with c0
        [0.0, 0.0, 0.0, 0.0],  # c3: never best except the all-zero i3 (with everyone)
    ]
    frontier = compute_frontier(pool_of(rows))
    # i3's front is everyone. Ascending means: c3 (0), then c0, c1 (0.25), c2 (0.5).
    # c3: its only front i3 has others -> dropped. c0: i2 still has c2, i3 has c1, c2
    # -> dropped. c1 holds i0 alone, c2 holds i1 alone -> kept.
    assert frontier.members == ["c1", "c2"]
    assert frontier.dominated == ["c0", "c3"]
    assert frontier.never_best == []
    kept = {front.instance: front.kept for front in frontier.fronts}
    assert kept == {"i0": ["c1"], "i1": ["c2"], "i2": ["c2"], "i3": ["c1", "c2"]}
    best = {front.instance: front.best for front in frontier.fronts}
    assert best["i3"] == ["c0", "c1", "c2", "c3"]
    rows_by_id = {row.candidate: row for row in frontier.rows}
    assert rows_by_id["c1"].instances_led == 2 and rows_by_id["c1"].weight == 2
    assert rows_by_id["c2"].instances_led == 3
    assert rows_by_id["c2"].mean == 0.5 and rows_by_id["c2"].parent == "c0"


def test_identical_candidates_keep_the_newer_one() -> None:
    # Equal means, same fronts: the scan meets the older one first and drops it,
    # because the newer one still covers every front (gepa does the same).
    rows = [[0.0, 0.0], [1.0, 0.5], [1.0, 0.5]]
    frontier = compute_frontier(pool_of(rows))
    assert frontier.members == ["c2"]
    assert frontier.dominated == ["c1"]
    assert frontier.never_best == ["c0"]


def test_equal_means_order_by_first_appearance_not_pool_order() -> None:
    # c1 and c2 tie on the mean and are the only leaders of i1, so whichever is
    # scanned first is dropped and the other kept. c2 leads an earlier instance (i0),
    # so gepa scans it first, although c1 comes first in the pool.
    rows = [
        [0.0, 0.0, 0.0],  # c0: best nowhere
        [0.0, 1.0, 1.0],  # c1: mean 2/3, fronts i1, i2
        [1.0, 1.0, 0.0],  # c2: mean 2/3, fronts i0, i1
        [1.0, 0.5, 1.0],  # c3: mean 5/6, fronts i0, i2
    ]
    frontier = compute_frontier(pool_of(rows))
    assert frontier.dominated == ["c2"]
    assert frontier.members == ["c3", "c1"]  # sampling order: first appearance in pruned fronts
    assert frontier.never_best == ["c0"]


def test_a_single_candidate_is_its_own_frontier() -> None:
    frontier = compute_frontier(pool_of([[0.2, 0.4]], parents=[None]))
    assert frontier.members == ["c0"]
    assert frontier.rows[0].weight == 2


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([[0.1, 0.2], [0.3]], "must be complete"),
        ([[0.1, float("nan")]], "finite"),
    ],
)
def test_pool_must_be_complete_and_finite(rows: list[list[float]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ScorePool(
            instances=["a", "b"],
            candidates=[PoolCandidate(id=f"c{k}", parent=None, scores=row) for k, row in enumerate(rows)],
        )


def test_pool_ids_must_be_unique() -> None:
    with pytest.raises(ValueError, match="candidate ids"):
        ScorePool(
            instances=["a"],
            candidates=[PoolCandidate(id="x", parent=None, scores=[0.0])] * 2,
        )


def test_sample_parent_is_seeded_and_weighted() -> None:
    frontier = compute_frontier(pool_of([[1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]))
    assert {row.candidate: row.weight for row in frontier.rows} == {"c0": 3, "c1": 1}
    assert sample_parent(frontier, 7) == sample_parent(frontier, 7)
    draws = Counter(sample_parent(frontier, seed) for seed in range(4000))
    assert 0.71 < draws["c0"] / 4000 < 0.79  # weight 3 of 4


def test_sample_parent_refuses_an_empty_frontier() -> None:
    with pytest.raises(ValueError, match="empty"):
        sample_parent(Frontier(rows=[], fronts=[], dominated=[], never_best=[]), 0)


# --- agreement with gepa's own code -------------------------------------------------


def random_rows(rng: random.Random, programs: int) -> list[list[float]]:
    """A score matrix on a coarse grid with some duplicated candidates: ties galore."""
    instances = rng.randint(1, 15)
    grid = rng.choice([[0.0, 1.0], [0.0, 0.5, 1.0], [0.0, 0.25, 0.5, 0.75, 1.0], [0.1, 0.2, 0.3]])
    rows = [[rng.choice(grid) for _ in range(instances)] for _ in range(programs)]
    for _ in range(rng.randint(0, 2)):
        rows[rng.randrange(len(rows))] = list(rng.choice(rows))
    return rows


def gepa_state(rows: list[list[float]]) -> GEPAState[object, int]:
    """A GEPA run's state with these programs, built the way GEPA builds it: the base
    program first, then each candidate folded into the per-instance fronts."""
    ids = list(range(len(rows[0])))

    def evaluation(row: list[float]) -> ValsetEvaluation[object, int]:
        return ValsetEvaluation(outputs_by_val_id={}, scores_by_val_id=dict(zip(ids, row, strict=True)))

    state: GEPAState[object, int] = GEPAState({"prompt": "0"}, evaluation(rows[0]))
    for k, row in enumerate(rows[1:], start=1):
        state.update_state_with_new_program([0], {"prompt": str(k)}, evaluation(row), None, 0)
    return state


def ours(rows: list[list[float]], arrays: bool = False) -> Frontier:
    """harnessgit's frontier of ``rows``: by `compute_frontier` (plain Python for pools
    this small), or with ``arrays`` by `frontier_of`, the path of pools of thousands."""
    instances = [str(j) for j in range(len(rows[0]))]
    if arrays:
        import numpy as np

        ids = [str(k) for k in range(len(rows))]
        return frontier_of(ids, [None] * len(rows), instances, np.array(rows, dtype=np.float64))
    return compute_frontier(
        ScorePool(
            instances=instances,
            candidates=[PoolCandidate(id=str(k), parent=None, scores=row) for k, row in enumerate(rows)],
        )
    )


BOTH = pytest.mark.parametrize("arrays", [False, True], ids=["python", "arrays"])


@BOTH
def test_agrees_with_gepa_runs(arrays: bool) -> None:
    """Real GEPA state, real gepa functions, pools of 1-8 programs: the same frontier,
    the same pruned fronts and the same sampled parent for the same seed."""
    rng = random.Random(20260101)
    for _ in range(500):
        rows = random_rows(rng, rng.randint(1, 8))
        state = gepa_state(rows)
        fronts, means = state.get_pareto_front_mapping(), state.per_program_tracked_scores
        frontier = ours(rows, arrays)

        assert sorted(int(c) for c in frontier.members) == sorted(find_dominator_programs(fronts, means))
        pruned = remove_dominated_programs(fronts, means)
        assert {int(f.instance): {int(c) for c in f.kept} for f in frontier.fronts} == pruned
        assert {int(f.instance): {int(c) for c in f.best} for f in frontier.fronts} == fronts
        assert [row.mean for row in frontier.rows] == [means[int(row.candidate)] for row in frontier.rows]
        seed = rng.randrange(1 << 30)
        expected = select_program_candidate_from_pareto_front(fronts, means, random.Random(seed))
        assert int(sample_parent(frontier, seed)) == expected


@BOTH
def test_agrees_with_gepa_on_large_pools_too(arrays: bool) -> None:
    """Pools of 9-60 programs, where CPython no longer iterates gepa's front sets in
    ascending index (issue 13: `sample_parent` matched only up to 8; tie-heavy pools
    even kept a different frontier). The fronts are built as GEPA's state builds them,
    so the same frontier, the same pruned fronts, the same tickets in the same order
    and the same parent for every seed."""
    rng = random.Random(7)
    for _ in range(150):
        rows = random_rows(rng, rng.randint(9, 60))
        state = gepa_state(rows)
        fronts, means = state.get_pareto_front_mapping(), state.per_program_tracked_scores
        frontier = ours(rows, arrays)
        pruned = remove_dominated_programs(fronts, means)
        assert {int(f.instance): {int(c) for c in f.kept} for f in frontier.fronts} == pruned
        assert sorted(int(c) for c in frontier.members) == sorted(find_dominator_programs(fronts, means))
        tickets = Counter(p for front in pruned.values() for p in front)
        assert {int(row.candidate): row.weight for row in frontier.rows} == tickets  # the draw's odds
        for seed in rng.sample(range(1 << 30), 5):
            expected = select_program_candidate_from_pareto_front(fronts, means, random.Random(seed))
            assert int(sample_parent(frontier, seed)) == expected


# --- the vectorised frontier against the straightforward one ------------------------


def reference_frontier(
    rows: list[list[float]],
) -> tuple[list[tuple[int, float, int]], list[set[int]], set[int]]:
    """The frontier as gepa's rule reads, step by step (harnessgit's implementation before
    issue 17 made it vectorised): each front a set built as GEPA's state builds it, every
    candidate seen in the fronts scanned in ascending mean, dropped when each of its
    fronts still has another survivor. (rows: (candidate, mean, led), pruned fronts,
    dropped)."""
    means = [sum(row) / len(row) for row in rows]
    best = [-math.inf] * len(rows[0])
    fronts: list[set[int]] = [set() for _ in rows[0]]
    for i, row in enumerate(rows):
        for column, score in enumerate(row):
            if score > best[column]:
                best[column], fronts[column] = score, {i}
            elif score == best[column]:
                fronts[column].add(i)
    fronts = [set(front) for front in fronts]
    first_seen: dict[int, None] = {}
    for front in fronts:
        first_seen.update(dict.fromkeys(front))
    alive = [len(front) for front in fronts]
    dropped: set[int] = set()
    for i in sorted(first_seen, key=lambda i: means[i]):
        mine = [f for f, front in enumerate(fronts) if i in front]
        if all(alive[f] >= 2 for f in mine):
            dropped.add(i)
            for f in mine:
                alive[f] -= 1
    kept = [{i for i in front if i not in dropped} for front in fronts]
    led: dict[int, int] = {}
    for pruned in kept:
        for i in pruned:
            led[i] = led.get(i, 0) + 1
    return [(i, means[i], n) for i, n in led.items()], kept, dropped


@BOTH
def test_agrees_with_the_step_by_step_rule_on_pools_of_hundreds(arrays: bool) -> None:
    """Pools of up to 400 programs with heavy ties (whole columns tied, duplicated
    programs, fronts of hundreds): the same rows in the same (sampling) order, the
    same pruned fronts, the same dominated candidates."""
    rng = random.Random(17)
    for _ in range(40):
        rows = random_rows(rng, rng.randint(50, 400))
        for _ in range(rng.randint(0, 3)):  # a column every program ties on
            column = rng.randrange(len(rows[0]))
            for row in rows:
                row[column] = 1.0
        expected_rows, kept, dropped = reference_frontier(rows)
        frontier = ours(rows, arrays)
        assert [(int(r.candidate), r.mean, r.weight) for r in frontier.rows] == expected_rows
        assert [{int(c) for c in f.kept} for f in frontier.fronts] == kept
        assert {int(c) for c in frontier.dominated} == dropped


def test_means_are_pythons_sums() -> None:
    """Exact ties on the mean decide the order of removal, so each mean is the float
    ``sum(row) / len(row)`` gives, bit for bit, on rows where rounding bites."""
    rng = random.Random(3)
    rows = [[rng.choice([1.0, 1e-16, 0.1, 0.3, 1 / 3, 0.0]) for _ in range(37)] for _ in range(500)]
    frontier = ours(rows, arrays=True)
    expected = [sum(row) / len(row) for row in rows]
    assert all(row.mean == expected[int(row.candidate)] for row in frontier.rows)
    import numpy as np

    from harnessgit.stats.frontier_arrays import row_means

    assert row_means(np.array(rows)).tolist() == expected


def test_pools_over_the_small_size_are_computed_on_arrays_with_the_same_answer() -> None:
    """`compute_frontier` switches to arrays above SMALL_POOL scores: the two paths agree
    on both sides of the switch (rows in sampling order, fronts, dominated, never best)."""
    from harnessgit.stats import frontier as module

    rng = random.Random(11)
    for programs in (5, 60, 300):
        rows = random_rows(rng, programs)
        python, arrays = ours(rows), ours(rows, arrays=True)
        assert python == arrays
        assert list(python.fronts) == list(arrays.fronts)
    rows = random_rows(rng, 200)
    small = module.SMALL_POOL
    try:
        module.SMALL_POOL = 0  # every pool on arrays
        assert ours(rows) == ours(rows, arrays=True)
    finally:
        module.SMALL_POOL = small
