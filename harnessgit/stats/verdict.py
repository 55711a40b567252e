"""Three verdicts and the numbers every verdict states, pure (no git, no I/O).

A gate says ``pass`` (evidence the edit improves on the base beyond min_effect),
``fail`` (evidence it does not: its upper bound is below min_effect, which with the
default min_effect 0 means it is worse) or ``inconclusive`` (neither). Whatever it
says, it also states in plain words:

- the chance the edit is better than the base: P(true gain > 0) under a normal
  posterior for the true gain (`posterior`);
- the expected loss if merged anyway: E[max(0, -true gain)] under that posterior, in
  points, the "risk" of A/B platforms (GrowthBook's Bayesian engine);
- for an inconclusive verdict, what would decide: about how many selection
  instances an effect of the observed size needs for 80% power at this attempt's
  level (`instances_needed`).

The posterior's prior is learned from the gains the repository's gate records
measured (`learn_prior`; the A/B testing literature: Deng 2015; Azevedo et al. 2020): a
run whose edits rarely help shrinks a lucky selection gain towards what edits usually
gain. The posterior mean is the gain reported for a selected candidate, corrected for
selection (item 5 of issue 25: the winner's curse). Before it has enough recorded
gains (LOOKS_TO_LEARN) an algorithm uses the default prior (DEFAULT_PRIOR).

Three algorithms learn the prior; a gate record names the one that decided it
(``prior_algorithm``) and `verify` recomputes it with that one:

1. (records written before issue 25 item 3; no ``prior_algorithm`` on record) the
   nonparametric maximum-likelihood prior on GRID, smoothed with pseudo-looks of the
   default. From 5-40 looks with 7 points of noise each it is far too sure of itself:
   on simulated streams whose true gains it was not tuned on, looks stated 75% likely
   to be better were better 34-61% of the time (docs/benchmarks.md, "calib").
2. (records of issue 25 item 3's first pass) hierarchical Bayes over a family of
   priors: normal true gains (mean HYPER_MEANS, sd HYPER_SDS) of which a share HYPER_NULL_SHARES has
   no effect at all (an edit that changes nothing measurable: the spike at 0 of
   spike-and-slab priors). The looks weigh each member by how well it predicts them;
   the prior is their weighted average (the predictive distribution of the next
   edit's true gain). Integrating over the members the looks cannot tell apart,
   instead of choosing one, is what keeps the stated chances honest when the prior is
   learned from few looks.
3. (PRIOR_ALGORITHM, the default) algorithm 2's family and hyperprior, with two
   things it got wrong put right. Its stated chances of 90% and more were 6-16 points
   too high on simulated runs (docs/benchmarks.md, "calib"); the diagnosis
   (docs/benchmarks.md, "calib2") found two causes, both in how a look is read:
   - with 1-4 looks algorithm 2 fell back to DEFAULT_PRIOR, whose fat tail (a tenth of
     edits with sd 25 points) and missing noise floor let one lucky large gain be
     believed, though 1-4 looks already say how large a run's gains are. Algorithm 3
     learns the hierarchical prior from the first look on (LOOKS_TO_LEARN);
   - a look's standard error is itself estimated, from its n instances or its few
     clusters (12 on the simulated judge), so how far the observed gain lies from the
     true one in standard errors follows Student's t with (units - 1) degrees of
     freedom, not the normal: a look whose own se came out small by chance was
     believed as if that se were exact. Algorithm 3's likelihood of a look decided on
     its own se is that t (`posterior`'s ``df``); one decided on the floor (the looks'
     root-mean-square se, pooled over many looks) stays normal.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist
from types import MappingProxyType
from typing import Any, Literal

Verdict = Literal["pass", "fail", "inconclusive"]
VERDICTS: tuple[Verdict, ...] = ("pass", "fail", "inconclusive")

# Power at which "what would decide" is quoted.
POWER = 0.8
# Recorded gains needed before the prior is learned rather than assumed.
MIN_LOOKS = 5
# The prior before then: true gains of harness edits mostly within +-10 points, a
# sceptical guess (a wider one made the stated chances overconfident on simulated
# streams: docs/benchmarks.md, "Gate policies").
DEFAULT_PRIOR_SD = 0.05
TAIL_SHARE = 0.1
TAIL_SD = 0.25
# A learned prior never gets narrower than this (a run of identical looks would
# otherwise make every later gain collapse onto their mean).
SMALLEST_PRIOR_SD = 0.005
# Past this many instances an effect is too small to chase: "what would decide" says so.
MOST_INSTANCES = 1_000_000
# The true gains a learned prior puts weight on: -50 to +50 points, by half points.
GRID = tuple(j / 200 for j in range(-100, 101))
# The default prior counts as this many looks beside the learned ones (smoothing).
PSEUDO_LOOKS = 20
# ... and beside the looks an optimiser screened, which are not selected (`screened_prior`).
SCREENED_PSEUDO_LOOKS = 5
EM_ROUNDS = 300
# Algorithm 2: the family of priors the looks weigh (points / 100), and the hyperprior:
# uniform over means and sds, and over the share of edits with no effect as listed
# (share, weight): half the weight on "every edit has some effect".
PRIOR_ALGORITHM = 3
PRIOR_ALGORITHMS = (1, 2, 3)
# Recorded gains each algorithm needs before it learns the prior (fewer: DEFAULT_PRIOR).
LOOKS_TO_LEARN: Mapping[int, int] = MappingProxyType({1: MIN_LOOKS, 2: MIN_LOOKS, 3: 1})
# evolve's prior from the looks it screened stays algorithm 1: against GEPA on both
# simulated tasks (tests/bench/bench_vs_gepa.py, 20 seeds; docs/benchmarks.md, "After the
# merges") both met the same 10 of item 6's 16 conditions, with the same regressions and
# worst runs where proposals mostly hurt, and algorithm 1 gained 0.4-1.2 points more where
# they help (it passes more real gains). Its stated chances run higher than algorithm 2's
# where edits mostly hurt (docs/gate.md says so); the gate records' prior is algorithm 2's.
SCREENED_PRIOR_ALGORITHM = 1
HYPER_MEANS = tuple(j / 100 for j in range(-15, 16))
HYPER_SDS = (0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.12)
HYPER_NULL_SHARES = ((0.0, 0.5), (0.25, 0.25), (0.5, 0.25))

_NORMAL = NormalDist()


@dataclass(frozen=True)
class Prior:
    """The distribution of true gains (points / 100) an edit is drawn from, learned
    from ``looks`` recorded gains (0: the default prior): ``weights`` on GRID when
    learned, else normal; ``mean`` and ``sd`` are its mean and standard deviation."""

    mean: float
    sd: float
    looks: int
    weights: tuple[float, ...] | None = None
    # The root-mean-square standard error of the looks: the floor of a look's standard
    # error (on 0/1 scores a look with few discordant pairs understates its own).
    noise: float = 0.0
    # Which algorithm learned it (`learn_prior`); the default prior is algorithm 1's
    # (algorithm 3 with no looks marks it 3: the look is then read with 3's likelihood).
    algorithm: int = 1


@dataclass(frozen=True)
class Posterior:
    mean: float  # the gain corrected for selection
    sd: float
    weights: tuple[float, ...] | None = None  # on GRID; None: normal(mean, sd)


@dataclass(frozen=True)
class Numbers:
    """What every verdict states besides itself."""

    chance_better: float  # P(true gain > 0)
    expected_loss: float  # E[max(0, -true gain)], points / 100
    corrected: float  # posterior mean gain: the observed gain corrected for selection
    posterior_sd: float
    needed: int | None  # selection instances that would decide; None: nothing to say


def screened_prior(gains: Sequence[tuple[float, float]], algorithm: int = SCREENED_PRIOR_ALGORITHM) -> Prior:
    """The prior learned from the looks an optimiser screened (evolve: every minibatch
    winner scored on the selection split, which it did not choose by those scores).
    Algorithm 1 smooths these with only SCREENED_PSEUDO_LOOKS looks of the default,
    since they are not selected; algorithm 2 learns every prior the same way."""
    return learn_prior(gains, pseudo_looks=SCREENED_PSEUDO_LOOKS, algorithm=algorithm)


def learn_prior(
    gains: Sequence[tuple[float, float]], pseudo_looks: int = PSEUDO_LOOKS, algorithm: int = PRIOR_ALGORITHM
) -> Prior:
    """The prior of true gains from recorded (gain, standard error) pairs, by
    ``algorithm`` (module docstring): 2 and 3, the hierarchical prior
    (`hierarchical_prior`); 1, the nonparametric maximum-likelihood mixing distribution
    on GRID (Kiefer-Wolfowitz; EM as in Jiang & Zhang 2009) smoothed with
    ``pseudo_looks`` looks' worth of the default prior (2 and 3 ignore ``pseudo_looks``).
    Fewer pairs than the algorithm's LOOKS_TO_LEARN: DEFAULT_PRIOR."""
    if algorithm not in PRIOR_ALGORITHMS:
        raise ValueError(f"prior algorithm {algorithm}: must be one of {PRIOR_ALGORITHMS}")
    if not gains and algorithm >= 3:  # the default prior, decided under algorithm 3's likelihood
        return replace(DEFAULT_PRIOR, algorithm=algorithm)
    if len(gains) < LOOKS_TO_LEARN[algorithm]:
        return DEFAULT_PRIOR
    if algorithm >= 2:
        return hierarchical_prior(gains, algorithm)
    import numpy as np

    grid = np.array(GRID)
    start = DEFAULT_PRIOR.weights or _normal_weights(DEFAULT_PRIOR)
    noise = math.sqrt(statistics.fmean(s * s for _, s in gains))
    x = np.array([g for g, _ in gains])[:, None]
    se = np.maximum(np.array([s for _, s in gains]), max(noise, SMALLEST_PRIOR_SD))[:, None]
    likelihood = np.exp(-0.5 * ((x - grid[None, :]) / se) ** 2) / se
    weights = np.array(start)
    for _ in range(EM_ROUNDS):
        joint = likelihood * weights[None, :]
        joint /= np.maximum(joint.sum(axis=1, keepdims=True), 1e-300)
        weights = joint.mean(axis=0)
    looks = len(gains)
    mixed = (looks * weights + pseudo_looks * np.array(start)) / (looks + pseudo_looks)
    return _grid_prior(tuple(float(w) for w in mixed / mixed.sum()), looks, noise)


