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
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from harnessgit.config import Config, require_evaluator
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.batch import Plan, Progress
from harnessgit.evaluation.batches import Batches, Scoring
from harnessgit.evaluation.context import (
    EvalContext,
    eval_context,
    ignored_edits_warning,
    uncommitted_evaluator,
)
from harnessgit.evaluation.evaluators import Evaluators
from harnessgit.evaluation.scores import TEST_SPLIT, ScoreBook, ScoreSummary
from harnessgit.evaluation.splits import Manifest, load_manifest
from harnessgit.store import Store
from harnessgit.targets import resolve

log = logging.getLogger("harnessgit")


@dataclass(frozen=True)
class Execution:
    """How evaluations run and what they report as they go; every command that may run
    the evaluator takes one (the CLI builds it from --jobs, -q and --json)."""

    jobs: int | None = None  # batches at a time; None: [evaluator] jobs (on Ray: the cluster's CPUs)
    executor: str | None = None  # "local" or "ray"; None: [evaluator] executor
    progress: Progress | None = None  # told (instances done, instances to run)
    on_stderr: Callable[[str], None] | None = None  # told each line the evaluator writes to stderr
    # The in-process and persistent evaluators of the whole command, closed by whoever
    # made them; None: each evaluation starts (and stops) its own.
    evaluators: Evaluators | None = None


@dataclass(frozen=True)
class EvalRequest:
    """What to score a commit's harness on, as the user asked: `harnessgit eval`'s options
    (the CLI and the Python API build it once; the commands that evaluate pass it down)."""

    split: str = "selection"
    instances: list[str] | None = None  # a subset of the split's; None: all of them
    repeats: int = 1  # each instance this many times (repeat 0, 1, ...)
    no_cache: bool = False  # run again what is on record
    allow_test: bool = False  # the held-out test split: only `harnessgit test` looks at it
    # Log a warning naming working-tree edits to the evaluator's files, which the
    # evaluation ignores (it runs the evaluator as the commit holds it).
    warn_uncommitted: bool = False
    # A commit: score the harness with the evaluator as that commit holds it
    # (`eval_context`), e.g. after a regrade; None: the commit's own.
    grader: str | None = None


@dataclass(frozen=True)
class Evaluation:
    commit: str
    harness: str  # the cache key: harness tree id, evaluator fingerprint, model
    fingerprint: str
    model: str
    split: str
    requested: int  # (instance, repeat) pairs asked for
    cached: int  # of those, already on record
    evaluated: int  # run now
    batches: int  # evaluator processes started
    wall_time: float  # seconds, to 0.1 ms
    evaluator_time: float  # summed wall time of the evaluator processes
    summary: ScoreSummary
    context: EvalContext = field(metadata={"json": False})
    grader: str | None = None  # the commit whose evaluator scored it, when not its own


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
    """Evaluate ``rev``'s harness as ``request`` asks, running only what is not on record.
    ``book``, ``manifest`` and ``context`` are what the caller holds already (default:
    loaded here): the score book, the split manifest to read (the working tree's; the
    gate passes the base commit's) and ``rev``'s `eval_context` (evolve evaluates the
    same commits again and again: issue 13)."""
    config = require_evaluator(config, "`harnessgit eval` (and `test`)")
    split = request.split
    if split == TEST_SPLIT and not request.allow_test:
        raise HarnessgitError("the test split is held out: use `harnessgit test REV` to look at it")
    if request.repeats < 1:
        raise HarnessgitError("--repeats must be at least 1")
    if manifest is None:
        manifest = load_manifest(store.root, config.splits.manifest)
    ids = _select(manifest, split, request.instances)
    if context is None:
        grader = resolve(store.refs, request.grader).sha if request.grader else None
        context = eval_context(store.objects, config, resolve(store.refs, rev).sha, grader=grader)
    graded_by = context.grader or context.commit
    # An in-process evaluator refuses such edits instead (`inprocess`).
    warn = request.warn_uncommitted and config.evaluator.command
    if warn and (edited := uncommitted_evaluator(store, config, graded_by)):
        log.warning(ignored_edits_warning(edited, graded_by, "the evaluator runs as committed"))
    book = book if book is not None else ScoreBook.load(store)
    have = book.rows(context.key)
    wanted = [(instance, repeat) for repeat in range(request.repeats) for instance in ids]
    pending = wanted if request.no_cache else [item for item in wanted if item not in have]
    started = time.monotonic()
    scoring = Scoring(context, manifest, split, fresh=request.no_cache)
    batches, evaluator_time = _run(store, config, scoring, execution, pending, book)
    return Evaluation(
        commit=context.commit,
        **context.key.fields(),
        split=split,
        requested=len(wanted),
        cached=len(wanted) - len(pending),
        evaluated=len(pending),
        batches=batches,
        wall_time=round(time.monotonic() - started, 4),
        evaluator_time=round(evaluator_time, 4),
        summary=book.summary(context.key, split, ids),
        context=context,
        grader=context.grader,
    )


def _run(
    store: Store,
    config: Config,
    scoring: Scoring,
    execution: Execution,
    pending: list[tuple[str, int]],
    book: ScoreBook,
) -> tuple[int, float]:
    """Run the ``pending`` (instance, repeat) pairs in batches, each recorded as it
    finishes; (how many batches, the evaluator time summed). With nothing to run (every
    score on record, as for a gate after evolve) nothing is set up: no evaluators, no
    Ray, no scrubber, no pool (issue 26)."""
    executor = _executor(config, execution)
    if not pending:
        if execution.progress:
            execution.progress(0, 0)
        return 0, 0.0
    with contextlib.ExitStack() as stack:
        evaluators = execution.evaluators or stack.enter_context(Evaluators())
        jobs = execution.jobs or (evaluators.ray.cpus() if executor == "ray" else config.evaluator.jobs)
        batches = _plan(pending, config.evaluator.batch_size, jobs)
        runner = Batches(store, config, scoring, evaluators, executor=executor, on_stderr=execution.on_stderr)
        with runner.scrubber.errors():  # an evaluator's failure quotes its output and stderr
            return len(batches), runner.run(Plan(batches, jobs, book, execution.progress, len(pending)))


def _executor(config: Config, execution: Execution) -> str:
    """Where the batches run: --executor, else [evaluator] executor."""
    executor = execution.executor or config.evaluator.executor
    if executor not in ("local", "ray"):
        raise HarnessgitError(f"unknown executor {executor!r}: use local or ray")
    if executor == "ray" and (problem := config.evaluator.local_only()):
        raise HarnessgitError(f"--executor ray: {problem}")
    return executor


def _select(manifest: Manifest, split: str, instances: list[str] | None) -> list[str]:
    ids = manifest.ids(split)
    if not instances:
        if not ids:
            raise HarnessgitError(f"split {split!r} has no instances")
        return ids
    known = set(ids)
    for instance in instances:
        if instance not in known:
            raise HarnessgitError(f"instance {instance!r} is not in split {split!r}")
    return list(dict.fromkeys(instances))
