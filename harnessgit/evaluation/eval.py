"""`harnessgit eval`: run the evaluator on a commit's harness, never twice for one key.

An evaluation looks up what the record already holds for its cache key (harness
tree id, evaluator fingerprint, model, instance, repeat), runs only the rest in
batches (up to ``jobs`` evaluator processes at once, each in a fresh checkout of
the commit's tree), and records completed batches as they finish (those that
finish within `batches.WRITE_EVERY` of each other in one transaction): an interrupted or
failed evaluation keeps every batch that finished, and a re-run does only what
is missing. The first batch that fails ends the evaluation: no further batch
starts and the ones running beside it are killed, so a failure costs one batch
(issue 12: a crashing evaluator ran twice, a hanging one took twice its timeout).

Looking up what is on record, and the request, `Execution` and `Evaluation` types, live in
`harnessgit.evaluation.execution`, which runs what is missing with the caller's runner;
here is the batch runner (`run_batches`), given by `evaluate` unless the caller names
another. The gate and merge take their runner from their caller (`with_batches`).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import replace

from harnessgit.config import Config
from harnessgit.evaluation.batch import Plan
from harnessgit.evaluation.batches import Batches
from harnessgit.evaluation.context import EvalContext
from harnessgit.evaluation.evaluators import Evaluators
from harnessgit.evaluation.execution import EvalRequest as EvalRequest
from harnessgit.evaluation.execution import Evaluation as Evaluation
from harnessgit.evaluation.execution import Execution as Execution
from harnessgit.evaluation.execution import Work, executor_of
from harnessgit.evaluation.execution import evaluate as evaluate_recorded
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.splits import Manifest
from harnessgit.store import Store


def _plan(pending: list[tuple[str, int]], batch_size: int, jobs: int) -> list[list[tuple[str, int]]]:
    """Batches of at most batch_size, one repeat each, in a multiple of ``jobs`` of
    near-equal sizes: every wave of evaluator processes then has work for each job
    and finishes at about the same time (20 fixed batches of 10 on 8 jobs would run
    in 3 uneven waves; 24 batches of 8 or 9 run in 3 even ones)."""
    by_repeat: dict[int, list[tuple[str, int]]] = {}
    for item in pending:
        by_repeat.setdefault(item[1], []).append(item)
    batches = []
    for items in by_repeat.values():
        count = math.ceil(len(items) / batch_size)
        if count % jobs:
            count = min(len(items), count + jobs - count % jobs)
        base, extra = divmod(len(items), count)
        start = 0
        for index in range(count):
            size = base + (1 if index < extra else 0)
            batches.append(items[start : start + size])
            start += size
    return batches


def evaluate(
    store: Store,
    config: Config,
    rev: str,
    request: EvalRequest = EvalRequest(),
    *,
    execution: Execution = Execution(),
    book: ScoreBook | None = None,
    manifest: Manifest | None = None,
    context: EvalContext | None = None,
) -> Evaluation:
    """Evaluate ``rev``'s harness as ``request`` asks, running only what is not on record
    (`harnessgit.evaluation.execution.evaluate`), with `run_batches` unless ``execution``
    names another runner."""
    return evaluate_recorded(
        store,
        config,
        rev,
        request,
        execution=with_batches(execution),
        book=book,
        manifest=manifest,
        context=context,
    )


def with_batches(execution: Execution = Execution()) -> Execution:
    """``execution``, with `run_batches` as its runner unless it names one: what the
    commands that take their runner from their caller (the gate, merge) are given by the
    Python API and evolve (the CLI gives its own, `harnessgit.cli._runner.BatchRunner`)."""
    return execution if execution.runner is not None else replace(execution, runner=run_batches)


def run_batches(work: Work) -> tuple[int, float]:
    """Run ``work``'s pending (instance, repeat) pairs in batches, each recorded as it
    finishes; (how many batches, the evaluator time summed). The evaluators are
    ``work.execution``'s, or made here for this evaluation."""
    store, config, execution, pending = work.store, work.config, work.execution, work.pending
    executor = executor_of(config, execution)
    with contextlib.ExitStack() as stack:
        evaluators = execution.evaluators or stack.enter_context(Evaluators())
        jobs = execution.jobs or (evaluators.ray.cpus() if executor == "ray" else config.evaluator.jobs)
        batches = _plan(pending, config.evaluator.batch_size, jobs)
        on_stderr = execution.on_stderr
        runner = Batches(store, config, work.scoring, evaluators, executor=executor, on_stderr=on_stderr)
        with runner.scrubber.errors():  # an evaluator's failure quotes its output and stderr
            return len(batches), runner.run(Plan(batches, jobs, work.book, execution.progress, len(pending)))
