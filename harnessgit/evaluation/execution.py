"""How an evaluation runs, and the part of it that needs no evaluator: what is on record.

`evaluate` looks up what the record already holds for the cache key and hands only
the rest to ``execution.runner``, the `Runner` its caller supplies: the batch runner
(`harnessgit.evaluation.eval.run_batches`) that `harnessgit.evaluation.eval.evaluate`,
the CLI and the Python API give. A command that only reads scores, such as a gate
after evolve with every score on record, loads no runner, no evaluator and no process
code (issue 26: "each core function takes the narrowest part it needs").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from harnessgit.config import Config, require_evaluator
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import (
    EvalContext,
    eval_context,
    ignored_edits_warning,
    uncommitted_evaluator,
)
from harnessgit.evaluation.scores import TEST_SPLIT, ScoreBook, ScoreSummary
from harnessgit.evaluation.splits import Manifest, load_manifest
from harnessgit.records import EvalRecord
from harnessgit.store import Store
from harnessgit.targets import resolve

if TYPE_CHECKING:
    from harnessgit.evaluation.evaluators import Evaluators

log = logging.getLogger("harnessgit")


@dataclass(frozen=True)
class Scoring:
    """What one evaluation's batches score, and where their records go."""

    context: EvalContext  # the commit, its harness and the evaluator that scores it
    manifest: Manifest
    split: str
    fresh: bool = False  # the rows run again although on record (--no-cache)
    # Finished batches go to this list, not to the notes, and write no evidence blob:
    # `calibrate`'s fresh draws must not become the cache's scores.
    keep: list[EvalRecord] | None = None


class Runner(Protocol):
    """Runs the pairs of one evaluation that are not on record and records them
    (`harnessgit.evaluation.eval.run_batches`); returns (batches run, evaluator time)."""

    def __call__(self, work: Work, /) -> tuple[int, float]: ...


@dataclass(frozen=True)
class Execution:
    """How evaluations run and what they report as they go; every command that may run
    the evaluator takes one (the CLI builds it from --jobs, -q and --json)."""

    jobs: int | None = None  # batches at a time; None: [evaluator] jobs (on Ray: the cluster's CPUs)
    executor: str | None = None  # "local" or "ray"; None: [evaluator] executor
    progress: Callable[[int, int], None] | None = None  # told (instances done, instances to run)
    on_stderr: Callable[[str], None] | None = None  # told each line the evaluator writes to stderr
    # The in-process and persistent evaluators of the whole command, closed by whoever
    # made them; None: each evaluation starts (and stops) its own.
    evaluators: Evaluators | None = None
    # What runs the scores not on record; None: `harnessgit.evaluation.eval.evaluate`
    # uses its batch runner, and `evaluate` here refuses to run anything.
    runner: Runner | None = None


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


@dataclass(frozen=True)
class Work:
    """What a `Runner` is handed: the ``pending`` (instance, repeat) pairs of one
    evaluation that are not on record, what scores them, and where they are recorded."""

    store: Store
    config: Config
    scoring: Scoring
    execution: Execution
    pending: list[tuple[str, int]]
    book: ScoreBook  # the pairs' scores join it as their batches finish


def evaluate(
    store: Store,
    config: Config,
    rev: str,
    request: EvalRequest,
    *,
    execution: Execution,
    book: ScoreBook | None = None,
    manifest: Manifest | None = None,
    context: EvalContext | None = None,
) -> Evaluation:
    """Evaluate ``rev``'s harness as ``request`` asks, running only what is not on record
    (with ``execution.runner``). ``book``, ``manifest`` and ``context`` are what the caller
    holds already (default: loaded here): the score book, the split manifest to read (the
    working tree's; the gate passes the base commit's) and ``rev``'s `eval_context`
    (evolve evaluates the same commits again and again: issue 13)."""
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
    batches, evaluator_time = _run(Work(store, config, scoring, execution, pending, book))
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


def _run(work: Work) -> tuple[int, float]:
    """Hand the pending pairs to the runner; with nothing to run (every score on record,
    as for a gate after evolve) nothing is set up (issue 26)."""
    execution = work.execution
    executor_of(work.config, execution)
    if not work.pending:
        if execution.progress:
            execution.progress(0, 0)
        return 0, 0.0
    if execution.runner is None:
        raise HarnessgitError(
            f"{len(work.pending)} scores of {work.scoring.context.commit[:12]} are not on record and no "
            "evaluator runner was given (Execution.runner)"
        )
    return execution.runner(work)


def executor_of(config: Config, execution: Execution) -> str:
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