def hierarchical_prior(gains: Sequence[tuple[float, float]], algorithm: int = 2) -> Prior:
    """Algorithms 2 and 3: the prior of true gains as the average of the family's members
    (`prior_family`) weighted by the hyperprior times how likely each makes the
    recorded (gain, standard error) pairs (normal likelihood; a look's standard error
    floored at the looks' root-mean-square one, as algorithm 1 does)."""
    import numpy as np

    members, log_hyper = prior_family()
    grid = np.array(GRID)
    noise = math.sqrt(statistics.fmean(s * s for _, s in gains))
    x = np.array([g for g, _ in gains])[:, None]
    se = np.maximum(np.array([s for _, s in gains]), max(noise, SMALLEST_PRIOR_SD))[:, None]
    likelihood = np.exp(-0.5 * ((x - grid[None, :]) / se) ** 2) / se
    log_fit = np.log(np.maximum(likelihood @ members.T, 1e-300)).sum(axis=0) + log_hyper
    belief = np.exp(log_fit - log_fit.max())
    weights = (belief / belief.sum()) @ members
    weights = weights / weights.sum()
    return _grid_prior(tuple(float(w) for w in weights), len(gains), noise, algorithm=algorithm)


@functools.cache
def prior_family() -> tuple[Any, Any]:
    """Algorithms 2 and 3's family of priors on GRID (one row per member) and the log of
    the hyperprior's weight of each."""
    import numpy as np

    grid = np.array(GRID)
    zero = int(np.argmin(np.abs(grid)))
    rows, logs = [], []
    for mean in HYPER_MEANS:
        for sd in HYPER_SDS:
            normal = np.exp(-0.5 * ((grid - mean) / sd) ** 2)
            normal /= normal.sum()
            for share, weight in HYPER_NULL_SHARES:
                row = (1 - share) * normal
                row[zero] += share
                rows.append(row)
                logs.append(math.log(weight))
    return np.array(rows), np.array(logs)


