"""Family-wise false accepts when evolve chooses what to gate (issue 13), in simulation.

    python tests/bench/bench_evolve_screen.py [--runs 1000] [--looks 15] [--n 36]

Each run scores LOOKS candidates that are no better than the base on one selection
set of N instances, as evolve does (each candidate that wins its minibatch is
scored on the selection split), and decides for each whether to gate it. A gated
null candidate that passes the gate is a false accept. The gate alone guarantees
at most alpha = 0.05 over its attempts; the question is what evolve's choice of
what to gate does to that. Three rules, on the same simulated runs:

- "would pass": gate a candidate when the gate's bound clears min_effect at the
  next attempt's alpha_k (an attempt is spent only when gated);
- "detectable" (harnessgit before issue 13): gate once the observed gain reaches
  min_effect plus the minimum detectable effect at alpha_k;
- "look-charged" (`harnessgit.evolve.policy.judge`): each look tested at its share
  alpha_k / LOOKS.

Outcomes as in bench_gate_sim.py: difficulty p_i ~ Beta(0.6, 0.2), independent 0/1
draws for base and candidates. The gate's bootstrap (10,000 resamples) decides.
"""

from __future__ import annotations

import argparse
import random
import time

from harnessgit.config import GateSection
from harnessgit.evolve.policy import LookRequest, Looks, judge
from harnessgit.stats.decision import alpha_for_attempt, compare, decide, minimum_detectable_effect
from harnessgit.stats.pairing import PairedScores, Scored, pair_scores


def scores(rng: random.Random, p: list[float]) -> Scored:
    return {f"s{i}": (float(rng.random() < q), None) for i, q in enumerate(p)}


def would_pass(gate: GateSection, paired: PairedScores, attempt: int) -> bool:
    return decide(paired, gate, attempt=attempt).passed


def detectable(gate: GateSection, paired: PairedScores, attempt: int) -> bool:
    comparison = compare(paired)
    gain = comparison.difference.mean
    if gain <= gate.min_effect or not comparison.effective_n:
        return False
    if comparison.sd > 0:
        bar = minimum_detectable_effect(
            comparison.sd, comparison.effective_n, alpha_for_attempt(gate.alpha, attempt)
        )
        if gain < gate.min_effect + bar:
            return False
    return decide(paired, gate, attempt=attempt).passed


def run(rng: random.Random, looks: int, n: int, gate: GateSection) -> dict[str, bool]:
    p = [rng.betavariate(0.6, 0.2) for _ in range(n)]
    base = scores(rng, p)
    false = {"would pass": False, "detectable": False, "look-charged": False}
    attempts = {"would pass": 1, "detectable": 1}
    charged = Looks()
    for _ in range(looks):
        candidate = scores(rng, p)
        paired = pair_scores(base, candidate)
        assert paired is not None
        for name, rule in (("would pass", would_pass), ("detectable", detectable)):
            if false[name] or not rule(gate, paired, attempts[name]):
                continue
            # Gated: a pass is a false accept (the candidate is no better); a failure spends the attempt.
            false[name] = decide(paired, gate, attempt=attempts[name]).passed
            attempts[name] += 1
        verdict = judge(LookRequest(gate, "main", base, candidate, 1, "b", looks), charged)
        false["look-charged"] |= verdict.gate
    return false


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--looks", type=int, default=15)
    parser.add_argument("--n", type=int, default=36)
    args = parser.parse_args()
    gate = GateSection()
    rng = random.Random(0)
    started = time.perf_counter()
    counts = {"would pass": 0, "detectable": 0, "look-charged": 0}
    for _ in range(args.runs):
        for name, hit in run(rng, args.looks, args.n, gate).items():
            counts[name] += hit
    print(
        f"{args.runs} runs of {args.looks} null candidates on {args.n} selection instances,"
        f" alpha = {gate.alpha}:"
    )
    print("| rule | runs with a false accept |")
    print("|---|---|")
    for name, count in counts.items():
        print(f"| {name} | {count / args.runs:.1%} ({count}/{args.runs}) |")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
