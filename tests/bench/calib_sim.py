"""Simulated looks for the calibration of the stated chance that an edit is better
(issue 25, item 3; tests/bench/bench_policies.py --calibration, docs/benchmarks.md "calib").

SIMULATED: no evaluator runs. A run is a stream of looks (an optimiser's screened
candidates, or a repository's gate records), each a candidate against the base on one
selection set of 36 instances; its true gain is drawn from a regime, and every look
states its chance of being better under the prior learned from the looks before it
(`learn_prior`, by a given algorithm), exactly as evolve and `gate` do. Two shapes of
scores:

- ``binary``: 0/1 outcomes, paired (as tests/bench/policy_sim.py): the candidate reuses
  the base's draw with chance 0.7, its chance on an instance is the base's plus the gain;
- ``judge``: partial credit from a noisy judge on clustered instances (as
  tests/bench/sim_judge_task.py): 12 clusters of 3 sharing a difficulty offset, 4
  rubric items each met with the instance's chance, a random grade with chance 0.2;
  the standard error is the gate's cluster-robust one.

The regimes fall in three groups: ``tuned`` (policy_sim's two, which algorithm 1's
settings were tuned on), ``chosen`` (looked at while choosing algorithm 2's family),
``fresh`` (written after algorithm 2 was fixed, never used to choose anything),
``held-out`` (written before algorithm 3's diagnosis, never used to choose anything).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from harnessgit.stats.decision import compare, degrees_of_freedom
from harnessgit.stats.pairing import PairedScores
from harnessgit.stats.verdict import chance_above, learn_prior, posterior

Regime = Callable[[random.Random], float]
N = 36


def _mix(*parts: tuple[float, Regime]) -> Regime:
    def draw(rng: random.Random) -> float:
        u, acc = rng.random(), 0.0
        for share, part in parts:
            acc += share
            if u < acc:
                return part(rng)
        return parts[-1][1](rng)

    return draw


def _at(value: float) -> Regime:
    return lambda rng: value


def _normal(mean: float, sd: float) -> Regime:
    return lambda rng: rng.gauss(mean, sd)


def _uniform(low: float, high: float) -> Regime:
    return lambda rng: rng.uniform(low, high)


def _laplace(scale: float) -> Regime:
    return lambda rng: rng.expovariate(1 / scale) * (1 if rng.random() < 0.5 else -1)


# group -> name -> regime (true gains, points / 100)
REGIMES: dict[str, dict[str, Regime]] = {
    "tuned": {
        "policy_sim mostly-help": _mix((0.6, _normal(0.06, 0.04)), (0.4, _normal(-0.02, 0.03))),
        "policy_sim mostly-hurt": _mix((0.2, _normal(0.05, 0.03)), (0.8, _normal(-0.05, 0.05))),
    },
    "chosen": {
        "80% -5, 20% +5": _mix((0.8, _at(-0.05)), (0.2, _at(0.05))),
        "prompt-like: -1, -5, +5..+15": _mix(
            (0.45, _at(-0.01)), (0.35, _at(-0.05)), (0.2, _uniform(0.05, 0.15))
        ),
        "75% +4, 25% -6": _mix((0.75, _at(0.04)), (0.25, _at(-0.06))),
        "60% null, 25% +4, 15% -8": _mix(
            (0.6, _at(0.0)), (0.25, _normal(0.04, 0.02)), (0.15, _normal(-0.08, 0.03))
        ),
        "fat tails: 15% Laplace 12": _mix((0.85, _normal(-0.02, 0.02)), (0.15, _laplace(0.12))),
        "all harmful, about -6": _normal(-0.06, 0.03),
    },
    "fresh": {
        "70% -4, 30% +6": _mix((0.7, _at(-0.04)), (0.3, _at(0.06))),
        "65% +3, 25% -2, 10% Laplace 10": _mix(
            (0.65, _normal(0.03, 0.01)), (0.25, _at(-0.02)), (0.1, _laplace(0.1))
        ),
        "small effects, about -0.5": _normal(-0.005, 0.015),
        "rare big wins: 10% +8..+20": _mix((0.9, _normal(-0.03, 0.02)), (0.1, _uniform(0.08, 0.2))),
        "half null, half about +2": _mix((0.5, _at(0.0)), (0.5, _normal(0.02, 0.04))),
        "uniform -10..+10": _uniform(-0.1, 0.1),
    },
    # Written by calib2 before its diagnosis of the top decile, and never used to choose
    # algorithm 3 (that was diagnosed and chosen on "tuned" and "chosen" only).
    "held-out": {
        "40% -3, 40% +1, 20% +7": _mix((0.4, _at(-0.03)), (0.4, _at(0.01)), (0.2, _at(0.07))),
        "normal, +1 sd 4": _normal(0.01, 0.04),
        "85% null, 15% +6": _mix((0.85, _at(0.0)), (0.15, _at(0.06))),
        "Laplace 5 about +1": lambda rng: 0.01 + _laplace(0.05)(rng),
        "skewed: -2 plus exponential 3": lambda rng: -0.02 + rng.expovariate(1 / 0.03),
        "half -8, half +8": _mix((0.5, _at(-0.08)), (0.5, _at(0.08))),
    },
}


def binary_look(rng: random.Random, gain: float) -> PairedScores:
    base, cand = [], []
    for _ in range(N):
        p = rng.uniform(0.25, 0.75)
        u = rng.random()
        v = u if rng.random() < 0.7 else rng.random()
        base.append(1.0 if u < p else 0.0)
        cand.append(1.0 if v < min(1.0, max(0.0, p + gain)) else 0.0)
    return PairedScores(instances=[f"i{k}" for k in range(N)], base=base, candidate=cand)


def judge_look(rng: random.Random, gain: float) -> PairedScores:
    base, cand, clusters = [], [], []
    for k in range(N):
        if k % 3 == 0:
            offset = rng.uniform(-0.15, 0.15)
        p = min(0.9, max(0.05, rng.uniform(0.15, 0.75) + offset))
        shared = [rng.random() for _ in range(4)]
        for side, chance in ((base, p), (cand, min(1.0, max(0.0, p + gain)))):
            if rng.random() < 0.2:  # the judge slips: a random grade
                side.append(rng.randrange(5) / 4)
                continue
            draws = [u if rng.random() < 0.7 else rng.random() for u in shared]
            side.append(sum(u < chance for u in draws) / 4)
        clusters.append(f"c{k // 3}")
    return PairedScores(instances=[f"i{k}" for k in range(N)], base=base, candidate=cand, clusters=clusters)


SHAPES = {"binary": binary_look, "judge": judge_look}


@dataclass(frozen=True)
class Looks:
    """One run's looks: (true gain, observed gain, standard error, its degrees of
    freedom) each."""

    looks: list[tuple[float, float, float, int]]


def draw_run(regime: Regime, shape: str, looks: int, seed: int) -> Looks:
    rng = random.Random(seed)
    out = []
    for _ in range(looks):
        gain = regime(rng)
        comparison = compare(SHAPES[shape](rng, gain))
        difference = comparison.difference
        # A few 0/1 instances that all tie have se 0: floor it at one instance's flip
        # (as evolve's screening does).
        out.append((gain, difference.mean, max(difference.se, 1 / N), degrees_of_freedom(comparison)))
    return Looks(out)


def stated(run: Looks, algorithm: int, pseudo_looks: int, student: bool = True) -> list[tuple[float, bool]]:
    """Per look, (stated chance it is better, truly better) under the prior learned by
    ``algorithm`` from the looks before it, as `decide` states it (``student`` False:
    without the look's degrees of freedom, so algorithm 3's likelihood is normal)."""
    out = []
    for k, (gain, observed, se, df) in enumerate(run.looks):
        prior = learn_prior([(o, s) for _, o, s, _ in run.looks[:k]], pseudo_looks, algorithm=algorithm)
        out.append((chance_above(posterior(prior, observed, se, df if student else None)), gain > 0))
    return out
