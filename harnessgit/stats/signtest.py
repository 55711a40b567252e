"""The gate's exact alternative to the bootstrap: the sign test (McNemar for 0/1 scores).

Pure: no git, no I/O, no numpy.

The sign test counts, over independent units (instances, or clusters), the wins
(candidate better) and losses (base better) and drops the ties. Under H0 "a
discordant unit is as likely a win as a loss" the wins follow Binomial(wins +
losses, 1/2), and the one-sided p-value is the exact upper tail. For 0/1 scores
the discordant pairs are exactly McNemar's b and c, so this *is* the exact
McNemar test (McNemar 1947; Fagerland, Lydersen & Laake 2013).

The gate also needs a lower bound in points. With U units of which N are
discordant, the net win rate is (N / U) * (2 * theta - 1), where theta is the
chance that a discordant unit is a win; for 0/1 scores without clusters it equals
the mean paired difference. The bound plugs in the exact one-sided Clopper-Pearson
bound for theta, conditional on N (the uncertainty of the discordant fraction
itself is ignored, which only matters when min_effect is not 0). The test of
H0: net win rate <= null is its dual, so ``passed <=> p < alpha <=> lower bound >
null``; with null = 0 it is exactly the classical sign test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harnessgit.stats.distributions import binomial_upper_tail, clopper_pearson_lower, clopper_pearson_upper

CI_LEVEL = 0.95


@dataclass(frozen=True, kw_only=True)
class SignBound:
    """The outcome of one exact sign (or McNemar) test of H0: net win rate <= null."""

    method: Literal["sign"] = "sign"
    test: Literal["sign", "mcnemar"]
    units: int  # instances, or clusters when clustered
    clustered: bool
    wins: int  # units where the candidate is better
    losses: int
    alpha: float
    null: float
    estimate: float  # observed net win rate (wins - losses) / units
    lower_bound: float
    ci_low: float
    ci_high: float
    ci_level: float = CI_LEVEL
    p_value: float
    passed: bool


def sign_test_p(wins: int, losses: int) -> float:
    """Exact one-sided sign-test p-value for "the candidate wins more often"."""
    return binomial_upper_tail(wins, wins + losses, 0.5)


def sign_bound(
    unit_differences: list[float], *, alpha: float, null: float, binary: bool, clustered: bool
) -> SignBound:
    """Exact sign test over units (per-instance differences, or per-cluster mean
    differences, which keeps the units independent)."""
    units = len(unit_differences)
    if units < 1 or not 0 < alpha < 1:
        raise ValueError("the sign test needs at least one unit and alpha in (0, 1)")
    wins = sum(1 for d in unit_differences if d > 0)
    losses = sum(1 for d in unit_differences if d < 0)
    discordant = wins + losses
    scale = discordant / units
    if discordant == 0:
        # Only ties: the net win rate is 0 with nothing to bound it by.
        p_value, lower, ci = (1.0 if null >= 0 else 0.0), 0.0, (0.0, 0.0)
    else:
        theta_null = (1 + null / scale) / 2  # the null expressed as a win chance
        if theta_null < 0:
            p_value = 0.0  # even all losses clear the null
        elif theta_null >= 1:
            p_value = 1.0  # even all wins cannot clear it
        else:
            p_value = binomial_upper_tail(wins, discordant, theta_null)
        half = (1 - CI_LEVEL) / 2
        lower = scale * (2 * clopper_pearson_lower(wins, discordant, alpha) - 1)
        ci = (
            scale * (2 * clopper_pearson_lower(wins, discordant, half) - 1),
            scale * (2 * clopper_pearson_upper(wins, discordant, half) - 1),
        )
    return SignBound(
        test="mcnemar" if binary and not clustered else "sign",
        units=units,
        clustered=clustered,
        wins=wins,
        losses=losses,
        alpha=alpha,
        null=null,
        estimate=(wins - losses) / units,
        lower_bound=lower,
        ci_low=ci[0],
        ci_high=ci[1],
        p_value=p_value,
        # Strict: the dual of the Clopper-Pearson bound (lower bound > null).
        passed=p_value < alpha,
    )
