"""Evolve's end gate: which frontier member, and whether, replayed on the same search paths.

    python tests/bench/bench_end_choice.py --task prompt|judge [--seeds 20] [--first-seed 100]
                                           [--budgets 600] [--regime helpful,hard] [--out PATHS.jsonl]
    python tests/bench/bench_end_choice.py --table PATHS.jsonl [PATHS.jsonl ...]

SIMULATED, as tests/bench/bench_vs_gepa.py whose task, splits, budgets and GEPA runs it
uses: no model and no judge is called. Under evolve's default nothing is gated during a
run, so the search path (every look, every frontier member) does not depend on the rule
that chooses and decides at the end. Each run records, when its budget ends it, every
look's (gain, standard error), and every frontier member's paired selection gain,
standard error and TRUE held-out gain (the simulation knows it); the rules below are
then replayed on those paths, so they are compared on the same proposals:

- ``by mean``: the member with the highest selection mean (ties: the first proposed),
  gated by bayes at q 0.5 under the prior of the run's looks (evolve's rule);
- ``by chance``: the member with the highest chance of gaining more than min_effect
  under that prior (ties: the first proposed), the same gate (tried in ev7 and not
  kept: on the 20 reported seeds of bench_vs_gepa.py it merged a harmful edit whose
  topics the selection split missed; docs/benchmarks.md, "ev7");
- the alternatives tried and not kept: a prior smoothed with more pseudo-looks of the
  default (20), q 0.6, and merging when the posterior mean gain is above 0;
- not a rule but a bound: the frontier member (above the base on the selection split)
  with the best TRUE held-out gain, adopted only if that gain is positive. No choice
  made at the end of the run can gain more on these search paths.

`--out` saves the paths; a line ``mismatches`` counts the runs whose replay of the rule
the code ran differs from the run's own outcome (0: the replay is faithful).
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_vs_gepa as bench

from harnessgit.stats import verdict as stats

Path_ = dict[str, Any]  # one run's recorded search path


def record_paths(task: str, seeds: range, budgets: list[int], regimes: list[str], out: Path) -> None:
    """Run evolve (its default) and GEPA on each seed, appending each run's path to ``out``."""
    import harnessgit.evolve.evolve as evolve_module
    from harnessgit.stats.decision import compare
    from harnessgit.stats.pairing import pair_scores

    bench.TASK, bench.WIRING = task, "python"
    bench.sim = importlib.import_module(bench.TASKS[task])
    current: dict[str, Any] = {}
    adopt = evolve_module.adopt

    def recording(session: Any) -> Any:
        world, objects = bench.sim.world(current["seed"]), session.store.objects
        seed_value = world.expected(bench.sim.seed_prompt())
        view, base = session.frontier(), session.base_commit()
        base_scores = session.book.scored(session.context(base).key, session.selection)
        members = []
        for place, cid in enumerate(view.members):
            commit = view.members[cid].commit
            scores = session.book.scored(session.context(commit).key, session.selection)
            paired = pair_scores(base_scores, scores)
            if cid == view.base or paired is None or len(paired.instances) < len(session.selection):
                continue
            text = (objects.file_at(objects.commit_info(commit).tree, "prompt.md") or b"").decode()
            difference = compare(paired).difference
            members.append(
                {
                    "order": place,
                    "gain": difference.mean,
                    "se": difference.se,
                    "true": 100 * (world.expected(text) - seed_value),
                    "on_frontier": any(row.candidate == cid for row in view.frontier.rows),
                }
            )
        current["looks"] = [(look.gain, look.se) for look in session.looks.every]
        current["members"] = members
        return adopt(session)

    evolve_module.adopt = recording  # type: ignore[assignment]
    for budget in budgets:
        for regime in regimes:
            for seed in seeds:
                current.clear()
                current.update(task=task, seed=seed, budget=budget, regime=regime, looks=[], members=[])
                ours = bench.run_harnessgit(seed, regime, budget)
                gepa = bench.run_gepa(seed, regime, budget)
                row = {**current, "gain": ours.gain, "gepa": gepa.gain, "rule": "mean"}
                with out.open("a") as file:
                    file.write(json.dumps(row) + "\n")
                print(
                    f"  {task} {regime} {budget} seed {seed}: evolve {ours.gain:+.2f} GEPA {gepa.gain:+.2f}"
                )


