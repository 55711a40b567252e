"""The studentized paired bootstrap: determinism, its decision rule, the Student-t
floor, clusters, and the extra resamples that small alpha levels need."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from harnessgit.stats.bootstrap import (
    MAX_RESAMPLES,
    MIN_TAIL,
    SMALLEST_ALPHA,
    bootstrap_bound,
    bootstrap_means,
    required_resamples,
)
from harnessgit.stats.distributions import student_t_quantile


def singles(diffs: list[float]) -> tuple[list[float], list[int]]:
    return diffs, [1] * len(diffs)


def test_same_seed_same_result_other_seed_other_draws() -> None:
    rng = random.Random(1)
    diffs = [rng.uniform(-0.3, 0.5) for _ in range(60)]
    first = bootstrap_bound(*singles(diffs), alpha=0.05, null=0.0, resamples=2000, seed=11)
    assert bootstrap_bound(*singles(diffs), alpha=0.05, null=0.0, resamples=2000, seed=11) == first
    other = bootstrap_bound(*singles(diffs), alpha=0.05, null=0.0, resamples=2000, seed=12)
    assert other.estimate == first.estimate and other.se == first.se
    assert other.ci_low != first.ci_low  # a different Monte Carlo sample


def test_order_of_units_does_not_matter() -> None:
    rng = random.Random(2)
    diffs = [rng.choice([-1.0, 0.0, 0.0, 1.0]) * rng.random() for _ in range(50)]
    shuffled = diffs[:]
    rng.shuffle(shuffled)
    assert bootstrap_bound(*singles(diffs), alpha=0.05, null=0.0, resamples=1000, seed=3) == bootstrap_bound(
        *singles(shuffled), alpha=0.05, null=0.0, resamples=1000, seed=3
    )


def test_estimate_and_standard_error_by_hand() -> None:
    diffs = [1.0, 0.0, -1.0, 1.0]  # mean 0.25, sd^2 = 2.75 / 3
    bound = bootstrap_bound(*singles(diffs), alpha=0.05, null=0.0, resamples=500, seed=0)
    assert bound.estimate == pytest.approx(0.25)
    assert bound.se == pytest.approx(math.sqrt(2.75 / 3) / 2)
    assert (bound.units, bound.df, bound.clustered) == (4, 3, False)


def test_bound_p_value_and_verdict_agree() -> None:
    """passed <=> lower bound > null <=> p <= alpha, on many random samples and margins."""
    rng = random.Random(4)
    for trial in range(150):
        n = rng.randint(8, 60)
        shift = rng.uniform(-0.1, 0.3)
        diffs = [max(-1.0, min(1.0, rng.gauss(shift, 0.3))) for _ in range(n)]
        null = rng.choice([0.0, 0.02, -0.02])
        alpha = rng.choice([0.05, 0.0304, 0.0076])
        bound = bootstrap_bound(*singles(diffs), alpha=alpha, null=null, resamples=400, seed=trial)
        assert bound.passed == (bound.lower_bound > null)
        assert bound.passed == (bound.p_value <= alpha)
        assert bound.ci_low <= bound.estimate <= bound.ci_high


def test_never_more_lenient_than_student_t() -> None:
    # 2 wins, 0 losses, 33 ties: the plain bootstrap-t reads this as skew and passes
    # (p = 0.014, where the sign test says 1/4); Student's t, and so the gate, does not.
    diffs = [1.0] * 2 + [0.0] * 33
    plain = bootstrap_bound(
        *singles(diffs), alpha=0.05, null=0.0, resamples=4000, seed=0, student_floor=False
    )
    gate = bootstrap_bound(*singles(diffs), alpha=0.05, null=0.0, resamples=4000, seed=0)
    t_obs = gate.estimate / gate.se
    assert t_obs < student_t_quantile(0.05, 34)
    assert plain.passed and not gate.passed
    assert gate.critical >= student_t_quantile(0.05, 34)
    assert gate.lower_bound <= gate.estimate - student_t_quantile(0.05, 34) * gate.se + 1e-12


def test_skew_raises_the_critical_value_above_student() -> None:
    # Nine small gains and one large loss: the bootstrap-t's upper tail is heavier
    # than Student's, so the bound is lower than a t-interval's.
    diffs = ([0.05] * 9 + [-0.45]) * 4
    gate = bootstrap_bound(*singles(diffs), alpha=0.05, null=0.0, resamples=4000, seed=0)
    assert gate.critical > student_t_quantile(0.05, len(diffs) - 1) * 1.2


def test_no_variation() -> None:
    ties = bootstrap_bound(*singles([0.0] * 30), alpha=0.05, null=0.0, resamples=200, seed=0)
    assert (ties.passed, ties.p_value, ties.se, ties.lower_bound) == (False, 1.0, 0.0, 0.0)
    wins = bootstrap_bound(*singles([1.0] * 30), alpha=0.05, null=0.0, resamples=200, seed=0)
    assert wins.passed and wins.lower_bound == 1.0


@pytest.mark.parametrize("wins", [35, 33])
def test_overwhelming_wins_pass_even_at_a_tiny_alpha(wins: int) -> None:
    # 35 wins and 5 ties of 40: 0.5% of resamples are all wins (se* = 0). Counted as
    # t* = +inf they would block any pass below alpha = 0.005. With 33 wins the
    # spread of an all-wins resample is not 0 but rounding left over (~1e-17), and
    # t* ~ 1e9 would block it just the same.
    diffs = [1.0] * wins + [0.0] * (40 - wins)
    alpha = 0.05 * 6 / (math.pi**2 * 10**2)  # attempt 10
    bound = bootstrap_bound(*singles(diffs), alpha=alpha, null=0.0, resamples=2000, seed=0)
    assert bound.passed


def test_small_alpha_draws_enough_resamples_for_its_tail() -> None:
    alpha = 0.05 * 6 / (math.pi**2 * 12**2)  # attempt 12: 0.00021
    assert required_resamples(alpha, 2000) == math.ceil(MIN_TAIL / alpha) - 1
    assert required_resamples(0.05, 10_000) == 10_000
    strong = [1.0] * 30 + [0.0] * 8 + [-1.0] * 2
    bound = bootstrap_bound(*singles(strong), alpha=alpha, null=0.0, resamples=2000, seed=0)
    assert bound.passed and bound.resamples_used == required_resamples(alpha, 2000)
    # Below Student's quantile the verdict is settled: only the displayed draws are made.
    weak = [1.0] * 6 + [0.0] * 30 + [-1.0] * 4
    settled = bootstrap_bound(*singles(weak), alpha=alpha, null=0.0, resamples=2000, seed=0)
    assert not settled.passed and settled.resamples_used == 2000


def test_early_stop_keeps_bound_and_verdict_consistent() -> None:
    # Left-skewed 0/1 differences at attempt 10: Student's t clears, the bootstrap-t
    # tail does not, and the engine stops once enough resamples reach t_obs.
    alpha = 0.05 * 6 / (math.pi**2 * 10**2)
    diffs = [1.0] * 32 + [0.0] * 6 + [-1.0] * 2
    bound = bootstrap_bound(*singles(diffs), alpha=alpha, null=0.0, resamples=2000, seed=0)
    assert bound.estimate / bound.se > student_t_quantile(alpha, 39)
    assert not bound.passed
    assert bound.resamples_used < required_resamples(alpha, 2000)
    assert bound.lower_bound <= 0.0 and bound.p_value > alpha


def test_cluster_bootstrap_is_wider_on_clustered_data() -> None:
    # Ten clusters of ten instances; each cluster all gains or all losses.
    rng = random.Random(5)
    effects = [0.3, 0.25, 0.2, -0.15, 0.3, -0.1, 0.2, 0.25, -0.2, 0.3]
    diffs = [e + rng.uniform(-0.02, 0.02) for e in effects for _ in range(10)]
    clustered = bootstrap_bound(
        [math.fsum(diffs[i * 10 : i * 10 + 10]) for i in range(10)],
        [10] * 10,
        alpha=0.05,
        null=0.0,
        resamples=4000,
        seed=0,
    )
    independent = bootstrap_bound(*singles(diffs), alpha=0.05, null=0.0, resamples=4000, seed=0)
    assert clustered.estimate == pytest.approx(independent.estimate)
    assert clustered.clustered and clustered.units == 10 and clustered.df == 9
    assert clustered.se > 2.5 * independent.se
    assert clustered.ci_high - clustered.ci_low > 2.5 * (independent.ci_high - independent.ci_low)


def test_binary_shortcut_matches_index_resampling() -> None:
    # 0/1 differences take the multinomial path (3 distinct units); jittered copies
    # (all distinct) take the index path. Same distribution, so the same answer
    # within Monte Carlo error.
    diffs = [1.0] * 20 + [-1.0] * 8 + [0.0] * 72
    jittered = [d + 1e-9 * i for i, d in enumerate(diffs)]
    a = bootstrap_bound(*singles(diffs), alpha=0.05, null=0.0, resamples=20_000, seed=1)
    b = bootstrap_bound(*singles(jittered), alpha=0.05, null=0.0, resamples=20_000, seed=1)
    assert a.critical == pytest.approx(b.critical, abs=0.05)
    assert a.ci_low == pytest.approx(b.ci_low, abs=0.005)
    means_a = bootstrap_means(*singles(diffs), resamples=20_000, seed=1)
    means_b = bootstrap_means(*singles(jittered), resamples=20_000, seed=1)
    assert float(np.std(means_a)) == pytest.approx(float(np.std(means_b)), rel=0.03)
    assert float(np.mean(means_a)) == pytest.approx(0.12, abs=0.002)


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="two units"):
        bootstrap_bound([0.5], [1], alpha=0.05, null=0.0, resamples=100, seed=0)
    with pytest.raises(ValueError, match="alpha"):
        bootstrap_bound([0.5, 0.1], [1, 1], alpha=0.0, null=0.0, resamples=100, seed=0)


def test_resamples_are_capped_and_below_the_cap_nothing_passes() -> None:
    assert required_resamples(1e-9, 10_000) == MAX_RESAMPLES
    strong = [1.0] * 38 + [0.0] * 2
    bound = bootstrap_bound(*singles(strong), alpha=SMALLEST_ALPHA / 2, null=0.0, resamples=1000, seed=0)
    assert not bound.passed and bound.lower_bound == -1.0
    assert bound.resamples_used == 1000  # no point drawing towards an unreachable tail
