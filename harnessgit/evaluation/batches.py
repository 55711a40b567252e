"""The batches of one evaluation: a pool of evaluator processes (or a persistent
evaluator, or the in-process function), a checkout of the evaluated tree, and the
records of finished batches written as they finish (`Batches.run`).

The first batch that fails ends the evaluation: no further batch starts and the ones
running beside it are killed, so a failure costs one batch (issue 12).
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from harnessgit import layout
from harnessgit.canonical import dumps_canonical
from harnessgit.config import Config
from harnessgit.evaluation.batch import (
    BatchOutput,
    InstanceResult,
    Plan,
    Running,
    Stopped,
    Tally,
    first_failure,
)
from harnessgit.evaluation.command import command_job, run_command
from harnessgit.evaluation.evaluators import Evaluators
from harnessgit.evaluation.execution import Scoring as Scoring
from harnessgit.evaluation.ray_executor import RayConnection, run_on_ray
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.processes.scratch import ScratchDir, sweep
from harnessgit.records import EvalRecord, this_worker
from harnessgit.render import listing
from harnessgit.scrub import Scrubber
from harnessgit.store import Store, Transaction

log = logging.getLogger("harnessgit")


# Seconds: a finished batch waits at most this long for the next ones to share its
# ref update (one `git update-ref` is 5-15 ms, issue 13); a batch of a slower
# evaluator is written as soon as it ends.
WRITE_EVERY = 1.0


class Batches:
    """One evaluation's batches: a pool of evaluator processes, one fresh checkout per
    batch, and a record written as each batch finishes. ``evaluators``: the command's
    in-process and persistent evaluators (and its Ray connection), closed by the caller."""

    def __init__(
        self,
        store: Store,
        config: Config,
        scoring: Scoring,
        evaluators: Evaluators,
        *,
        executor: str = "local",
        on_stderr: Callable[[str], None] | None = None,
    ) -> None:
        self.store, self.config, self.context = store, config, scoring.context
        # Everything the evaluator says is scrubbed before it is recorded or shown.
        self.scrubber: Scrubber = evaluators.scrubber(config)
        self.on_stderr = (lambda line: on_stderr(self.scrubber.text(line))) if on_stderr else None
        self.manifest, self.split, self.fresh = scoring.manifest, scoring.split, scoring.fresh
        self.executor = executor  # "local", or "ray": each batch a Ray task (`ray_executor`)
        # Finished batches go to this list, not to the notes, and write no evidence blob:
        # `calibrate`'s fresh draws must not become the cache's scores.
        self.keep = scoring.keep
        self.running = Running()
        self.evaluators = evaluators
        self._unwritten: list[EvalRecord] = []  # finished batches not on record yet
        self._written_at = time.monotonic()
        self.worker = this_worker()  # HARNESSGIT_MACHINE names it, as on gate records
        self._pristine: Path | None = None
        self._pristine_lock = threading.Lock()
        self._scratch: ScratchDir | None = None

    @property
    def connection(self) -> RayConnection:
        """The command's Ray connection (`ray_executor.RayRunner`)."""
        return self.evaluators.ray

    def run(self, plan: Plan) -> float:
        """Run the batches, recording each as it finishes; the evaluator time summed."""
        if plan.progress:
            plan.progress(0, plan.total)
        if not plan.batches:
            return 0.0
        try:
            return self._run_all(plan)
        finally:  # what finished is on record, however the evaluation ends
            self._write(plan.book)

    def _run_all(self, plan: Plan) -> float:
        if self.config.evaluator.in_process:
            return self._in_process(plan)
        if self.executor == "ray":
            try:
                return run_on_ray(self, plan)
            finally:
                if self._scratch is not None:
                    self._scratch.cleanup()
        if not self.evaluators.swept:  # once per command: it reads every process's environment
            self.evaluators.swept = True
            _sweep()
        with ThreadPoolExecutor(max_workers=plan.jobs) as pool:
            futures: dict[Future[BatchOutput], list[tuple[str, int]]] = {
                pool.submit(self._one, batch): batch for batch in plan.batches
            }
            try:
                return self._collect(futures, plan)
            except BaseException:  # an interrupt, or a record that cannot be written
                self.running.stop()
                raise
            finally:
                for future in futures:
                    future.cancel()
                pool.shutdown(wait=True)  # no batch may still be copying the checkout
                if self._scratch is not None:
                    self._scratch.cleanup()

    def _in_process(self, plan: Plan) -> float:
        """The batches one after another, in this thread: no process, no thread, no copy."""
        python = self.evaluators.python(self.store, self.config)
        tally = Tally(plan)
        for batch in plan.batches:
            output = python.run(self.context, self.split, [instance for instance, _ in batch], batch[0][1])
            self.finished(batch, output, plan.book)
            tally.add(batch, output)
        return tally.evaluator_time

    def _collect(self, futures: dict[Future[BatchOutput], list[tuple[str, int]]], plan: Plan) -> float:
        """Record each batch as it finishes. After a failure the others are stopped (see
        `_one`); those that finished meanwhile are recorded too, and the first failure is
        raised once every batch has ended."""
        tally = Tally(plan)
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
                self.finished(futures[future], output, plan.book)
                tally.add(futures[future], output)
        if failures:
            raise first_failure(failures)
        return tally.evaluator_time

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
                self.checkout(),
                running=self.running,
                on_stderr=self.on_stderr,
            )
        with ScratchDir("eval") as tmp:
            tree_dir = tmp / "harness"
            # A fresh copy per batch: an evaluator that writes into its directory
            # never affects another batch, and the tree leaves git only once.
            shutil.copytree(self.checkout(), tree_dir, symlinks=True)
            job = command_job(section, self.split, self.context, batch)
            return run_command(job, tree_dir, tmp, running=self.running, on_stderr=self.on_stderr)

    def checkout(self) -> Path:
        with self._pristine_lock:
            if self._pristine is None:
                self._scratch = ScratchDir("tree")
                pristine = self._scratch.path / "tree"
                pristine.mkdir()
                self.store.worktree.checkout_tree(self.context.tree, pristine)
                self._pristine = pristine
            return self._pristine

    def finished(
        self, batch: list[tuple[str, int]], output: BatchOutput, book: ScoreBook, *, worker: str | None = None
    ) -> None:
        """Record a finished batch: at once when the last write is `WRITE_EVERY` old (a
        slow evaluator's batch is on record as it ends), else with the batches that
        follow it, in one transaction (a fast one's evaluation costs one ref update,
        not one per batch: issue 13). Whatever is left is written when the evaluation
        ends, however it ends (`run`). ``worker``: the machine:pid that ran it, when
        not this process (a Ray worker)."""
        self._unwritten.append(self._record(batch, output, worker or self.worker))
        if time.monotonic() - self._written_at >= WRITE_EVERY:
            self._write(book)

    def _write(self, book: ScoreBook) -> None:
        records, self._unwritten = self._unwritten, []
        self._written_at = time.monotonic()
        if self.keep is not None:
            self.keep.extend(records)
            return
        if not records:
            return
        txn = Transaction(f"eval {self.context.commit[:12]} {self.split}")
        txn.append(layout.NOTES_EVALS, self.context.commit, records)
        for record in records:
            if record.evidence:
                txn.keep(record.evidence)
        self.store.refs.commit(txn)
        for record in records:
            book.add(record)

    def _record(self, batch: list[tuple[str, int]], output: BatchOutput, worker: str) -> EvalRecord:
        """The batch's record. Failure classes, clusters and cost names are the
        evaluator's strings like its feedback: scrubbed too."""
        results = output.results
        evidence_blob = None if self.keep is not None else self._evidence(batch, results)
        scrub = self.scrubber.text
        cost: dict[str, float] = {}
        for result in results:
            for name, value in (result.cost or {}).items():
                cost[scrub(name)] = cost.get(scrub(name), 0.0) + value
        record = EvalRecord(
            ts=self.store.clock(),
            commit=self.context.commit,
            grader=self.context.grader,
            **self.context.key.fields(),
            **self.manifest.fields(self.split),
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
            objective_scores=[r.objectives for r in results] if any(r.objectives for r in results) else None,
            evidence=evidence_blob,
            cost=cost or None,
            wall_time=round(output.wall_time, 4),
            worker=worker,
            fresh=self.fresh,
        )
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
        return self.store.objects.write_blob(("\n".join(lines) + "\n").encode("utf-8"))


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