def _normal_weights(prior: Prior) -> tuple[float, ...]:
    raw = [math.exp(-0.5 * ((g - prior.mean) / prior.sd) ** 2) for g in GRID]
    total = math.fsum(raw)
    return tuple(w / total for w in raw)


def _grid_prior(weights: tuple[float, ...], looks: int, noise: float, algorithm: int = 1) -> Prior:
    mean = math.fsum(w * g for w, g in zip(weights, GRID, strict=True))
    var = math.fsum(w * (g - mean) ** 2 for w, g in zip(weights, GRID, strict=True))
    return Prior(mean, max(math.sqrt(var), SMALLEST_PRIOR_SD), looks, weights, noise, algorithm)


def _mixture_prior() -> Prior:
    """The default prior: sceptical about small gains (normal, sd DEFAULT_PRIOR_SD) with
    a fat tail (a share TAIL_SHARE with sd TAIL_SD), so that a large observed effect is
    believed: true effects of product changes are fat-tailed (Azevedo et al. 2020)."""
    narrow = _normal_weights(Prior(0.0, DEFAULT_PRIOR_SD, 0))
    wide = _normal_weights(Prior(0.0, TAIL_SD, 0))
    mixed = tuple((1 - TAIL_SHARE) * a + TAIL_SHARE * b for a, b in zip(narrow, wide, strict=True))
    return _grid_prior(mixed, 0, 0.0)


