"""No significant loss on other models: one-sided loss tests, Holm's step-down across them.

Pure: paired scores per model in, frozen results out. The co-evolution record says why a
gate looks at more than one model: the same harness helps one model and hurts another
(GEPA's merge step: +1.1 on GPT-4.1 mini, -2.4 on Qwen3-8B, arXiv 2507.19457).

Each other model m gets the test of H0_m: the candidate is no worse than the base on m
(mean paired difference >= 0) against a loss, with the gate's own method (studentized
bootstrap or exact sign test) run on the differences base - candidate. Holm's step-down
at level ``alpha`` then declares the losses: the p-values in increasing order, the j-th
(from 0) compared with alpha / (M - j), stopping at the first that does not clear. Holm
controls the family-wise rate: whatever the models' true effects, the chance of declaring
a loss on any model where there is none is at most ``alpha`` (Holm 1979), without any
assumption about how the models' tests depend on each other (they share instances).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from harnessgit.stats.decision import decide
from harnessgit.stats.pairing import PairedScores


@dataclass(frozen=True)
class ModelLoss:
    """One other model's loss test, as the gate records it."""

    model: str
    n: int
    base_mean: float
    candidate_mean: float
    difference: float  # candidate - base, per instance, averaged
    ci_low: float  # two-sided 95% interval of the difference
    ci_high: float
    p_value: float  # of H0 "no loss" (one-sided: small when the candidate is worse)
    level: float  # Holm's level for this model's rank
    loss: bool  # a significant loss: p_value <= level, and every smaller p cleared its level


@dataclass(frozen=True)
class _LossRules:
    """The gate's method, resamples and seed at a level of our choosing, with no
    minimum effect: `decide`'s GateRules, read at attempt 1."""

    alpha: float
    method: str
    resamples: int
    seed: int
    min_effect: float = 0.0
    min_instances: int = 1
    policy: str = "strict"
    q: float | None = None


def holm(p_values: Sequence[float], alpha: float) -> list[tuple[float, bool]]:
    """Per test, in input order: the level Holm compares it with, and whether it is rejected."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    out: list[tuple[float, bool]] = [(alpha, False)] * len(p_values)
    rejecting = True
    for rank, index in enumerate(order):
        level = alpha / (len(p_values) - rank)
        rejecting = rejecting and p_values[index] <= level
        out[index] = (level, rejecting)
    return out


def model_losses(
    flipped: dict[str, PairedScores], alpha: float, *, method: str, resamples: int, seed: int
) -> list[ModelLoss]:
    """The loss tests of ``flipped`` (model -> scores paired with the *candidate* as
    base, so each difference is base - candidate and a loss is a positive mean), Holm
    at ``alpha``. Each p-value comes from a test run at Holm's smallest level,
    alpha / M, so that a bootstrap draws enough resamples to resolve it."""
    if not flipped:
        return []
    smallest = alpha / len(flipped)
    # `decide` tests at alpha_1 = alpha * 6 / pi^2 (stats.decision.alpha_for_attempt).
    rules = _LossRules(alpha=smallest * math.pi**2 / 6, method=method, resamples=resamples, seed=seed)
    decisions = {model: decide(scores, rules, allow_small=True) for model, scores in flipped.items()}
    verdicts = holm([d.bound.p_value for d in decisions.values()], alpha)
    losses = []
    for (model, d), (level, loss) in zip(decisions.items(), verdicts, strict=True):
        c = d.comparison  # flipped: its "base" is the candidate
        losses.append(
            ModelLoss(
                model=model,
                n=c.n,
                base_mean=c.candidate.mean,
                candidate_mean=c.base.mean,
                difference=-c.difference.mean,
                ci_low=-d.bound.ci_high,
                ci_high=-d.bound.ci_low,
                p_value=d.bound.p_value,
                level=level,
                loss=loss,
            )
        )
    return losses
