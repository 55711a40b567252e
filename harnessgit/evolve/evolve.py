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

Every iteration is recorded, one a budget or Ctrl-C stops half-way too (so the report's
spending is the sum of the records), its writes landing with its record in one
transaction (`iteration.STAGE_FOR`), so a run stopped by a budget,
a stop file or Ctrl-C resumes from what the repository holds: minibatches continue the same
sequence (they are a function of the seed and the iteration number) and no
rollout is repeated for a key already recorded.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from harnessgit.config import Config, require_evaluator
from harnessgit.evaluation.eval import Execution, with_batches
from harnessgit.evaluation.evaluators import Evaluators
from harnessgit.evolve.adopt import Rules, adopt, evolve_rules
from harnessgit.evolve.iteration import iterate
from harnessgit.evolve.session import Options, Session
from harnessgit.evolve.state import BudgetReached, EvolveReport, EvolveRequest, Progress
from harnessgit.proposers import make_proposer
from harnessgit.records import IterationRecord
from harnessgit.store import Store


def evolve(
    store: Store,
    config: Config,
    request: EvolveRequest,
    *,
    execution: Execution = Execution(),
    on_iteration: Callable[[IterationRecord], None] | None = None,
) -> EvolveReport:
    """Iterate until a budget or stopper (``request.budget``: rollouts, proposals, cost,
    wall time, no improvement, a target mean), the stop file or an epoch of solved
    minibatches stops the run; ``on_iteration`` sees each iteration's record as it is
    written."""
    config = require_evaluator(config, "`harnessgit evolve`")
    rules = evolve_rules(config)  # a bad [evolve] adopt is refused before anything runs
    with contextlib.ExitStack() as stack:
        if execution.evaluators is None:  # one set for the run: a persistent process starts once
            execution = replace(execution, evaluators=stack.enter_context(Evaluators()))
        execution = with_batches(execution)  # the gate takes its runner from its caller
        return _evolve(store, rules, request, execution, on_iteration)


def _evolve(
    store: Store,
    rules: Rules,
    request: EvolveRequest,
    execution: Execution,
    on_iteration: Callable[[IterationRecord], None] | None,
) -> EvolveReport:
    config = rules.config
    options = Options(
        proposer=make_proposer(config.proposer, cwd=store.root),
        seed=request.seed,
        budget=request.budget,
        auto_merge=request.auto_merge,
        execution=execution,
        merge=config.evolve.merge if request.merge is None else request.merge,
    )
    session = Session(store, config, options)
    session.at_end, session.source, session.override = rules.at_end, rules.source, rules.override
    interruption: KeyboardInterrupt | None = None
    try:
        stopped = _run(session, request.stop_file, on_iteration)
        adopted = adopt(session)  # a run that gates at the end: its one gate
        if adopted is not None and on_iteration:
            on_iteration(adopted)
    except KeyboardInterrupt as exc:  # the stopped iteration is on record: report, then re-raise
        stopped, interruption = "interrupted", exc
        if on_iteration and session.written and session.written[-1].outcome == "interrupted":
            on_iteration(session.written[-1])
    done = session.written
    return EvolveReport(
        run=session.run,
        seed=request.seed,
        stopped=stopped,
        spend=session.spend,
        merged=[r.candidate for r in done if r.outcome == "merged" and r.candidate],
        iterations=done,
        interruption=interruption,
    )


def _run(
    session: Session,
    stop_file: Path | None,
    on_iteration: Callable[[IterationRecord], None] | None,
) -> str:
    """Run iterations; why they stopped."""
    started, progress = time.monotonic(), Progress()
    while True:
        if stop_file is not None and stop_file.exists():
            return f"stop file {stop_file}"
        progress = replace(progress, seconds=time.monotonic() - started)
        reached = session.options.budget.reached(session.spend, progress)
        if reached:
            return reached
        try:
            record = iterate(session)
        except BudgetReached as exc:  # an iteration that spent nothing: no record
            return str(exc)
        if on_iteration:
            on_iteration(record)
        if record.outcome == "budget":
            return record.reason
        session.schedule = session.schedule.after(record)
        progress = progress.after(_best_mean(session, record), progress.seconds)
        if session.solved_streak >= session.batches_per_epoch:
            return "every minibatch of a whole epoch was already solved: nothing left to learn"


def _best_mean(session: Session, record: IterationRecord) -> float | None:
    """The highest selection mean an iteration saw: its candidate's, or a frontier
    member's (the frontier as the iteration left it, without rebuilding it)."""
    means = [row.mean for row in session.view.frontier.rows] if session.view else []
    if record.selection_mean is not None:
        means.append(record.selection_mean)
    return max(means, default=None)
