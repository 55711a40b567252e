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
from harnessgit.stats.eprocess import canonical_order, elond_level, evidence
from harnessgit.stats.pairing import PairedScores
from harnessgit.stats.signtest import SignBound, sign_bound
from harnessgit.stats.verdict import DEFAULT_PRIOR, Numbers, Prior, Verdict, chance_above, numbers, posterior

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
    @property
    def policy(self) -> str: ...
    @property
    def q(self) -> float | None: ...


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
    verdict: Verdict = "fail"
    policy: str = "strict"
    q: float | None = None  # bayes: the share of false merges tolerated
    upper_bound: float | None = None  # strict: the one-sided (1 - alpha) upper bound (the fail test)
    numbers: Numbers | None = None  # chance better, expected loss, corrected gain, what would decide
    prior: Prior = DEFAULT_PRIOR
    e_value: float | None = None  # elond: the gain e-value (`harnessgit.stats.eprocess`)
    e_fail: float | None = None  # elond: the no-gain e-value
    level: float | None = None  # elond: alpha_t, the level this comparison is tested at
    passed_before: int | None = None  # elond: D, the comparisons that passed before it


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
    unknowns: Sequence[str] = (),
    prior: Prior = DEFAULT_PRIOR,
    passed_before: int = 0,
) -> GateDecision:
    """The gate's verdict on the statistics, plus any failures the caller found
    (ancestry, checks): passed only if every rule holds and ``extra_failures`` and
    ``unknowns`` (what is missing, e.g. scores: inconclusive rather than fail) are
    empty; the verdict itself is `three_way`'s.

    ``attempt`` is k, the number of gate attempts on this selection set since it was
    last refreshed, this one included; it sets the level alpha_k. ``prior``: the
    distribution of true gains the chance and the corrected gain are computed under;
    ``passed_before``: policy elond's D, the comparisons on this set that passed before.
    """
    comparison = compare(scores)
    alpha_k = alpha_for_attempt(gate.alpha, attempt)
    sums, sizes = _units(scores)
    bound = _bound(scores, comparison, gate, alpha_k, sums, sizes)
    mde = None
    if comparison.difference.se > 0 and comparison.effective_n is not None:
        mde = minimum_detectable_effect(comparison.sd, comparison.effective_n, alpha_k)
    hard = _sign_test_misuse(gate, comparison) + list(extra_failures)  # these make it fail
    soft = []  # these leave it inconclusive: too little to decide on
    if comparison.n < gate.min_instances and not allow_small:
        soft.append(
            f"only {comparison.n} instances on the selection split; the gate needs at least "
            f"{gate.min_instances} (min_instances), or --allow-small"
        )
    rule = _policy_rule(scores, comparison, gate, attempt, bound, prior, passed_before)
    verdict: Verdict = "fail" if hard or rule.verdict == "fail" else "pass"
    if verdict == "pass" and (soft or unknowns or rule.verdict == "inconclusive"):
        verdict = "inconclusive"
    said = numbers(
        prior,
        comparison.difference.mean,
        comparison.difference.se,
        comparison.difference.se * math.sqrt(comparison.n),
        verdict=verdict,
        min_effect=gate.min_effect,
        levels=rule.levels,
        df=degrees_of_freedom(comparison),
    )
    online = rule.online
    return GateDecision(
        passed=verdict == "pass",
        reasons=[*soft, *([rule.reason] if rule.reason else []), *hard, *unknowns],
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
        verdict=verdict,
        policy=gate.policy,
        q=gate.q if gate.policy != "strict" else None,
        upper_bound=rule.upper,
        numbers=said,
        prior=prior,
        e_value=online.e_value if online else None,
        e_fail=online.e_fail if online else None,
        level=online.level if online else None,
        passed_before=passed_before if online else None,
    )


def _bound(
    scores: PairedScores,
    comparison: PairedComparison,
    gate: GateRules,
    alpha_k: float,
    sums: list[float],
    sizes: list[int],
) -> BootstrapBound | SignBound:
    """The one-sided lower bound at alpha_k, by the gate's method."""
    if gate.method == "sign":
        return sign_bound(
            scores.differences, alpha=alpha_k, null=gate.min_effect, binary=comparison.binary, clustered=False
        )
    return bootstrap_bound(
        sums, sizes, alpha=alpha_k, null=gate.min_effect, resamples=gate.resamples, seed=gate.seed
    )


@dataclass(frozen=True)
class _Rule:
    """What a policy's rule says about the statistics alone."""

    verdict: Verdict
    reason: str  # why it did not pass ("" on a pass)
    levels: tuple[float, float]  # the (pass, fail) levels, for what would decide
    upper: float | None = None  # strict: the upper bound of the fail test
    online: ElondTest | None = None  # elond: its e-values and level


def _policy_rule(
    scores: PairedScores,
    comparison: PairedComparison,
    gate: GateRules,
    attempt: int,
    bound: BootstrapBound | SignBound,
    prior: Prior,
    passed_before: int,
) -> _Rule:
    q = gate.q if gate.q is not None else 0.1
    if gate.policy == "bayes":
        verdict, reason = _bayes_rule(comparison, gate, prior)
        return _Rule(verdict, reason, (q, q))
    if gate.policy == "elond":
        online = elond_test(scores, gate, attempt, passed_before)
        return _Rule(online.verdict, online.reason, (online.level, gate.alpha), online=online)
    sums, sizes = _units(scores)
    units = "clusters" if bound.clustered else "instances"
    verdict, reason, upper = _strict_rule(gate, attempt, bound, sums, sizes, units)
    return _Rule(verdict, reason, (alpha_for_attempt(gate.alpha, attempt), gate.alpha), upper=upper)