def end_gain(
    path: Path_, *, choose: str = "chance", decide: str = "chance", q: float = 0.5, pseudo: int | None = None
) -> float:
    """The true held-out gain of what the rule adopts on ``path`` (0: nothing)."""
    looks = [tuple(look) for look in path["looks"]]
    if pseudo is None or len(looks) < stats.MIN_LOOKS:
        prior = stats.screened_prior(looks)  # type: ignore[arg-type]
    else:
        prior = stats.learn_prior(looks, pseudo_looks=pseudo, algorithm=1)  # type: ignore[arg-type]
    members = [m for m in path["members"] if m["on_frontier"] and m["gain"] > 0]
    if not members:
        return 0.0

    def chance(m: dict[str, Any]) -> float:
        return stats.chance_above(stats.posterior(prior, m["gain"], m["se"]), 0.0)

    if choose == "oracle":  # not a rule: the most any choice among the members could gain
        return max(0.0, *(float(m["true"]) for m in members))
    rank: Callable[[dict[str, Any]], float] = chance if choose == "chance" else lambda m: m["gain"]
    best = min(members, key=lambda m: (-rank(m), m["order"]))
    if decide == "chance":
        passed = chance(best) >= 1 - q
    else:
        passed = stats.posterior(prior, best["gain"], best["se"]).mean > 0
    return float(best["true"]) if passed else 0.0


RULES: list[tuple[str, dict[str, Any]]] = [
    ("by mean (evolve's rule)", {"choose": "mean"}),
    ("by chance (not kept)", {}),
    ("by mean, 20 pseudo-looks", {"choose": "mean", "pseudo": 20}),
    ("by mean, q 0.6", {"choose": "mean", "q": 0.6}),
    ("by mean, posterior mean > 0", {"choose": "mean", "decide": "mean"}),
    ("bound: the best TRUE gain on the frontier", {"choose": "oracle"}),
]


def print_table(paths: list[Path_]) -> None:
    ran = {"chance": {}, "mean": {"choose": "mean"}}  # the rule the code ran when recorded
    mismatches = sum(1 for p in paths if abs(end_gain(p, **ran[p.get("rule", "mean")]) - p["gain"]) > 1e-6)
    print(f"mismatches (the replay of the rule the code ran vs the run's gain): {mismatches} of {len(paths)}")
    print(
        "| task | rollouts | rule | helpful: gain vs GEPA | hard: regressions | hard: worst"
        " | hard: gain vs GEPA - 1 |"
    )
    print("|---|---|---|---|---|---|---|")
    for task, budget in sorted({(p["task"], p["budget"]) for p in paths}):
        for name, rule in RULES:
            cells = [task, str(budget), name]
            for regime in ("helpful", "hard"):
                group = sorted(
                    (p for p in paths if (p["task"], p["budget"], p["regime"]) == (task, budget, regime)),
                    key=lambda p: p["seed"],
                )
                if not group:
                    cells += ["-"] if regime == "helpful" else ["-", "-", "-"]
                    continue
                mine, gepa = [end_gain(p, **rule) for p in group], [p["gepa"] for p in group]
                ours, theirs = statistics.fmean(mine), statistics.fmean(gepa)
                if regime == "helpful":
                    cells.append(f"{ours:+.2f} vs {theirs:+.2f} ({len(group)} seeds)")
                    continue
                regress = sum(g < -1e-9 for g in mine), sum(g < -1e-9 for g in gepa)
                cells += [
                    f"{regress[0]} vs {regress[1]}",
                    f"{min(mine):+.2f} vs {min(gepa):+.2f}",
                    f"{ours:+.2f} vs {theirs - 1:+.2f}",
                ]
            print("| " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=sorted(bench.TASKS), default="prompt")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--budgets", default="600")
    parser.add_argument("--regime", default="helpful,hard")
    parser.add_argument("--out", type=Path, help="append each run's path here")
    parser.add_argument("--table", type=Path, nargs="+", help="print the table of saved paths")
    args = parser.parse_args()
    if args.table:
        print_table(
            [json.loads(line) for path in args.table for line in path.read_text().splitlines() if line]
        )
        return
    out = args.out or Path(f"end_choice_{args.task}.jsonl")
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    record_paths(args.task, seeds, [int(b) for b in args.budgets.split(",")], args.regime.split(","), out)
    print_table([json.loads(line) for line in out.read_text().splitlines() if line])


if __name__ == "__main__":
    main()
