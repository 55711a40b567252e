"""The pure numbers of an A/A calibration (harnessgit/calibrate/noise.py)."""

from __future__ import annotations

import random

import pytest

from harnessgit.calibrate.noise import Draws, aa_pairs, false_passes, needed, noise
from harnessgit.config import GateSection
from harnessgit.stats.decision import alpha_for_attempt, decide


def test_noise_of_a_known_matrix() -> None:
    draws = Draws(["a", "b", "c", "d"], [[1, 1, 1], [0, 0, 1], [1, 0, 1], [0, 0, 0]])
    found = noise(draws)
    # pairs of repeats differing: a 0/3, b 2/3, c 2/3, d 0/3
    assert found.flip_rate == pytest.approx((0 + 2 / 3 + 2 / 3 + 0) / 4)
    assert found.agreement == 0.5
    # sample variances over repeats: 0, 1/3, 1/3, 0
    assert found.within_variance == pytest.approx((1 / 3 + 1 / 3) / 4)
    assert found.repeat_means == [0.5, 0.25, 0.75]
    assert found.mean_spread == 0.5


def test_a_deterministic_evaluator_has_no_noise_and_sets_no_floor() -> None:
    draws = Draws(["a", "b", "c"], [[1.0, 1.0], [0.0, 0.0], [0.5, 0.5]])
    found = noise(draws)
    assert (found.flip_rate, found.agreement, found.within_variance) == (0.0, 1.0, 0.0)
    assert all(row.instances is None for row in needed(0.0, 0.05, min_effect=0.0, alpha=0.03, n=3))
    passes = false_passes(aa_pairs(draws, 30, seed=1), lambda p: decide(p, GateSection()).passed, 0.05)
    assert passes.passes == 0


def test_needed_follows_the_normal_formula() -> None:
    # sd of a one-repeat difference = sqrt(2 * 0.08) = 0.4; z(0.97) + z(0.8) = 1.881 + 0.842
    rows = needed(0.08, 0.05, min_effect=0.0, alpha=0.03, n=36)
    by_k = {row.repeats: row for row in rows}
    z = 1.8807936081512509 + 0.8416212335729143
    assert by_k[1].instances == pytest.approx((z * 0.4 / 0.05) ** 2, abs=1)
    assert by_k[4].instances == pytest.approx((z * 0.2 / 0.05) ** 2, abs=1)
    assert by_k[1].detectable == pytest.approx(z * 0.4 / 36**0.5)
    # an effect at or under min_effect can never pass, whatever the size
    assert all(row.instances is None for row in needed(0.08, 0.02, min_effect=0.02, alpha=0.03, n=36))


def test_false_pass_bounds_are_exact_clopper_pearson() -> None:
    pairs = aa_pairs(Draws(["a", "b"], [[0, 1], [1, 0]]), 100, seed=0)
    result = false_passes(pairs, lambda _pair: False, 0.05)
    assert (result.rate, result.lower) == (0.0, 0.0)
    assert result.upper == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-6)  # 0 of 100: 1 - level^(1/n)
    every = false_passes(pairs, lambda _pair: True, 0.05)
    assert (every.rate, every.upper) == (1.0, 1.0)
    assert every.lower == pytest.approx(0.05 ** (1 / 100), rel=1e-6)


def test_the_gate_passes_a_noisy_harness_against_itself_at_most_alpha_1() -> None:
    """The claim calibrate checks, on a seeded noisy evaluator: 36 instances, each
    scoring 1 with its own probability, 6 fresh repeats; the gate's rule on A/A pairs."""
    rng = random.Random(7)
    rates = [rng.uniform(0.2, 0.8) for _ in range(36)]
    draws = Draws([f"s-{i}" for i in range(36)], [[float(rng.random() < p) for _ in range(6)] for p in rates])
    gate = GateSection(resamples=1000)
    result = false_passes(aa_pairs(draws, 200, seed=0), lambda p: decide(p, gate).passed, gate.alpha)
    assert noise(draws).flip_rate > 0.3
    assert result.rate <= alpha_for_attempt(gate.alpha, 1) + 0.02
    assert result.lower <= gate.alpha


def test_draws_need_two_repeats_and_equal_rows() -> None:
    with pytest.raises(ValueError, match="at least two"):
        Draws(["a", "b"], [[1.0], [0.0]])
    with pytest.raises(ValueError, match="same number"):
        Draws(["a", "b"], [[1.0, 0.0], [0.0]])