@dataclass(frozen=True)
class ElondTest:
    verdict: Verdict
    reason: str  # why it did not pass ("" on a pass)
    e_value: float
    e_fail: float
    level: float


def elond_test(scores: PairedScores, gate: GateRules, attempt: int, passed_before: int) -> ElondTest:
    """The elond policy: pass when the gain e-value reaches 1 / alpha_t (e-LOND's level
    for this attempt and the passes before it); fail when the no-gain e-value reaches
    1 / alpha; else inconclusive. Instances are read in `canonical_order`."""
    q = gate.q if gate.q is not None else 0.1
    order = canonical_order(scores.instances, gate.seed)
    diffs = [scores.differences[i] for i in order]
    found = evidence(diffs, gate.min_effect)
    level = elond_level(q, attempt, passed_before)
    said = (
        f"the e-value for a gain beyond min_effect {points(gate.min_effect)} points is {found.gain:.3g}, "
        f"against 1 / alpha_{attempt} = {1 / level:.3g}"
        f" (policy elond, q = {q:g}, {passed_before} passed before)"
    )
    if found.gain >= 1 / level:
        return ElondTest("pass", "", found.gain, found.no_gain, level)
    if found.no_gain >= 1 / gate.alpha:
        worse = f"; the e-value against a gain is {found.no_gain:.3g} >= 1 / alpha = {1 / gate.alpha:.3g}"
        return ElondTest("fail", said + worse, found.gain, found.no_gain, level)
    return ElondTest("inconclusive", said, found.gain, found.no_gain, level)


def _strict_rule(
    gate: GateRules,
    attempt: int,
    bound: BootstrapBound | SignBound,
    sums: list[float],
    sizes: list[int],
    units: str,
) -> tuple[Verdict, str, float | None]:
    """The strict policy: pass when the lower bound at alpha_k clears min_effect; fail
    when the upper bound at alpha is below it (evidence the edit does not gain
    min_effect: with min_effect 0, that it is worse); else inconclusive. Returns the
    verdict, the reason it did not pass ("" on a pass) and the upper bound."""
    alpha_k = alpha_for_attempt(gate.alpha, attempt)
    upper = _upper_bound(gate, bound, sums, sizes)
    if upper.passed:
        worse = (
            f"the {_percent(1 - gate.alpha)} upper bound of the difference, "
            f"{points(-upper.lower_bound)} points, is below min_effect {points(gate.min_effect)} points"
            f" (p = {upper.p_value:.2g})"
        )
        return "fail", worse, -upper.lower_bound
    if isinstance(bound, BootstrapBound) and alpha_k < SMALLEST_ALPHA:
        reason = (
            f"attempt {attempt} on this selection set leaves alpha_{attempt} = {alpha_k:.2g}, below what"
            " the bootstrap can resolve: no candidate can pass; refresh the selection set (new"
            ' instances, new manifest) or use method = "sign" for 0/1 scores'
        )
        return "inconclusive", reason, -upper.lower_bound
    if bound.passed:
        return "pass", "", -upper.lower_bound
    reason = (
        f"the {_percent(1 - alpha_k)} lower bound of the difference, {points(bound.lower_bound)} points, does"
        f" not clear min_effect {points(gate.min_effect)} points"
        f" (attempt {attempt}: alpha_{attempt} = {alpha_k:.2g}, p = {bound.p_value:.2g},"
        f" {_method_name(bound)} over {bound.units} {units})"
    )
    return "inconclusive", reason, -upper.lower_bound


def _upper_bound(
    gate: GateRules, bound: BootstrapBound | SignBound, sums: list[float], sizes: list[int]
) -> BootstrapBound | SignBound:
    """The fail test: the gate's own test, at level alpha, of H0 "the difference is at
    least min_effect", run on the negated differences (its lower bound is minus the
    upper bound of the difference)."""
    if isinstance(bound, SignBound):
        negated = [-s / k for s, k in zip(sums, sizes, strict=True)]
        binary = bound.test == "mcnemar"
        return sign_bound(negated, alpha=gate.alpha, null=-gate.min_effect, binary=binary, clustered=False)
    negated_sums = [-s for s in sums]
    return bootstrap_bound(
        negated_sums, sizes, alpha=gate.alpha, null=-gate.min_effect, resamples=gate.resamples, seed=gate.seed
    )


def _bayes_rule(comparison: PairedComparison, gate: GateRules, prior: Prior) -> tuple[Verdict, str]:
    """The bayes policy: pass when the chance that the edit gains more than min_effect,
    under the prior learned from the repository's recorded gains, is at least 1 - q;
    fail when it is at most q; else inconclusive."""
    q = gate.q if gate.q is not None else 0.1
    post = posterior(
        prior, comparison.difference.mean, comparison.difference.se, degrees_of_freedom(comparison)
    )
    chance = chance_above(post, gate.min_effect)
    said = (
        f"the chance that the edit gains more than min_effect {points(gate.min_effect)} points is"
        f" {_percent(chance)} (policy bayes, q = {q:g}; prior mean {points(prior.mean)} sd"
        f" {points(prior.sd, False)} points from {prior.looks} recorded gains)"
    )
    if chance >= 1 - q:
        return "pass", ""
    if chance <= q:
        return "fail", said + ": at most q"
    return "inconclusive", said + ": neither at least 1 - q nor at most q"


def degrees_of_freedom(comparison: PairedComparison) -> int:
    """The degrees of freedom of the difference's standard error: its units (clusters,
    or instances when they are independent) less one."""
    return (comparison.clusters if comparison.clusters is not None else comparison.n) - 1


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
