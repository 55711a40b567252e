"""Gate rules applied after the fact to GEPA's own candidates (issue 13), SIMULATED task.

    PYTHONPATH=. python tests/bench/bench_rules_on_gepa.py [--seeds 40]

Runs gepa 0.1.4 on the simulated task of bench_vs_gepa.py (no model is called) and
asks, of the candidates it scored on its valset (= the selection split), in order:
what would a gate in front of main have adopted? Candidates are compared with the
current base by the normal approximation of the paired difference (the gate's
bootstrap is close to it at n = 36). Rules:

- gepa: its `best_candidate` (no gate);
- look-charged: each candidate at alpha_1 / L (L = budget // (selection + 6)); the
  first that passes becomes the base (harnessgit since issue 13);
- would pass (unsound): every candidate at alpha_1; at the end, the best that passed.

Prints the mean true held-out test gain (points), runs that adopted nothing,
regressions and the worst run. Tests the ceiling of any gate on 36 instances without
running harnessgit; `--selection 72` moves 36 train instances to the selection split
(GEPA's valset too), to see what a larger selection split buys both.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path
from statistics import NormalDist

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_vs_gepa as bench
import sim_prompt_task as sim

ALPHA_1 = 0.05 * 6 / math.pi**2


def lower_bound(world: sim.World, base: str, candidate: str, alpha: float) -> float:
    before, after = sim.rules_of(base), sim.rules_of(candidate)
    diffs = [world.outcome(i, after) - world.outcome(i, before) for i in world.splits["selection"]]
    se = statistics.stdev(diffs) / math.sqrt(len(diffs))
    return statistics.fmean(diffs) - NormalDist().inv_cdf(1 - alpha) * se


def look_charged(world: sim.World, candidates: list[str], budget: int) -> str:
    looks = budget // (len(world.splits["selection"]) + 6)
    base, level = sim.seed_prompt(), ALPHA_1 / max(1, looks)
    for candidate in candidates:
        if lower_bound(world, base, candidate, level) > 0:
            base = candidate
    return base


def would_pass(world: sim.World, candidates: list[str], budget: int) -> str:
    base = sim.seed_prompt()
    passed = [(lower_bound(world, base, c, ALPHA_1), c) for c in candidates]
    passed = [(bound, c) for bound, c in passed if bound > 0]
    return max(passed)[1] if passed else base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument(
        "--selection", type=int, default=36, help="selection instances, taken from the 186 non-test ones"
    )
    args = parser.parse_args()
    sim.SPLITS.update(train=186 - args.selection, selection=args.selection)
    print("| regime | rollouts | rule | held-out test gain | adopted nothing | regressions | worst |")
    print("|---|---|---|---|---|---|---|")
    for regime in ("helpful", "hard"):
        for budget in (600, 1500):
            gains: dict[str, list[float]] = {"gepa": [], "look-charged": [], "would pass (unsound)": []}
            for seed in range(args.seeds):
                world = sim.world(seed)
                result = bench.run_gepa_result(seed, regime, budget)
                candidates = [c["prompt"] for c in result.candidates[1:]]
                start = world.expected(sim.seed_prompt())
                adopted = {
                    "gepa": result.best_candidate["prompt"],
                    "look-charged": look_charged(world, candidates, budget),
                    "would pass (unsound)": would_pass(world, candidates, budget),
                }
                for name, text in adopted.items():
                    gains[name].append(100 * (world.expected(text) - start))
            for name, values in gains.items():
                mean, sd = statistics.fmean(values), statistics.stdev(values)
                print(
                    f"| {regime} | {budget} | {name} | {mean:+.1f} ± {sd:.1f}"
                    f" | {sum(1 for g in values if g == 0)}/{args.seeds}"
                    f" | {sum(1 for g in values if g < -1e-9)}/{args.seeds} | {min(values):+.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
