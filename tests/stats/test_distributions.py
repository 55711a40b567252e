"""Binomial and Student-t tails against hand computations and published tables."""

from __future__ import annotations

import math

import pytest

from harnessgit.stats.distributions import (
    binomial_upper_tail,
    clopper_pearson_lower,
    clopper_pearson_upper,
    student_t_quantile,
    student_t_sf,
)


@pytest.mark.parametrize(
    ("k", "n", "p", "expected"),
    [
        (8, 10, 0.5, (45 + 10 + 1) / 1024),
        (9, 10, 0.5, 11 / 1024),
        (3, 3, 0.5, 1 / 8),
        (0, 5, 0.5, 1.0),
        (6, 5, 0.5, 0.0),
        (2, 3, 0.3, 3 * 0.3**2 * 0.7 + 0.3**3),
        (1, 4, 0.1, 1 - 0.9**4),
    ],
)
def test_binomial_upper_tail_by_hand(k: int, n: int, p: float, expected: float) -> None:
    assert binomial_upper_tail(k, n, p) == pytest.approx(expected, rel=1e-12)


def test_binomial_tail_is_exact_at_one_half_for_large_n() -> None:
    # 2000 trials: math.comb(2000, 1000) / 2**2000 underflows a naive float sum.
    assert binomial_upper_tail(1000, 2000, 0.5) == pytest.approx(0.5 + math.comb(2000, 1000) / 2**2001)
    assert binomial_upper_tail(1100, 2000, 0.5) < 1e-5
    nearby = binomial_upper_tail(1100, 2000, 0.5000001)  # the log-space path
    assert nearby == pytest.approx(binomial_upper_tail(1100, 2000, 0.5), rel=1e-3)


def test_clopper_pearson_against_the_published_value() -> None:
    # 8 of 10: one-sided 95% lower bound 0.4931 (Clopper & Pearson; R binom.test).
    lower = clopper_pearson_lower(8, 10, 0.05)
    assert lower == pytest.approx(0.49310, abs=1e-5)
    assert binomial_upper_tail(8, 10, lower) == pytest.approx(0.05, rel=1e-9)
    assert clopper_pearson_lower(0, 10, 0.05) == 0.0
    assert clopper_pearson_upper(10, 10, 0.05) == 1.0
    assert clopper_pearson_upper(2, 10, 0.05) == pytest.approx(1 - clopper_pearson_lower(8, 10, 0.05))


@pytest.mark.parametrize(
    ("alpha", "df", "expected"),
    [  # t tables (R qt(1 - alpha, df))
        (0.05, 1, 6.313752),
        (0.05, 2, 2.919986),
        (0.025, 9, 2.262157),
        (0.001, 5, 5.893430),
        (0.05, 34, 1.690924),
        (0.05, 1000, 1.646379),
        (0.05, 5000, 1.645158),  # the large-df expansion
        (0.95, 34, -1.690924),
    ],
)
def test_student_t_quantile_against_tables(alpha: float, df: int, expected: float) -> None:
    assert student_t_quantile(alpha, df) == pytest.approx(expected, abs=2e-6)


def test_student_t_quantile_far_in_the_tail() -> None:
    # df = 1 is the Cauchy distribution: P(T >= t) = 1/2 - atan(t)/pi.
    alpha = 1e-6
    assert student_t_quantile(alpha, 1) == pytest.approx(math.tan(math.pi * (0.5 - alpha)), rel=1e-6)
    assert student_t_sf(student_t_quantile(3.4e-5, 34), 34) == pytest.approx(3.4e-5, rel=1e-8)


def test_student_t_sf_symmetry_and_limits() -> None:
    assert student_t_sf(0.0, 7) == pytest.approx(0.5)
    assert student_t_sf(-2.0, 7) == pytest.approx(1 - student_t_sf(2.0, 7))
    assert student_t_sf(1.0, 1) == pytest.approx(0.25)
    assert student_t_sf(math.inf, 3) == 0.0 and student_t_sf(-math.inf, 3) == 1.0
    assert student_t_sf(2.0, 2) == pytest.approx(0.5 * (1 - 2 / math.sqrt(6)))  # closed form at df = 2
    with pytest.raises(ValueError):
        student_t_sf(1.0, 0)
    with pytest.raises(ValueError):
        student_t_quantile(0.0, 5)
