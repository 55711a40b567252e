"""The evolve loop: GEPA's reflection, minibatch check and Pareto parent selection,
with SkillOpt's train/selection/test discipline and the gate in front of main.

One iteration (docs/evolve.md):

1. draw a parent from the frontier (weights = instances led, seeded) and a
   component (round-robin over the parent's harness files);
2. evaluate the parent on a minibatch of train instances (epoch-shuffled, cached);
3. give the proposer the reflective dataset and ask for an edit to that component;
4. refuse a proposal the proposer itself flags (empty, truncated, unclosed fence)
   or that fails the harness checks: recorded, with its reason and raw output;
5. commit it as a candidate and evaluate it on the same minibatch; not strictly
   better: retire it to the archive as rejected (it stays on record);
6. better: evaluate it on the whole selection split, update the frontier, and run
   the gate against the base branch (carrying it onto the tip first if the base
   moved); with ``auto_merge`` a passing gate merges.

Everything is recorded as it happens, so a run stopped by a budget, a stop file or
Ctrl-C resumes from what the repository holds: minibatches continue the same
sequence (they are a function of the seed and the iteration number) and no
rollout is repeated for a key already recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harnessgit.config import Config, require
from harnessgit.evolve.iteration import Iterations, Progress
from harnessgit.evolve.state import Budget, BudgetReached, EvolveReport, IterationOutcome
from harnessgit.proposers import make_proposer
from harnessgit.store import Store


def evolve(
    store: Store,
    config: Config,
    *,
    budget: Budget,
    seed: int = 0,
    auto_merge: bool = False,
    jobs: int | None = None,
    stop_file: Path | None = None,
    on_iteration: Callable[[IterationOutcome], None] | None = None,
    progress: Progress | None = None,
    on_stderr: Callable[[str], None] | None = None,
) -> EvolveReport:
    config = require(config)
    proposer = make_proposer(config.proposer, cwd=store.root)
    loop = Iterations(store, config, seed, jobs, progress, on_stderr, budget)
    report = EvolveReport(run=loop.run, seed=seed, spend=loop.spend)
    try:
        loop.evaluate(loop.base_commit(), "selection", loop.selection)
        while True:
            if stop_file is not None and stop_file.exists():
                report.stopped = f"stop file {stop_file}"
                break
            if budget.max_proposals is not None and loop.spend.proposals >= budget.max_proposals:
                report.stopped = f"max proposals ({budget.max_proposals})"
                break
            if budget.max_cost is not None and loop.spend.cost >= budget.max_cost:
                report.stopped = f"max cost (${budget.max_cost:g})"
                break
            outcome = loop.iterate(proposer, auto_merge)
            report.iterations.append(outcome.record)
            if outcome.record.outcome == "merged" and outcome.record.candidate:
                report.merged.append(outcome.record.candidate)
            if on_iteration:
                on_iteration(outcome)
            if loop.solved_streak >= loop.batches_per_epoch:
                report.stopped = "every minibatch of a whole epoch was already solved: nothing left to learn"
                break
    except BudgetReached as exc:
        report.stopped = str(exc)
    return report
