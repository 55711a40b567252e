"""Simulated streams of candidates for the gate's policies (pure statistics, no git).

SIMULATED: no evaluator runs. Each candidate has a true gain drawn from a regime's
distribution; its selection scores are 0/1 on n instances, paired with the base's
through a shared draw (an instance the base solves the candidate mostly solves too).
A stream is one selection set gated again and again, each candidate against the same
base, in order, as an optimiser or a team would. The gate's own `decide` judges each,
with the attempt number and (policy bayes) the prior learned from the earlier
candidates' recorded gains, exactly as `harnessgit gate` does.

Used by tests/bench/bench_policies.py (the figures in docs/benchmarks.md) and by
tests/stats/test_policies.py (a smaller run that checks the promises hold).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from harnessgit.config import GateSection
from harnessgit.stats.decision import GateDecision, decide
from harnessgit.stats.pairing import PairedScores
from harnessgit.stats.verdict import PRIOR_ALGORITHM, learn_prior

# regime -> draw of a true gain (points / 100)
Regime = Callable[[random.Random], float]


def mostly_help(rng: random.Random) -> float:
    """Most proposals help a little (GEPA's "proposals mostly help" regime)."""
    return rng.gauss(0.06, 0.04) if rng.random() < 0.6 else rng.gauss(-0.02, 0.03)


def mostly_hurt(rng: random.Random) -> float:
    """Most proposals hurt; a few help."""
    return rng.gauss(0.05, 0.03) if rng.random() < 0.2 else rng.gauss(-0.05, 0.05)


REGIMES: dict[str, Regime] = {"mostly-help": mostly_help, "mostly-hurt": mostly_hurt}


def scores(rng: random.Random, n: int, gain: float, keep: float = 0.7) -> PairedScores:
    """0/1 scores of base and candidate on n instances; the candidate's chance on each
    instance is the base's plus ``gain`` (clipped), and with chance ``keep`` it reuses
    the base's draw (pairing)."""
    base, cand = [], []
    for _ in range(n):
        p = rng.uniform(0.25, 0.75)
        u = rng.random()
        v = u if rng.random() < keep else rng.random()
        base.append(1.0 if u < p else 0.0)
        cand.append(1.0 if v < min(1.0, max(0.0, p + gain)) else 0.0)
    return PairedScores(instances=[f"i{k}" for k in range(n)], base=base, candidate=cand)


@dataclass
class Stream:
    """What one stream's gates decided: per candidate, (true gain, decision)."""

    decisions: list[tuple[float, GateDecision]] = field(default_factory=list)


def run_stream(
    rules: GateSection,
    regime: Regime,
    *,
    candidates: int,
    n: int,
    seed: int,
    algorithm: int = PRIOR_ALGORITHM,
) -> Stream:
    """Gate ``candidates`` candidates of ``regime`` on one selection set of ``n``, the
    prior learned by ``algorithm``."""
    rng = random.Random(seed)
    stream = Stream()
    looks: list[tuple[float, float]] = []
    passes = 0
    for attempt in range(1, candidates + 1):
        gain = regime(rng)
        decision = decide(
            scores(rng, n, gain),
            rules,
            attempt=attempt,
            prior=learn_prior(looks, algorithm=algorithm),
            passed_before=passes,
        )
        passes += decision.verdict == "pass"
        looks.append((decision.comparison.difference.mean, decision.comparison.difference.se))
        stream.decisions.append((gain, decision))
    return stream


@dataclass(frozen=True)
class Summary:
    merges: int
    false_merges: int  # merged with a true gain <= 0
    fails: int
    inconclusive: int
    candidates: int
    merged_gain: float  # sum of the true gains merged
    merged_observed: float  # sum of their observed selection gains
    merged_corrected: float  # sum of their gains corrected for selection
    # per stated-chance decile: (stated chances, truly better)
    deciles: list[tuple[list[float], list[bool]]]

    @property
    def false_share(self) -> float:
        return self.false_merges / self.merges if self.merges else 0.0


def summarise(streams: list[Stream]) -> Summary:
    deciles: list[tuple[list[float], list[bool]]] = [([], []) for _ in range(10)]
    merges = false = fails = unsure = total = 0
    merged_gain = merged_observed = merged_corrected = 0.0
    for stream in streams:
        for gain, decision in stream.decisions:
            total += 1
            assert decision.numbers is not None
            if decision.verdict == "pass":
                merges += 1
                false += gain <= 0
                merged_gain += gain
                merged_observed += decision.comparison.difference.mean
                merged_corrected += decision.numbers.corrected
            fails += decision.verdict == "fail"
            unsure += decision.verdict == "inconclusive"
            chance = decision.numbers.chance_better
            stated, truth = deciles[min(9, int(chance * 10))]
            stated.append(chance)
            truth.append(gain > 0)
    return Summary(
        merges, false, fails, unsure, total, merged_gain, merged_observed, merged_corrected, deciles
    )


def policies(resamples: int = 2000) -> dict[str, GateSection]:
    strict = GateSection(resamples=resamples, min_instances=2)
    return {
        "strict": strict,
        "bayes": replace(strict, policy="bayes", q=0.1),
        "elond": replace(strict, policy="elond", q=0.1),
    }
