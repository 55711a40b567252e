"""A selection pool larger than one gate's sample (issue 25, item 2): how often an
inconclusive gate on the sample becomes pass or fail when it may read the pool, the
rollouts it spends, and its false passes when the edit gains nothing.

Run:  PYTHONPATH=. .venv/bin/python tests/bench/bench_gate_pool.py            (a few minutes)
      PYTHONPATH=. .venv/bin/python tests/bench/bench_gate_pool.py --quick    (a smoke run)

SIMULATED (tests/bench/policy_sim.py `scores`): no evaluator runs; 0/1 scores on a
pool of 150 selection instances per gate, the candidate's chance on each instance the
base's plus the true gain. Each gate is a first attempt (k = 1) decided exactly as
`harnessgit gate` with `[gate] sample = 36` decides: the policy's `decide` on the first
36 instances of the pool in the e-process's reading order and, when that is
inconclusive, `harnessgit.gate.selection_pool.settle` over further batches of 36 (72, 108, 144,
150 instances). Baselines measured in the same run on the same draws: the gate on the
sample alone (no pool), and the policy's `decide` on all 150 instances at once (fixed n).
"strict, alpha 0.025" is strict at half the alpha: with a pool, per docs/gate.md, that
keeps strict's family-wise promise at 0.05.
A rollout is one evaluation of one side on one instance (a gate reads both sides).

Not a test: tests never assert figures.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harnessgit.config import GateSection
from harnessgit.gate.selection_pool import extension_ends, pass_level, settle
from harnessgit.gate.sequential import reading_order
from harnessgit.stats.decision import decide
from harnessgit.stats.pairing import PairedScores
from tests.bench.policy_sim import scores

POOL, SAMPLE = 150, 36
GAINS = (-0.10, -0.05, 0.0, 0.05, 0.10)


@dataclass
class Cell:
    """Counts over the gates of one (policy, true gain)."""

    runs: int = 0
    sample: dict[str, int] = field(default_factory=lambda: {"pass": 0, "fail": 0, "inconclusive": 0})
    pooled: dict[str, int] = field(default_factory=lambda: {"pass": 0, "fail": 0, "inconclusive": 0})
    fixed: dict[str, int] = field(default_factory=lambda: {"pass": 0, "fail": 0, "inconclusive": 0})
    extended: int = 0  # inconclusive on the sample, so the pool was read
    settled: dict[str, int] = field(default_factory=lambda: {"pass": 0, "fail": 0})  # of those
    rollouts: int = 0  # with the pool


def ordered(paired: PairedScores, seed: int) -> PairedScores:
    """``paired`` in the reading order (what the gate's sample and pool batches follow)."""
    index = {name: k for k, name in enumerate(paired.instances)}
    keep = [index[name] for name in reading_order(paired.instances, seed)]
    return PairedScores(
        [paired.instances[k] for k in keep],
        [paired.base[k] for k in keep],
        [paired.candidate[k] for k in keep],
    )


def one_gate(rules: GateSection, pool: PairedScores, cell: Cell) -> None:
    first = decide(PairedScores(pool.instances[:SAMPLE], pool.base[:SAMPLE], pool.candidate[:SAMPLE]), rules)
    cell.runs += 1
    cell.sample[first.verdict] += 1
    cell.fixed[decide(pool, rules).verdict] += 1
    verdict, read = first.verdict, SAMPLE
    if first.verdict == "inconclusive":
        cell.extended += 1
        ends = extension_ends(SAMPLE, POOL, SAMPLE, rules.min_instances)
        found = settle(
            pool, ends, null=rules.min_effect, seed=rules.seed, level=pass_level(first), alpha=rules.alpha
        )
        verdict, read = found.verdict, found.read
        if verdict != "inconclusive":
            cell.settled[verdict] += 1
    cell.pooled[verdict] += 1
    cell.rollouts += 2 * read


def counts(verdicts: dict[str, int]) -> str:
    return f"{verdicts['pass']} / {verdicts['fail']} / {verdicts['inconclusive']}"


def run(runs: int, resamples: int) -> None:
    base = GateSection(resamples=resamples, min_instances=30, sample=SAMPLE)
    rules = {
        "strict": base,
        # strict at half the alpha: the sample and the pool together keep alpha per set
        "strict, alpha 0.025": replace(base, alpha=0.025),
        "bayes": replace(base, policy="bayes", q=0.1),
        "elond": replace(base, policy="elond", q=0.1),
    }
    print(
        f"pool {POOL}, sample {SAMPLE}, pool read {SAMPLE} at a time; first attempt (k = 1), alpha = 0.05, "
        f"q = 0.1; {runs} gates per row\n"
    )
    print(
        "| policy | true gain | sample alone: pass / fail / inconclusive | inconclusive at 36 that "
        "became pass / fail with the pool | with the pool: pass / fail / inconclusive | rollouts per "
        "gate: sample alone / with pool / fixed 150 | fixed 150: pass / fail / inconclusive |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, gate in rules.items():
        rng = random.Random(2026)
        for gain in GAINS:
            cell = Cell()
            for _ in range(runs):
                one_gate(gate, ordered(scores(rng, POOL, gain), gate.seed), cell)
            print(
                f"| {name} | {100 * gain:+.0f} | {counts(cell.sample)} | {cell.settled['pass']} / "
                f"{cell.settled['fail']} of {cell.extended} | {counts(cell.pooled)} | {2 * SAMPLE} / "
                f"{cell.rollouts / cell.runs:.0f} / {2 * POOL} | {counts(cell.fixed)} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=1000)
    args = parser.parse_args()
    start = time.perf_counter()
    if args.quick:
        run(runs=40, resamples=1000)
    else:
        run(runs=args.runs, resamples=2000)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