DEFAULT_PRIOR = _mixture_prior()


def posterior(prior: Prior, gain: float, se: float, df: int | None = None) -> Posterior:
    """The posterior of the true gain given an observed ``gain`` with standard error
    ``se``, floored at the looks' noise; with ``se`` 0 the observation decides alone.
    The likelihood is normal, or under a prior of algorithm 3, when the look's own
    ``se`` is used (not the floor, pooled over many looks) and ``df`` is given,
    Student's t with ``df`` degrees of freedom (that se was estimated from df + 1
    instances or clusters)."""
    student = prior.algorithm >= 3 and df is not None and df >= 1 and se >= prior.noise
    se = max(se, prior.noise)
    if se <= 0:
        return Posterior(gain, 0.0)
    if prior.weights is None:
        weight = prior.sd**2 / (prior.sd**2 + se**2)
        return Posterior(prior.mean + weight * (gain - prior.mean), math.sqrt(weight) * se)
    if student and df is not None:
        logs = [-(df + 1) / 2 * math.log1p(((gain - g) / se) ** 2 / df) for g in GRID]
    else:
        logs = [-0.5 * ((gain - g) / se) ** 2 for g in GRID]
    top = max(logs)
    raw = [w * math.exp(lg - top) for w, lg in zip(prior.weights, logs, strict=True)]
    total = math.fsum(raw)
    weights = tuple(r / total for r in raw)
    mean = math.fsum(w * g for w, g in zip(weights, GRID, strict=True))
    var = math.fsum(w * (g - mean) ** 2 for w, g in zip(weights, GRID, strict=True))
    return Posterior(mean, math.sqrt(var), weights)


def chance_above(post: Posterior, threshold: float = 0.0) -> float:
    """P(true gain > threshold) under the posterior."""
    if post.weights is not None:
        return min(
            1.0, math.fsum(w for w, g in zip(post.weights, GRID, strict=True) if g > threshold + 1e-12)
        )
    if post.sd <= 0:
        return 1.0 if post.mean > threshold else 0.0
    return 1 - _NORMAL.cdf((threshold - post.mean) / post.sd)


def expected_loss(post: Posterior) -> float:
    """E[max(0, -true gain)]: what merging anyway costs on average, points / 100."""
    if post.weights is not None:
        return math.fsum(w * -g for w, g in zip(post.weights, GRID, strict=True) if g < 0)
    m, s = post.mean, post.sd
    if s <= 0:
        return max(0.0, -m)
    z = m / s
    return max(0.0, s * _NORMAL.pdf(z) - m * _NORMAL.cdf(-z))


def instances_needed(sd: float, effect: float, level: float, power: float = POWER) -> int | None:
    """Instances a one-sided level-``level`` test needs to detect a true ``effect``
    (its distance from the threshold) with ``power``, per-instance spread ``sd``
    (normal approximation). None when the effect is 0 or nothing varies."""
    if effect <= 0 or sd <= 0 or not 0 < level < 1:
        return None
    n = ((_NORMAL.inv_cdf(1 - level) + _NORMAL.inv_cdf(power)) * sd / effect) ** 2
    return min(MOST_INSTANCES, max(2, math.ceil(n)))


def numbers(
    prior: Prior,
    gain: float,
    se: float,
    sd: float,
    *,
    verdict: Verdict,
    min_effect: float,
    levels: tuple[float, float],
    df: int | None = None,
) -> Numbers:
    """The numbers a verdict states. ``sd``: the per-instance spread of the paired
    differences (cluster-robust: se * sqrt(n)); ``levels``: the (pass, fail) levels
    of this attempt, for what would decide; ``df``: the look's degrees of freedom
    (`posterior`)."""
    post = posterior(prior, gain, se, df)
    needed = None
    if verdict == "inconclusive":
        if gain > min_effect:
            needed = instances_needed(sd, gain - min_effect, levels[0])
        else:
            needed = instances_needed(sd, min_effect - gain, levels[1])
    return Numbers(
        chance_better=chance_above(post),
        expected_loss=expected_loss(post),
        corrected=post.mean,
        posterior_sd=post.sd,
        needed=needed,
    )


def legacy_verdict(passed: bool) -> Verdict:
    """The verdict of a record written before there were three: a rejection then
    meant "did not pass" and exited 1, which is what ``fail`` exits."""
    return "pass" if passed else "fail"
