"""The numbers of an A/A calibration: the evaluator's noise on identical inputs, the
gate's false-pass rate on them, and the sample a chosen effect needs.

Pure: a matrix of scores in (every instance of the selection split, scored several
times on one harness), frozen results out; no git, no I/O. The gate's decision rule
comes in as a function, so the rule checked is the one that decides.

Why an A/A test: two runs of one harness on one instance often score differently
(a sampled LLM, a flaky tool), and nothing else tells a user how much. Elsewhere an
A/A test on byte-identical inputs flipped 27% of a skill gate's verdicts
(dotnet/skills #952). Here the same rule is applied to pairs of fresh repeats of one
harness, where every pass is a false pass.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from harnessgit.stats.decision import MDE_POWER
from harnessgit.stats.pairing import PairedScores

# Repeats per side for which `needed` quotes the selection size.
REPEAT_STEPS = (1, 2, 4, 8)


@dataclass(frozen=True)
class Draws:
    """Every instance's fresh scores on one harness, repeat r in column r."""

    instances: list[str]
    scores: list[list[float]]  # scores[i][r]
    clusters: list[str] | None = None  # the evaluator's cluster of instance i

    def __post_init__(self) -> None:
        if len(self.scores) != len(self.instances) or len(self.instances) < 2:
            raise ValueError("calibration needs one row of scores per instance, and two instances")
        if len({len(row) for row in self.scores}) != 1 or len(self.scores[0]) < 2:
            raise ValueError("calibration needs the same number of repeats, at least two, per instance")

    @property
    def repeats(self) -> int:
        return len(self.scores[0])


@dataclass(frozen=True)
class Noise:
    """How much one harness's scores move between runs of the same inputs."""

    flip_rate: float  # chance two runs of one instance score differently (over pairs of repeats)
    agreement: float  # share of instances on which every repeat gave the same score
    within_variance: float  # per-instance variance over repeats, averaged over instances
    between_variance: float  # variance of the per-instance means across instances
    repeat_means: list[float]  # the split's mean score in each repeat
    mean_spread: float  # largest minus smallest of those means


@dataclass(frozen=True)
class FalsePasses:
    """The gate's rule applied to A/A pairs: each instance's score in one repeat
    against its score in another, drawn at random per instance."""

    draws: int
    passes: int
    rate: float
    upper: float  # one-sided 95% upper bound of the rate (Clopper-Pearson)
    lower: float  # one-sided 95% lower bound
    alpha: float  # what the rate must not exceed


@dataclass(frozen=True)
class Needed:
    """Instances a true effect of ``effect`` needs for 80% power, with ``repeats``
    repeats per side, from the noise alone."""

    repeats: int
    instances: int | None  # None: the noise sets no floor (a deterministic evaluator)
    detectable: float | None  # with the selection split's n: the smallest effect seen at 80% power


def noise(draws: Draws) -> Noise:
    rows = draws.scores
    pairs = [(a, b) for a in range(draws.repeats) for b in range(a + 1, draws.repeats)]
    flips = math.fsum(sum(1 for a, b in pairs if row[a] != row[b]) / len(pairs) for row in rows)
    means = [math.fsum(row) / len(row) for row in rows]
    within = math.fsum(
        math.fsum((x - m) ** 2 for x in row) / (len(row) - 1) for row, m in zip(rows, means, strict=True)
    )
    grand = math.fsum(means) / len(means)
    repeat_means = [math.fsum(row[r] for row in rows) / len(rows) for r in range(draws.repeats)]
    return Noise(
        flip_rate=flips / len(rows),
        agreement=sum(1 for row in rows if len(set(row)) == 1) / len(rows),
        within_variance=within / len(rows),
        between_variance=math.fsum((m - grand) ** 2 for m in means) / (len(means) - 1),
        repeat_means=repeat_means,
        mean_spread=max(repeat_means) - min(repeat_means),
    )


def aa_pairs(draws: Draws, count: int, seed: int) -> list[PairedScores]:
    """``count`` A/A comparisons: per instance, two different repeats drawn at random,
    one as "base" and one as "candidate", with the evaluator's clusters."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        base, candidate = [], []
        for row in draws.scores:
            a, b = rng.sample(range(draws.repeats), 2)
            base.append(row[a])
            candidate.append(row[b])
        pairs.append(PairedScores(list(draws.instances), base, candidate, draws.clusters))
    return pairs


def false_passes(
    pairs: Sequence[PairedScores], passes: Callable[[PairedScores], bool], alpha: float
) -> FalsePasses:
    """How often ``passes`` (the gate's rule) says yes on A/A pairs, with exact bounds."""
    count = sum(1 for pair in pairs if passes(pair))
    n = len(pairs)
    return FalsePasses(
        draws=n,
        passes=count,
        rate=count / n,
        upper=_clopper_pearson_upper(count, n, 0.05),
        lower=1 - _clopper_pearson_upper(n - count, n, 0.05),
        alpha=alpha,
    )


def needed(
    within_variance: float,
    effect: float,
    *,
    min_effect: float,
    alpha: float,
    n: int,
    power: float = MDE_POWER,
) -> list[Needed]:
    """Per number of repeats per side: the instances a true gain of ``effect`` needs for
    ``power`` at level ``alpha`` above ``min_effect``, and the effect ``n`` instances
    detect. From the noise alone: the paired difference of two k-repeat means of one
    instance has variance 2 * within / k, and real edits add how their effect varies
    across instances, which an A/A test cannot see; so these are lower bounds."""
    z = NormalDist().inv_cdf(1 - alpha) + NormalDist().inv_cdf(power)
    rows = []
    for k in REPEAT_STEPS:
        sd = math.sqrt(2 * within_variance / k)
        if sd == 0:
            rows.append(Needed(k, None, None))
            continue
        margin = effect - min_effect
        instances = math.ceil((z * sd / margin) ** 2) if margin > 0 else None
        rows.append(Needed(k, instances, min_effect + z * sd / math.sqrt(n)))
    return rows


def _clopper_pearson_upper(successes: int, n: int, level: float) -> float:
    """The exact one-sided upper bound p of a binomial rate: P(X <= successes | p) = level,
    by bisection on the binomial distribution function (no scipy)."""
    if successes >= n:
        return 1.0
    low, high = successes / n, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if _binomial_cdf(successes, n, middle) > level:
            low = middle
        else:
            high = middle
    return high


def _binomial_cdf(k: int, n: int, p: float) -> float:
    if p <= 0:
        return 1.0
    if p >= 1:
        return 0.0 if k < n else 1.0
    log_p, log_q = math.log(p), math.log1p(-p)
    return math.fsum(
        math.exp(
            math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q
        )
        for i in range(k + 1)
    )
