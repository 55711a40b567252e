"""Where each tool's rollout budget goes, run by run, and how good its pool ends up.

    python tests/bench/bench_search_budget.py --task prompt|judge [--seeds 10] [--first-seed 100]
                                              [--budgets 1500] [--regime helpful,hard]
                                              [--screen-stop P] [--out RUNS.jsonl]
    python tests/bench/bench_search_budget.py --table RUNS.jsonl [RUNS.jsonl ...]

SIMULATED, as tests/bench/bench_vs_gepa.py whose task, splits, wiring and GEPA runs it
uses: no model and no judge is called. For each run of evolve (its default) and of
GEPA 0.1.4 on the same seed it counts:

- proposals (proposer / reflection-LM calls);
- rollouts by purpose: the parent on its minibatch, the new candidate on the same
  minibatch, the selection split (GEPA's valset) for new candidates (evolve: its
  screening, 12 instances at a time, and the rest of the split), the base on the
  selection split, and evolve's end gate;
- candidates that won their minibatch, candidates scored on the whole selection split
  (the pool the next parents are drawn from), evolve's screens stopped early;
- the TRUE held-out gain (the simulation knows it) of the best candidate in the pool,
  of the best candidate a stopped screen removed from it (evolve), and of what the
  run adopted.

The rollouts are classified from the call stack (evolve) or the call's arguments
(GEPA's adapter), not from either tool's own counters, and their sum is checked
against each tool's own total. ``--screen-stop P`` runs evolve with its screening's
stopping chance set to P (0: never stop a screen) to measure what screening costs the
search; the default is evolve's own.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_vs_gepa as bench

import harnessgit.evolve.gating as gating
import harnessgit.evolve.iteration as iteration
from harnessgit.evolve.session import Session

# Innermost evolve function on the stack -> what an evaluation there is for.
PURPOSES = {
    "adopt": "end gate",
    "screen": "selection (screen)",
    "verdict_on": "selection (base)",
    "deferred": "selection (base)",
    "minibatch_test": "minibatch (candidate)",
    "select": "selection (rest)",
    "judge_carried": "selection (carried)",
    "_merge_steps": "merge",
    "_steps": "minibatch (parent)",
}


def _purpose() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_name
        if name in PURPOSES and "harnessgit/evolve" in frame.f_code.co_filename:
            return PURPOSES[name]
        frame = frame.f_back  # type: ignore[assignment]
    return "other"


def run_evolve(seed: int, regime: str, budget: int) -> dict[str, Any]:
    """One evolve run (its default) with its rollouts classified and its pool's true gains."""
    world = bench.sim.world(seed)
    seed_value = world.expected(bench.sim.seed_prompt())
    spent: Counter[str] = Counter()
    stopped_true: list[float] = []
    evaluate, screen = Session.evaluate, iteration.screen

    def text_of(session: Session, commit: str) -> str:
        objects = session.store.objects
        return (objects.file_at(objects.commit_info(commit).tree, "prompt.md") or b"").decode()

    def counted(self: Session, commit: str, split: str, instances: list[str]) -> float | None:
        before = self.spend.rollouts
        try:
            return evaluate(self, commit, split, instances)
        finally:
            purpose = _purpose()
            if split == "selection" and commit == self.base_commit():
                purpose = "selection (base)"
            spent[purpose] += self.spend.rollouts - before

    def screening(session: Session, tip: str, commit: str) -> str:
        why = screen(session, tip, commit)
        if why:
            stopped_true.append(100 * (world.expected(text_of(session, commit)) - seed_value))
        return why

    pool: dict[str, float] = {}
    evolve_module = importlib.import_module("harnessgit.evolve.evolve")
    adopt, ask, asked = evolve_module.adopt, iteration.ask, [0]

    def recording(session: Session) -> Any:
        view = session.frontier()
        for cid, member in view.members.items():
            if cid != view.base:
                pool[cid] = 100 * (world.expected(text_of(session, member.commit)) - seed_value)
        return adopt(session)

    def asking(*args: Any) -> Any:
        asked[0] += 1
        return ask(*args)

    Session.evaluate = counted  # type: ignore[method-assign]
    iteration.screen, iteration.ask, evolve_module.adopt = screening, asking, recording
    try:
        run = bench.run_harnessgit(seed, regime, budget)
    finally:
        Session.evaluate = evaluate  # type: ignore[method-assign]
        iteration.screen, iteration.ask, evolve_module.adopt = screen, ask, adopt
    assert sum(spent.values()) == run.rollouts, (dict(spent), run.rollouts)
    return {
        "tool": "evolve",
        "proposals": asked[0],
        "rollouts": dict(spent),
        "total": run.rollouts,
        "pool": len(pool),
        "best_pool": max(pool.values(), default=0.0),
        "good_pool": sum(g > 0 for g in pool.values()),
        "stopped": len(stopped_true),
        "best_stopped": max(stopped_true, default=0.0),
        "good_stopped": sum(g > 0 for g in stopped_true),
        "adopted": run.gain,
    }


