"""Attempt numbers when clones gated before syncing: every level tested counts."""

from __future__ import annotations

import math

from harnessgit.gate.attempts import next_attempt
from harnessgit.stats.decision import alpha_for_attempt


def levels(ks: list[int]) -> float:
    return math.fsum(alpha_for_attempt(0.05, k) for k in ks)


def test_one_clone_counts_one_by_one() -> None:
    assert next_attempt([]) == 1
    assert [next_attempt(list(range(1, m + 1))) for m in (1, 2, 7, 50)] == [2, 3, 8, 51]


def test_a_shared_k_is_paid_for_by_skipping_levels() -> None:
    # Issue 17: two comparisons both took k = 8 after a notes merge. The old count gave
    # the next one k = 10 and the spending exceeded alpha over all later attempts.
    taken = [*range(1, 9), 8]
    k = next_attempt(taken)
    assert k == 11
    # Every level tested so far, plus every level the gate may still use, fits in alpha.
    tail = 0.05 - levels(list(range(1, k)))
    assert levels(taken) + tail <= 0.05 + 1e-15
    assert next_attempt([*range(1, 9), 8, 11]) == 12  # and on from there


def test_a_shared_first_attempt_spends_the_whole_set() -> None:
    # 2 alpha_1 = 1.22 alpha: no later level can bring the sum back under alpha.
    assert next_attempt([1, 1]) is None
    assert next_attempt([1, 2, 2]) is not None
