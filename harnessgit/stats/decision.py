"""The gate's statistics: paired comparison, error spending, detectable effect, verdict.

Pure: paired per-instance scores in, frozen models out; no git, no I/O. The git side
(ancestry, checks, counting attempts on a selection set) belongs to the caller,
which hands its own failing conditions to `decide` as ``extra_failures``.

Why a test and not "the candidate's mean is strictly higher": GEPA accepts an edit
when its score sum on 3 examples is higher (arXiv 2507.19457) and SkillOpt when one
selection-set score is higher (arXiv 2605.23904); on SkillOpt's 35-question math
set the selection score rose 0.765 -> 0.82 while the test score fell back to where
it started. A higher mean on a small set is mostly noise: the co-evolution paper's
+1.7 points were 1.4 standard errors (arXiv 2609.09134). The gate instead asks for
a lower confidence bound above ``min_effect``, spends its error rate across
repeated attempts on one selection set, and says what it cannot detect.

Importing this module does not import numpy (the bootstrap does, when it runs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Protocol

from harnessgit.render import points, rough_points
from harnessgit.stats.bootstrap import SMALLEST_ALPHA, BootstrapBound, bootstrap_bound
from harnessgit.stats.pairing import PairedScores
from harnessgit.stats.signtest import SignBound, sign_bound

# Power at which the minimum detectable effect is quoted: the usual 80%.
MDE_POWER = 0.8


class GateRules(Protocol):
    """The gate's settings, as `decide` reads them ([gate] in harnessgit.toml, or a
    gate record being recomputed by `verify`)."""

    @property
    def alpha(self) -> float: ...
    @property
    def min_effect(self) -> float: ...
    @property
    def min_instances(self) -> int: ...
    @property
    def method(self) -> str: ...
    @property
    def resamples(self) -> int: ...
    @property
    def seed(self) -> int: ...


@dataclass(frozen=True)
class MeanEstimate:
    mean: float
    se: float  # standard error; cluster-robust when the scores are clustered


@dataclass(frozen=True)
class PairedComparison:
    """What the data say before any test: means, the paired difference, the counts."""

    n: int
    clusters: int | None  # number of clusters; None when instances are independent
    base: MeanEstimate
    candidate: MeanEstimate
    difference: MeanEstimate  # candidate - base, per instance, averaged
    sd: float  # standard deviation of the per-instance differences
    # n shrunk by the design effect (se without clusters / se with them, squared);
    # n itself without clusters; None when the clustered se is 0.
    effective_n: float | None
    wins: int
    losses: int
    ties: int
    regressed: list[str]  # instances where the candidate scored lower, in input order
    binary: bool  # every score is 0 or 1


@dataclass(frozen=True)
class GateDecision:
    """The gate's statistical verdict, with every number needed to recompute it."""

    passed: bool
    reasons: list[str]  # why not passed; empty when passed
    method: str  # "bootstrap" or "sign"
    attempt: int  # k: gate attempts on this selection set, this one included
    alpha: float  # family-wise false-accept rate over all attempts
    alpha_k: float  # the level used for this attempt
    alpha_spent: float  # alpha_1 + ... + alpha_k
    min_effect: float
    min_instances: int
    allow_small: bool
    seed: int
    resamples: int
    comparison: PairedComparison
    bound: BootstrapBound | SignBound
    mde: float | None  # minimum detectable effect above min_effect; None: no variation seen
    detectable: str  # the MDE in one sentence


def alpha_for_attempt(alpha: float, attempt: int) -> float:
    """alpha_k = alpha * 6 / (pi^2 k^2): since sum 1/k^2 = pi^2/6, the levels of all
    attempts add up to alpha, so by the union bound the chance that any null candidate
    ever passes on one selection set stays at most alpha, however often it is gated."""
    if attempt < 1:
        raise ValueError(f"attempts count from 1, got {attempt}")
    return alpha * 6 / (math.pi**2 * attempt**2)