def run_gepa(seed: int, regime: str, budget: int) -> dict[str, Any]:
    """One GEPA run with its rollouts classified and its pool's true gains."""
    world = bench.sim.world(seed)
    valset = set(world.splits["selection"])
    spent: Counter[str] = Counter()
    calls = [0]
    scored: set[str] = set()  # the prompts scored on the valset: the pool, whose members are parents

    class Counting(bench.SimAdapter):
        def evaluate(self, batch: list[str], candidate: dict[str, str], capture_traces: bool = False) -> Any:
            if set(batch) <= valset and len(batch) > 3:
                purpose = "selection (whole)" if scored else "selection (base)"
                scored.add(candidate["prompt"])
            elif candidate["prompt"] in scored:
                purpose = "minibatch (parent)"
            else:
                purpose = "minibatch (candidate)"
            spent[purpose] += len(batch)
            return super().evaluate(batch, candidate, capture_traces)

    class CountingLM(bench.SimLM):
        def __call__(self, prompt: Any) -> str:
            calls[0] += 1
            return super().__call__(prompt)

    adapter = Counting(world, [0.0])
    lm = bench.SimLM
    bench.SimLM = CountingLM  # type: ignore[misc]
    try:
        result = bench.run_gepa_result(seed, regime, budget, adapter)
    finally:
        bench.SimLM = lm  # type: ignore[misc]
    seed_value = world.expected(bench.sim.seed_prompt())
    # gepa adds a proposal identical to a program it holds as a new program (scored on the
    # whole valset again); evolve's pool holds one program per harness text: count distinct.
    distinct = {bench.sim.rules_of(c["prompt"]): c["prompt"] for c in result.candidates[1:]}
    distinct.pop(bench.sim.rules_of(bench.sim.seed_prompt()), None)
    gains = [100 * (world.expected(prompt) - seed_value) for prompt in distinct.values()]
    best = result.best_candidate
    assert sum(spent.values()) == result.total_metric_calls, (dict(spent), result.total_metric_calls)
    return {
        "tool": "GEPA",
        "proposals": calls[0],
        "rollouts": dict(spent),
        "total": result.total_metric_calls,
        "pool": len(gains),
        "repeats": len(result.candidates) - 1 - len(gains),  # programs scored again
        "best_pool": max(gains, default=0.0),
        "good_pool": sum(g > 0 for g in gains),
        "stopped": 0,
        "best_stopped": 0.0,
        "good_stopped": 0,
        "adopted": 100 * (world.expected(best["prompt"]) - seed_value),
    }


COLUMNS = [
    "minibatch (parent)",
    "minibatch (candidate)",
    "selection (screen)",
    "selection (rest)",
    "selection (whole)",
    "selection (base)",
    "end gate",
]


def print_table(rows: list[dict[str, Any]]) -> None:
    """Means over seeds per (task, regime, budget, tool, screen stop)."""
    print(
        "| task | regime | rollouts | tool | seeds | proposals | minibatch: parent / candidate |"
        " selection: screened / rest / whole / base | end gate | pool (good) | screens stopped (good) |"
        " best TRUE in pool | best TRUE stopped | adopted TRUE |"
    )
    print("|" + "---|" * 14)
    keys = sorted({(r["task"], r["regime"], r["budget"], r["label"]) for r in rows})
    for task, regime, budget, label in keys:
        group = [
            r
            for r in rows
            if (r["task"], r["regime"], r["budget"], r["label"]) == (task, regime, budget, label)
        ]

        def mean(get: Any, group: list[dict[str, Any]] = group) -> float:
            return statistics.fmean(get(r) for r in group)

        spent = {c: mean(lambda r, c=c: r["rollouts"].get(c, 0)) for c in COLUMNS}
        print(
            f"| {task} | {regime} | {budget} | {label} | {len(group)} | {mean(lambda r: r['proposals']):.1f}"
            f" | {spent['minibatch (parent)']:.0f} / {spent['minibatch (candidate)']:.0f}"
            f" | {spent['selection (screen)']:.0f} / {spent['selection (rest)']:.0f}"
            f" / {spent['selection (whole)']:.0f} / {spent['selection (base)']:.0f}"
            f" | {spent['end gate']:.0f}"
            f" | {mean(lambda r: r['pool']):.1f} ({mean(lambda r: r['good_pool']):.1f})"
            f" | {mean(lambda r: r['stopped']):.1f} ({mean(lambda r: r['good_stopped']):.1f})"
            f" | {mean(lambda r: r['best_pool']):+.2f} | {mean(lambda r: r['best_stopped']):+.2f}"
            f" | {mean(lambda r: r['adopted']):+.2f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=sorted(bench.TASKS), default="prompt")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--budgets", default="1500")
    parser.add_argument("--regime", default="helpful,hard")
    parser.add_argument("--tools", default="GEPA,evolve")
    parser.add_argument("--screen-stop", type=float, help="evolve's SCREEN_STOP for this run")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--table", type=Path, nargs="+")
    args = parser.parse_args()
    if args.table:
        print_table(
            [json.loads(line) for path in args.table for line in path.read_text().splitlines() if line]
        )
        return
    bench.TASK, bench.WIRING = args.task, "python"
    bench.sim = importlib.import_module(bench.TASKS[args.task])
    label = "evolve"
    if args.screen_stop is not None:
        gating.SCREEN_STOP = args.screen_stop
        label = f"evolve (screen stop {args.screen_stop:g})"
    rows = []
    for budget in [int(b) for b in args.budgets.split(",")]:
        for regime in args.regime.split(","):
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                for tool in args.tools.split(","):
                    row = (run_gepa if tool == "GEPA" else run_evolve)(seed, regime, budget)
                    row.update(task=args.task, regime=regime, budget=budget, seed=seed)
                    row["label"] = label if tool == "evolve" else "GEPA"
                    rows.append(row)
                    if args.out:
                        with args.out.open("a") as file:
                            file.write(json.dumps(row) + "\n")
                    print(
                        f"  {row['label']} {regime} {budget} seed {seed}: {row['proposals']} proposals,"
                        f" {row['rollouts']}, pool {row['pool']} best {row['best_pool']:+.2f},"
                        f" adopted {row['adopted']:+.2f}",
                        flush=True,
                    )
    print_table(rows)


if __name__ == "__main__":
    main()
