"""`harnessgit eval`: run the evaluator on a commit's harness, never twice for one key.

An evaluation looks up what the record already holds for its cache key (harness
tree id, evaluator fingerprint, model, instance, repeat), runs only the rest in
batches (up to ``jobs`` evaluator processes at once, each in a fresh checkout of
the commit's tree), and records each completed batch at once: an interrupted or
failed evaluation keeps every batch that finished, and a re-run does only what
is missing. The first batch that fails ends the evaluation: no further batch
starts and the ones running beside it are killed, so a failure costs one batch
(issue 12: a crashing evaluator ran twice, a hanging one took twice its timeout).
"""

from __future__ import annotations

import contextlib
import logging
import math
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from harnessgit import layout
from harnessgit.config import Config, require_evaluator
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.batch import BatchOutput, InstanceResult, Running, Stopped, run_batch
from harnessgit.evaluation.context import (
    EvalContext,
    eval_context,
    ignored_edits_warning,
    uncommitted_evaluator,
)
from harnessgit.evaluation.evaluators import Evaluators
from harnessgit.evaluation.scores import TEST_SPLIT, ScoreBook, ScoreSummary
from harnessgit.evaluation.splits import Manifest, load_manifest
from harnessgit.evidence import dumps_canonical
from harnessgit.processes.environment import child_environment
from harnessgit.processes.pipes import Limits
from harnessgit.processes.scratch import ScratchDir, sweep
from harnessgit.records import EvalRecord, this_worker
from harnessgit.render import listing
from harnessgit.store import Store, Transaction
from harnessgit.targets import resolve

log = logging.getLogger("harnessgit")

Progress = Callable[[int, int], None]  # (instances done, instances to run)


@dataclass(frozen=True)
class Execution:
    """How evaluations run and what they report as they go; every command that may run
    the evaluator takes one (the CLI builds it from --jobs, -q and --json)."""

    jobs: int | None = None  # evaluator processes at a time; None: [evaluator] jobs
    progress: Progress | None = None  # told (instances done, instances to run)
    on_stderr: Callable[[str], None] | None = None  # told each line the evaluator writes to stderr
    # The in-process and persistent evaluators of the whole command, closed by whoever
    # made them; None: each evaluation starts (and stops) its own.
    evaluators: Evaluators | None = None


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
    *,
    split: str = "selection",
    instances: list[str] | None = None,
    repeats: int = 1,
    no_cache: bool = False,
    execution: Execution = Execution(),
    book: ScoreBook | None = None,
    allow_test: bool = False,
    manifest: Manifest | None = None,
    warn_uncommitted: bool = False,
    grader: str | None = None,
) -> Evaluation:
    """Evaluate ``rev``'s harness on ``split``, running only what is not on record.
    ``manifest`` is the split manifest to read (default: the working tree's; the gate
    passes the base commit's). ``warn_uncommitted`` logs a warning naming working-tree
    edits to the evaluator's files, which the evaluation ignores (it runs the
    evaluator as ``rev`` holds it). ``grader``, a commit: score ``rev``'s harness with
    the evaluator as that commit holds it (`eval_context`), e.g. after a regrade."""
    config = require_evaluator(config, "`harnessgit eval` (and `test`)")
    if split == TEST_SPLIT and not allow_test:
        raise HarnessgitError("the test split is held out: use `harnessgit test REV` to look at it")
    if repeats < 1:
        raise HarnessgitError("--repeats must be at least 1")
    if manifest is None:
        manifest = load_manifest(store.root, config.splits.manifest)
    ids = _select(manifest, split, instances)
    context = eval_context(
        store, config, resolve(store, rev).sha, grader=resolve(store, grader).sha if grader else None
    )
    graded_by = context.grader or context.commit
    # An in-process evaluator refuses such edits instead (`inprocess`).
    warn = warn_uncommitted and config.evaluator.command
    if warn and (edited := uncommitted_evaluator(store, config, graded_by)):
        log.warning(ignored_edits_warning(edited, graded_by, "the evaluator runs as committed"))
    book = book if book is not None else ScoreBook.load(store)
    have = book.rows(context.key)
    wanted = [(instance, repeat) for repeat in range(repeats) for instance in ids]
    pending = wanted if no_cache else [item for item in wanted if item not in have]
    started = time.monotonic()
    jobs = execution.jobs or config.evaluator.jobs
    batches = _plan(pending, config.evaluator.batch_size, jobs)
    with contextlib.ExitStack() as stack:
        evaluators = execution.evaluators or stack.enter_context(Evaluators())
        runner = _Batches(store, config, context, manifest, split, execution.on_stderr, fresh=no_cache)
        runner.evaluators = evaluators
        with runner.scrubber.errors():  # an evaluator's failure quotes its output and stderr
            evaluator_time = runner.run(batches, jobs, book, execution.progress, len(pending))
    return Evaluation(
        commit=context.commit,
        harness=context.key.harness,
        fingerprint=context.key.fingerprint,
        model=context.key.model,
        split=split,
        requested=len(wanted),
        cached=len(wanted) - len(pending),
        evaluated=len(pending),
        batches=len(batches),
        wall_time=round(time.monotonic() - started, 4),
        evaluator_time=round(evaluator_time, 4),
        summary=book.summary(context.key, split, ids),
        context=context,
        grader=context.grader,
    )


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