def alpha_spent(alpha: float, attempts: int) -> float:
    """alpha_1 + ... + alpha_k: the false-accept rate already spent after k attempts."""
    if attempts < 0:
        raise ValueError(f"attempts must be >= 0, got {attempts}")
    return math.fsum(alpha_for_attempt(alpha, k) for k in range(1, attempts + 1))


def minimum_detectable_effect(sd: float, n: float, alpha: float, power: float = MDE_POWER) -> float:
    """The true effect a one-sided level-alpha test detects with the given power:
    (z_{1-alpha} + z_{power}) * sd / sqrt(n), normal approximation. With clusters pass
    the effective n, so that sd / sqrt(n) is the cluster-robust standard error."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    normal = NormalDist()
    return (normal.inv_cdf(1 - alpha) + normal.inv_cdf(power)) * sd / math.sqrt(n)


def detectable_sentence(comparison: PairedComparison, mde: float | None, min_effect: float = 0.0) -> str:
    """ "on 35 instances this gate cannot see effects under 17 points"."""
    where = f"on {comparison.n} instances"
    if comparison.clusters is not None:
        where += f" in {comparison.clusters} clusters"
        if comparison.effective_n is not None:
            where += f" (effective n {comparison.effective_n:.0f})"
    if mde is None:
        return f"{where} the differences did not vary, so this gate cannot say what it would miss"
    return f"{where} this gate cannot see effects under {rough_points(min_effect + mde)} points"


def compare(scores: PairedScores) -> PairedComparison:
    diffs = scores.differences
    n = len(diffs)
    unit_of = _unit_index(scores)
    diff = _mean_estimate(diffs, unit_of)
    mean_d = diff.mean
    sd = math.sqrt(math.fsum((d - mean_d) ** 2 for d in diffs) / (n - 1))
    naive_se = sd / math.sqrt(n)
    if scores.clusters is None:
        effective_n: float | None = float(n)
    else:
        effective_n = n * (naive_se / diff.se) ** 2 if diff.se > 0 else None
    return PairedComparison(
        n=n,
        clusters=None if scores.clusters is None else len(set(scores.clusters)),
        base=_mean_estimate(scores.base, unit_of),
        candidate=_mean_estimate(scores.candidate, unit_of),
        difference=diff,
        sd=sd,
        effective_n=effective_n,
        wins=sum(1 for d in diffs if d > 0),
        losses=sum(1 for d in diffs if d < 0),
        ties=sum(1 for d in diffs if d == 0),
        regressed=[i for i, d in zip(scores.instances, diffs, strict=True) if d < 0],
        binary=all(s in (0.0, 1.0) for s in (*scores.base, *scores.candidate)),
    )


def decide(
    scores: PairedScores,
    gate: GateRules,
    *,
    attempt: int = 1,
    allow_small: bool = False,
    extra_failures: Sequence[str] = (),
) -> GateDecision:
    """The gate's verdict on the statistics, plus any failures the caller found
    (ancestry, checks): passed only if every rule holds and ``extra_failures`` is empty.

    ``attempt`` is k, the number of gate attempts on this selection set since it was
    last refreshed, this one included; it sets the level alpha_k.
    """
    comparison = compare(scores)
    alpha_k = alpha_for_attempt(gate.alpha, attempt)
    sums, sizes = _units(scores)
    bound: BootstrapBound | SignBound
    if gate.method == "sign":
        bound = sign_bound(
            scores.differences,
            alpha=alpha_k,
            null=gate.min_effect,
            binary=comparison.binary,
            clustered=False,
        )
    else:
        bound = bootstrap_bound(
            sums, sizes, alpha=alpha_k, null=gate.min_effect, resamples=gate.resamples, seed=gate.seed
        )
    units = "clusters" if bound.clustered else "instances"
    mde = None
    if comparison.difference.se > 0 and comparison.effective_n is not None:
        mde = minimum_detectable_effect(comparison.sd, comparison.effective_n, alpha_k)

    reasons = _sign_test_misuse(gate, comparison)
    if comparison.n < gate.min_instances and not allow_small:
        reasons.append(
            f"only {comparison.n} instances on the selection split; the gate needs at least "
            f"{gate.min_instances} (min_instances), or --allow-small"
        )
    if isinstance(bound, BootstrapBound) and alpha_k < SMALLEST_ALPHA:
        reasons.append(
            f"attempt {attempt} on this selection set leaves alpha_{attempt} = {alpha_k:.2g}, below what"
            " the bootstrap can resolve: no candidate can pass; refresh the selection set (new"
            ' instances, new manifest) or use method = "sign" for 0/1 scores'
        )
    elif not bound.passed:
        lower = points(bound.lower_bound)
        reasons.append(
            f"the {_percent(1 - alpha_k)} lower bound of the difference, {lower} points, does not clear"
            f" min_effect {points(gate.min_effect)} points"
            f" (attempt {attempt}: alpha_{attempt} = {alpha_k:.2g}, p = {bound.p_value:.2g},"
            f" {_method_name(bound)} over {bound.units} {units})"
        )
    reasons.extend(extra_failures)
    return GateDecision(
        passed=not reasons,
        reasons=reasons,
        method=gate.method,
        attempt=attempt,
        alpha=gate.alpha,
        alpha_k=alpha_k,
        alpha_spent=alpha_spent(gate.alpha, attempt),
        min_effect=gate.min_effect,
        min_instances=gate.min_instances,
        allow_small=allow_small,
        seed=gate.seed,
        resamples=gate.resamples,
        comparison=comparison,
        bound=bound,
        mde=mde,
        detectable=detectable_sentence(comparison, mde, gate.min_effect),
    )


def _sign_test_misuse(gate: GateRules, comparison: PairedComparison) -> list[str]:
    """The sign test bounds the net win rate, which is the mean difference only for
    0/1 scores of independent instances. On partial credit it tests the median: a
    rewrite that gains 5 points on nine instances in ten and loses 45 on the tenth
    (no change on average) passed it in nearly every simulated selection set
    (docs/benchmarks.md, "Gate")."""
    if gate.method != "sign":
        return []
    if not comparison.binary:
        return [
            'method = "sign" needs 0/1 scores: on partial credit a candidate can win most '
            'instances and still lose on average; use method = "bootstrap"'
        ]
    if comparison.clusters is not None:
        return [
            'method = "sign" assumes independent instances, but the evaluator reports '
            'clusters; use method = "bootstrap", which resamples whole clusters'
        ]
    return []


def _unit_index(scores: PairedScores) -> list[int]:
    """For each instance, the index of its resampling unit."""
    if scores.clusters is None:
        return list(range(len(scores.instances)))
    index: dict[str, int] = {}
    return [index.setdefault(c, len(index)) for c in scores.clusters]


def _units(scores: PairedScores) -> tuple[list[float], list[int]]:
    """Per unit: the sum of its paired differences and its number of instances."""
    unit_of = _unit_index(scores)
    count = max(unit_of) + 1
    parts: list[list[float]] = [[] for _ in range(count)]
    for unit, d in zip(unit_of, scores.differences, strict=True):
        parts[unit].append(d)
    return [math.fsum(p) for p in parts], [len(p) for p in parts]


def _mean_estimate(values: Sequence[float], unit_of: list[int]) -> MeanEstimate:
    """Mean and its standard error, cluster-robust (CR1, the ratio-estimator
    linearisation of Cameron & Miller 2015) when units hold several instances; with
    one instance per unit it is the usual sd / sqrt(n)."""
    n = len(values)
    mean = math.fsum(values) / n
    count = max(unit_of) + 1
    resid = [0.0] * count
    for unit, x in zip(unit_of, values, strict=True):
        resid[unit] += x - mean
    se = math.sqrt(count / (count - 1) * math.fsum(r * r for r in resid)) / n
    return MeanEstimate(mean=mean, se=se)


def _method_name(bound: BootstrapBound | SignBound) -> str:
    if isinstance(bound, SignBound):
        return "exact McNemar test" if bound.test == "mcnemar" else "exact sign test"
    return "studentized bootstrap"


def _percent(level: float) -> str:
    return f"{level * 100:.4g}%"
