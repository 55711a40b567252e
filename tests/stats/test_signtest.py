"""The exact sign / McNemar test and its dual lower bound."""

from __future__ import annotations

import random

import pytest

from harnessgit.stats.distributions import clopper_pearson_lower
from harnessgit.stats.signtest import sign_bound, sign_test_p


@pytest.mark.parametrize(
    ("wins", "losses", "expected"),
    [
        (8, 2, 56 / 1024),  # C(10,8)+C(10,9)+C(10,10) = 45+10+1
        (9, 1, 11 / 1024),
        (3, 0, 1 / 8),
        (5, 5, 638 / 1024),  # P(X >= 5 | 10): (252 + 210 + 120 + 45 + 10 + 1) / 1024
        (0, 0, 1.0),
    ],
)
def test_sign_test_p_by_hand(wins: int, losses: int, expected: float) -> None:
    assert sign_test_p(wins, losses) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_on_binary_scores_drops_the_ties() -> None:
    # 9 wins, 1 loss, 25 ties: McNemar's exact one-sided p is that of 9 of 10.
    diffs = [1.0] * 9 + [-1.0] + [0.0] * 25
    bound = sign_bound(diffs, alpha=0.05, null=0.0, binary=True, clustered=False)
    assert bound.test == "mcnemar"
    assert (bound.wins, bound.losses, bound.units) == (9, 1, 35)
    assert bound.p_value == pytest.approx(11 / 1024)
    assert bound.passed
    # The bound in points: discordant share times the net win chance at its CP bound.
    theta = clopper_pearson_lower(9, 10, 0.05)
    assert bound.lower_bound == pytest.approx(10 / 35 * (2 * theta - 1))
    assert bound.estimate == pytest.approx(8 / 35)
    assert bound.ci_low < bound.estimate < bound.ci_high


def test_not_binary_is_called_a_sign_test() -> None:
    bound = sign_bound([0.5, 0.2, -0.1, 0.3], alpha=0.05, null=0.0, binary=False, clustered=False)
    assert bound.test == "sign"
    assert bound.p_value == pytest.approx(5 / 16)  # 3 of 4: (4 + 1) / 16
    assert not bound.passed


def test_only_ties_cannot_pass_a_positive_margin() -> None:
    bound = sign_bound([0.0] * 40, alpha=0.05, null=0.0, binary=True, clustered=False)
    assert (bound.p_value, bound.lower_bound, bound.passed) == (1.0, 0.0, False)
    lenient = sign_bound([0.0] * 40, alpha=0.05, null=-0.05, binary=True, clustered=False)
    assert lenient.passed  # non-inferiority: observed no change at all


def test_verdict_and_bound_are_dual_for_any_margin() -> None:
    rng = random.Random(3)
    for _ in range(300):
        n = rng.randint(5, 80)
        diffs = [rng.choice([-1.0, 0.0, 0.0, 1.0, 1.0]) for _ in range(n)]
        null = rng.choice([0.0, 0.0, 0.05, 0.1, -0.05])
        alpha = rng.choice([0.05, 0.01, 0.0034])
        bound = sign_bound(diffs, alpha=alpha, null=null, binary=True, clustered=False)
        assert bound.passed == (bound.p_value < alpha)
        if abs(bound.lower_bound - null) > 1e-9:
            assert bound.passed == (bound.lower_bound > null)


def test_a_margin_no_outcome_can_clear() -> None:
    # 3 discordant of 100: even 3 wins give a net rate of 3 points, below a 5-point margin.
    bound = sign_bound([1.0] * 3 + [0.0] * 97, alpha=0.05, null=0.05, binary=True, clustered=False)
    assert bound.p_value == 1.0 and not bound.passed


def test_rejects_empty_input() -> None:
    with pytest.raises(ValueError):
        sign_bound([], alpha=0.05, null=0.0, binary=True, clustered=False)