class _Batches:
    """One evaluation's batches: a pool of evaluator processes, one fresh checkout per
    batch, and a record written as each batch finishes."""

    def __init__(
        self,
        store: Store,
        config: Config,
        context: EvalContext,
        manifest: Manifest,
        split: str,
        on_stderr: Callable[[str], None] | None,
        *,
        fresh: bool,
    ) -> None:
        self.store, self.config, self.context = store, config, context
        # Everything the evaluator says is scrubbed before it is recorded or shown.
        self.scrubber = config.scrub.scrubber(config.proposer)
        self.on_stderr = (lambda line: on_stderr(self.scrubber.text(line))) if on_stderr else None
        self.manifest, self.split, self.fresh = manifest, split, fresh
        self.running = Running()
        self.evaluators = Evaluators()  # replaced by the caller's
        self.worker = this_worker()  # HARNESSGIT_MACHINE names it, as on gate records
        self._pristine: Path | None = None
        self._pristine_lock = threading.Lock()
        self._scratch: ScratchDir | None = None

    def run(
        self,
        batches: list[list[tuple[str, int]]],
        jobs: int,
        book: ScoreBook,
        progress: Progress | None,
        total: int,
    ) -> float:
        """Run the batches, recording each as it finishes; the evaluator time summed."""
        if progress:
            progress(0, total)
        if not batches:
            return 0.0
        if self.config.evaluator.python:
            return self._in_process(batches, book, progress, total)
        _sweep()
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures: dict[Future[BatchOutput], list[tuple[str, int]]] = {
                pool.submit(self._one, batch): batch for batch in batches
            }
            try:
                return self._collect(futures, book, progress, total)
            except BaseException:  # an interrupt, or a record that cannot be written
                self.running.stop()
                raise
            finally:
                for future in futures:
                    future.cancel()
                pool.shutdown(wait=True)  # no batch may still be copying the checkout
                if self._scratch is not None:
                    self._scratch.cleanup()

    def _in_process(
        self, batches: list[list[tuple[str, int]]], book: ScoreBook, progress: Progress | None, total: int
    ) -> float:
        """The batches one after another, in this thread: no process, no thread, no copy."""
        python = self.evaluators.python(self.store, self.config)
        done, evaluator_time = 0, 0.0
        for batch in batches:
            output = python.run(self.context, self.split, [instance for instance, _ in batch], batch[0][1])
            book.add(self._record(batch, output))
            evaluator_time += output.wall_time
            done += len(batch)
            if progress:
                progress(done, total)
        return evaluator_time

    def _collect(
        self,
        futures: dict[Future[BatchOutput], list[tuple[str, int]]],
        book: ScoreBook,
        progress: Progress | None,
        total: int,
    ) -> float:
        """Record each batch as it finishes. After a failure the others are stopped (see
        `_one`); those that finished meanwhile are recorded too, and the first failure is
        raised once every batch has ended."""
        done, evaluator_time = 0, 0.0
        failures: list[BaseException] = []
        remaining = set(futures)
        while remaining:
            finished, remaining = wait(remaining, return_when=FIRST_COMPLETED)
            for future in finished:
                if future.cancelled():  # after a failure, before it started
                    continue
                failure = future.exception()
                if failure is not None:
                    failures.append(failure)
                    self.running.stop()  # `_one` has already; a second stop is harmless
                    for other in remaining:
                        other.cancel()
                    continue
                output = future.result()
                book.add(self._record(futures[future], output))
                evaluator_time += output.wall_time
                done += len(futures[future])
                if progress:
                    progress(done, total)
        if failures:
            # The batch that failed, not one that was killed because it had.
            raise next((f for f in failures if not isinstance(f, Stopped)), failures[0])
        return evaluator_time

    def _one(self, batch: list[tuple[str, int]]) -> BatchOutput:
        if self.running.stopped:
            raise Stopped()  # not even the copy of the checkout
        try:
            return self._run(batch)
        except BaseException:
            # Stop here, in the worker: by the time the main thread sees the failure,
            # this worker would have started the next batch (issue 12).
            self.running.stop()
            raise

    def _run(self, batch: list[tuple[str, int]]) -> BatchOutput:
        instances = [instance for instance, _repeat in batch]
        repeat = batch[0][1]
        section = self.config.evaluator
        if section.persistent:
            # The batches of one evaluation share its checkout (docs/evaluator.md: the
            # directory is read-only to a persistent evaluator): no copy per batch.
            return self.evaluators.servers.run(
                self.store,
                self.config,
                self.context,
                self.split,
                batch,
                self._checkout(),
                running=self.running,
                on_stderr=self.on_stderr,
            )
        with ScratchDir("eval") as tmp:
            tree_dir = tmp / "harness"
            # A fresh copy per batch: an evaluator that writes into its directory
            # never affects another batch, and the tree leaves git only once.
            shutil.copytree(self._checkout(), tree_dir, symlinks=True)
            instances_file = tmp / "instances.txt"
            instances_file.write_text("".join(f"{instance}\n" for instance in instances), encoding="utf-8")
            # An allow-list, not harnessgit's environment: what the evaluator sees can end
            # up in trajectories pushed with the notes (issue 15).
            env = child_environment(
                section.env,
                {
                    "HARNESSGIT_HARNESS_DIR": str(tree_dir),
                    "HARNESSGIT_SPLIT": self.split,
                    "HARNESSGIT_COMMIT": self.context.commit,
                    "HARNESSGIT_INSTANCES_FILE": str(instances_file),
                    "HARNESSGIT_REPEAT": str(repeat),
                    "HARNESSGIT_MODEL": self.context.key.model,
                },
            )
            assert section.command
            limits = Limits(
                timeout=section.timeout,
                max_stdout=section.max_output_bytes,
                max_line=section.max_line_bytes,
                max_stderr=section.max_stderr_bytes,
            )
            return run_batch(
                list(section.command),
                tree_dir,
                env,
                instances,
                limits=limits,
                running=self.running,
                on_stderr=self.on_stderr,
            )

    def _checkout(self) -> Path:
        with self._pristine_lock:
            if self._pristine is None:
                self._scratch = ScratchDir("tree")
                pristine = self._scratch.path / "tree"
                pristine.mkdir()
                self.store.checkout_tree(self.context.tree, pristine)
                self._pristine = pristine
            return self._pristine

    def _record(self, batch: list[tuple[str, int]], output: BatchOutput) -> EvalRecord:
        """The batch's record. Failure classes, clusters and cost names are the
        evaluator's strings like its feedback: scrubbed too."""
        results = output.results
        evidence_blob = self._evidence(batch, results)
        scrub = self.scrubber.text
        cost: dict[str, float] = {}
        for result in results:
            for name, value in (result.cost or {}).items():
                cost[scrub(name)] = cost.get(scrub(name), 0.0) + value
        record = EvalRecord(
            ts=self.store.clock(),
            commit=self.context.commit,
            grader=self.context.grader,
            harness=self.context.key.harness,
            fingerprint=self.context.key.fingerprint,
            model=self.context.key.model,
            split=self.split,
            split_hash=self.manifest.split_hash(self.split),
            manifest=self.manifest.hash,
            instances=[r.instance for r in results],
            repeats=[repeat for _instance, repeat in batch],
            scores=[r.score for r in results],
            clusters=[r.cluster and scrub(r.cluster) for r in results]
            if any(r.cluster for r in results)
            else None,
            failure_classes=(
                [r.failure_class and scrub(r.failure_class) for r in results]
                if any(r.failure_class for r in results)
                else None
            ),
            evidence=evidence_blob,
            cost=cost or None,
            wall_time=round(output.wall_time, 4),
            worker=self.worker,
            fresh=self.fresh,
        )
        txn = Transaction(f"eval {self.context.commit[:12]} {self.split}")
        txn.append(layout.NOTES_EVALS, self.context.commit, [record])
        if evidence_blob:
            txn.keep(evidence_blob)
        self.store.commit(txn)
        return record

    def _evidence(self, batch: list[tuple[str, int]], results: list[InstanceResult]) -> str | None:
        """Feedback and trajectories as scrubbed JSON lines, one per instance."""
        if not any(r.feedback is not None or r.trajectory is not None for r in results):
            return None
        scrubber = self.scrubber
        lines = []
        for (_instance, repeat), result in zip(batch, results, strict=True):
            lines.append(
                dumps_canonical(
                    scrubber.value(
                        {
                            "instance": result.instance,
                            "repeat": repeat,
                            "score": result.score,
                            "feedback": result.feedback,
                            "trajectory": result.trajectory,
                            "failure_class": result.failure_class,
                            "cost": result.cost,
                        }
                    )
                )
            )
        return self.store.write_blob(("\n".join(lines) + "\n").encode("utf-8"))


def _sweep() -> None:
    """Remove what a harnessgit killed by SIGKILL left: its scratch directories, its
    evaluators. Never fails an evaluation: it logs what it could not do."""
    done = sweep()
    if done.removed or done.killed:
        owners = sorted({stale.owner for stale in done.removed} | {stale.owner for stale in done.killed})
        log.info(
            "left by a killed harnessgit (%s): temporary directories removed: %d, processes killed: %d",
            listing(owners),
            len(done.removed),
            len(done.killed),
        )
    for stale, why in done.failed:
        log.warning("cannot remove the abandoned directory %s: %s", stale.path, why)
