"""`GitRecorder`: a GEPA run, recorded in git as it goes (docs/gepa.md).

Passed as ``callbacks=[GitRecorder(...)]`` to ``gepa.optimize`` or
``optimize_anything``. Every proposal, kept or not, becomes a candidate commit on its
parent's commit (rejected ones archived at birth, with GEPA's reason); every valset
evaluation becomes eval records bound to the candidate's harness tree; every
iteration an `IterationRecord`; the run a `RunRecord`.

GEPA's thread only assembles each iteration from its events, in memory; everything
that touches git runs on the recorder's writer thread (writer.py), which stages an
iteration whole and lands iterations together in one ref transaction about once a
second: a run killed anywhere leaves whole iterations only. (A transaction per
iteration on GEPA's thread cost 25% of a run of 10 ms metric calls, batching on GEPA's
thread 7-11%; docs/benchmarks.md.)

Recording never changes GEPA's run: the recorder only reads the events (gepa calls
callbacks synchronously and swallows their exceptions, gepa/core/callbacks.py
`notify_callbacks`), and keeps no reference to GEPA's state. A recording failure stops
the recording, not the run: the error is logged once, kept in `GitRecorder.error` and
raised by `close`, and what was written before it stays whole.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from harnessgit import layout
from harnessgit.api import Repository, refuse_unknown
from harnessgit.errors import HarnessgitError
from harnessgit.evidence import encode_evidence
from harnessgit.integrations.gepa.events import Iteration, Proposed, Task, ValsetScores
from harnessgit.integrations.gepa.objectives import ObjectiveTap, cached_objectives
from harnessgit.integrations.gepa.options import RecorderOptions, content_instance_id, output_feedback
from harnessgit.integrations.gepa.runlog import RunLog, end_reason
from harnessgit.integrations.gepa.staging import Staging
from harnessgit.integrations.gepa.usage import Meter
from harnessgit.integrations.gepa.writer import Writer
from harnessgit.records import EvidenceRecord, RunRecord, new_record_id
from harnessgit.store import Transaction
from harnessgit.targets import base_tip

if TYPE_CHECKING:  # Python 3.11's typing.Unpack; only read by type checkers
    from typing_extensions import Unpack

log = logging.getLogger("harnessgit")


class GitRecorder(Staging):
    """A GEPA callback recording the run in the harness repository at ``repo``.

    ``components`` maps GEPA's component names to harness paths. ``adapter`` (the
    GEPAAdapter, or its ``"package.module:factory"``) and ``model`` name the evaluator
    in the records' fingerprint. ``valset`` (the one given to GEPA) gives each example
    a stable instance id through ``instance_id(val_id, example)``. ``evaluator``:
    "own" records under a fingerprint of the adapter and model (the gate then evaluates
    through the repository's evaluator); "repository" records under the repository
    evaluator's fingerprint and model, which says GEPA's scores are that evaluator's
    (docs/gepa.md, "The gate and GEPA's scores"); "auto" is "repository" when
    ``[evaluator] adapter`` names ``adapter``, else "own".

    ``reflection_lm``: the LM object GEPA reflects with (a ``gepa.lm.LM`` or a
    ``dspy.LM``): each proposal's cost and tokens, and for DSPy the messages its
    proposer sent and the replies, are read from it (usage.py). ``feedback(output)``:
    the text `review` shows for a valset example, from GEPA's output for it (default:
    the output's ``feedback``). ``settings``: the run's configuration as the caller
    gave it to GEPA, recorded with the run (GEPA's own events carry only a few).
    """

    def __init__(
        self,
        repo: str = ".",
        components: Mapping[str, str] | None = None,
        **options: Unpack[RecorderOptions],
    ) -> None:
        refuse_unknown("GitRecorder", options, RecorderOptions)
        if not components:
            raise HarnessgitError("GitRecorder needs components: GEPA component name -> harness path")
        evaluator, parent = options.get("evaluator", "auto"), options.get("parent")
        if evaluator not in ("auto", "own", "repository"):
            raise HarnessgitError(f"evaluator must be auto, own or repository, not {evaluator!r}")
        self.repo = Repository.open(repo)
        self.components = dict(components)
        adapter = options.get("adapter")
        self.adapter = adapter if isinstance(adapter, str) else _qualified(adapter)
        self.model = options.get("model") or "gepa"
        self.valset, self.split = options.get("valset"), options.get("split", "selection")
        self.instance_id = options.get("instance_id", content_instance_id)
        self.feedback = options.get("feedback", output_feedback)
        self._meter = Meter(options.get("reflection_lm"))
        # the run's configuration, GEPA's Pareto front as it moved, its checkpoints:
        # one evidence blob on the run's base commit, with the run record
        self._log = RunLog(options.get("settings"))
        self.mode = self._mode(evaluator)
        self.fingerprint = "gepa:" + hashlib.sha256(f"{self.adapter}\0{self.model}".encode()).hexdigest()
        self.parent = (
            self.repo.resolve(parent)
            if parent
            else base_tip(self.repo.store.refs, self.repo.config.harness.base)
        )
        self.run = new_record_id()
        self.error: str | None = None
        self.commits: dict[int, str] = {}  # GEPA program index -> commit
        self.names: dict[str, str] = {}  # commit -> candidate id
        self.recorded = 0  # proposals recorded
        self._ids: dict[Any, str] = {}
        self._split_ids: list[str] = []
        self._iteration: Iteration | None = None
        self._programs: dict[int, dict[str, str]] = {}  # GEPA program index -> texts
        self._seed, self._calls, self._started = 0, 0, time.monotonic()
        # iterations started: GEPA numbers them from 1, and its end event's
        # total_iterations is one less than the last number (its state.i, from -1)
        self._iterations = 0
        self._budget: int | None = None
        self._txn: Transaction | None = None  # staged, not yet written
        self._tap: ObjectiveTap | None = None  # set by watch()
        self._closed = False
        # Last: from here on, only the writer's thread touches the repository.
        self._writer = Writer(
            self._write,
            self._failed,
            f"harnessgit: the GEPA recorder of run {self.run[:12]} in {self.repo.root}",
        )

    def watch(self, adapter: Any) -> Any:
        """``adapter``, to give GEPA in its place, so that each valset evaluation's
        per-example ``objective_scores`` are recorded with its scores: GEPA gives them
        to no callback (objectives.py). It answers GEPA exactly as ``adapter`` does."""
        if self.valset is None:
            raise HarnessgitError("GitRecorder.watch needs the valset: GitRecorder(..., valset=valset)")
        self._tap = ObjectiveTap(adapter, self._val_ids_by_example)
        return self._tap

    def _val_ids_by_example(self) -> dict[int, Any]:
        """id(example) -> GEPA's val id, for the examples of the valset given to GEPA."""
        valset = self.valset
        if hasattr(valset, "all_ids") and hasattr(valset, "fetch"):
            ids = list(valset.all_ids())
            return {id(example): val_id for val_id, example in zip(ids, valset.fetch(ids), strict=True)}
        return {id(example): val_id for val_id, example in enumerate(valset)}

    def _mode(self, evaluator: str) -> str:
        if evaluator != "auto":
            return evaluator
        configured = getattr(self.repo.config.evaluator, "adapter", None)
        return "repository" if configured and configured == self.adapter else "own"

    def close(self) -> None:
        """Wait for the writer to write everything GEPA reported, and close the
        repository. Raises `HarnessgitError` when recording stopped on an error."""
        if not self._closed:
            self._closed = True
            self._writer.close()
            self.repo.close()
        if self.error is not None:
            raise HarnessgitError(f"the GEPA recorder stopped recording: {self.error}")

    def __enter__(self) -> GitRecorder:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        try:
            self.close()
        except HarnessgitError:
            if kind is None:  # else GEPA's own exception is the one to see
                raise

    def _staging(self) -> Transaction:
        if self._txn is None:
            self._txn = Transaction(f"gepa run {self.run[:12]}")
        return self._txn

    def _write(self) -> None:
        txn, self._txn = self._txn, None
        if txn is not None and not txn.empty:
            self.repo.commit(txn)

    def _failed(self, exc: Exception) -> str:
        """A step failed on the writer: recording stops there, never GEPA."""
        self.error = self.repo.scrubber.text(f"{type(exc).__name__}: {exc}")
        log.error("harnessgit: the GEPA recorder stopped recording: %s", self.error)
        return self.error

    # -- the run -----------------------------------------------------------

    def on_optimization_start(self, event: Mapping[str, Any]) -> None:
        self._seed = int(event["config"].get("seed") or 0)
        seed, size = dict(event["seed_candidate"]), int(event["valset_size"])
        self._log.started(event, self.components)
        self._programs[0] = seed
        self._writer.submit(lambda: self._start(seed, size), "the seed candidate")

    def _start(self, seed: dict[str, str], size: int) -> None:
        self._split_ids = [self._instance(val_id) for val_id in self._val_ids(size)]
        files = self._files(seed)
        txn = self._staging()
        if self._holds_seed(self.parent, files):
            self.commits[0] = self.parent
        else:
            proposal = self.repo.stage_proposal(
                txn, files, self.parent, rationale="GEPA seed candidate", proposer="gepa", source="gepa"
            )
            self.commits[0], self.names[proposal.commit] = proposal.commit, proposal.candidate

    def on_valset_evaluated(self, event: Mapping[str, Any]) -> None:
        candidate, by_val_id = dict(event["candidate"]), dict(event["scores_by_val_id"])
        scores = ValsetScores(
            int(event["candidate_idx"]),
            candidate,
            by_val_id,
            event.get("outputs_by_val_id"),
            float(event["average_score"]),
            self._tap.taken(candidate, by_val_id) if self._tap is not None else None,
        )
        self._programs[scores.candidate_idx] = scores.candidate
        if self._iteration is not None and event["iteration"] == self._iteration.number:
            self._iteration.valsets.append(scores)
        else:  # the seed's, before any iteration
            self._writer.submit(lambda: self._seed_scores(scores), "the seed's valset scores")

    def _seed_scores(self, scores: ValsetScores) -> None:
        if scores.candidate_idx in self.commits:
            self._eval_record(self._staging(), self.commits[scores.candidate_idx], scores)
            self._writer.write_now()

    def on_budget_updated(self, event: Mapping[str, Any]) -> None:
        self._calls = int(event["metric_calls_used"])
        remaining = event.get("metric_calls_remaining")
        # gepa reports max(0, budget - used): exact only while some budget is left
        if remaining:
            self._budget = self._calls + int(remaining)

    def on_optimization_end(self, event: Mapping[str, Any]) -> None:
        calls = int(event["total_metric_calls"])
        reason = end_reason(calls, self._budget)
        iterations, best = self._iterations, int(event["best_candidate_idx"])
        self._log.ended(event.get("final_state"))
        seconds = time.monotonic() - self._started
        self._writer.submit(
            lambda: self._write_run(iterations, calls, reason, best, seconds), "the run record"
        )
        # GEPA's last word on this run: the record is on disk before optimize() returns,
        # whether or not the script ever calls close() (issue 28)
        self._writer.flush()

    def on_error(self, event: Mapping[str, Any]) -> None:
        exception = event["exception"]
        iteration = self._iteration
        if iteration is not None:
            iteration.error = f"{type(exception).__name__}: {exception}"
        if not event["will_continue"]:  # gepa raises next: this run has no optimization end
            self._iteration = None
            if iteration is not None:
                self._end(iteration)
            iterations, calls = self._iterations, self._calls
            reason = f"error: {type(exception).__name__}: {exception}"
            seconds = time.monotonic() - self._started
            self._writer.submit(
                lambda: self._write_run(iterations, calls, reason, None, seconds), "the run record"
            )
            self._writer.flush()  # gepa raises next, and the script may never call close()

    def _write_run(self, iterations: int, calls: int, reason: str, best: int | None, seconds: float) -> None:
        base = self.commits.get(0, self.parent)
        fingerprint, model = self._fingerprint_of(base)
        record = RunRecord(
            ts=self.repo.store.clock(),
            run=self.run,
            optimizer="gepa",
            seed=self._seed,
            base=base,
            budget=self._budget,
            metric_calls=calls,
            iterations=iterations,
            candidates=self.recorded,
            stop_reason=self.repo.scrubber.text(reason),
            best=self.commits.get(best) if best is not None else None,
            fingerprint=fingerprint,
            model=model,
            seconds=round(seconds, 3),
        )
        self._staging().append(layout.NOTES_EVIDENCE, record.base, [record, self._run_evidence()])
        self._writer.write_now()

    def _run_evidence(self) -> EvidenceRecord:
        """The run's configuration, GEPA's Pareto front after each change, its checkpoints."""
        items = self._log.items(self.run, self.commits)
        data, kinds = encode_evidence(items, self.repo.scrubber)
        blob = self.repo.store.objects.write_blob(data)
        self._staging().keep(blob)
        return EvidenceRecord(
            ts=self.repo.store.clock(), blob=blob, items=len(items), bytes=len(data), label="gepa-run",
            item_kinds=kinds,
        )  # fmt: skip

    def on_pareto_front_updated(self, event: Mapping[str, Any]) -> None:
        self._log.front_moved(event)

    def on_state_saved(self, event: Mapping[str, Any]) -> None:
        self._log.state_saved(event)

    # -- one iteration -----------------------------------------------------

    def on_iteration_start(self, event: Mapping[str, Any]) -> None:
        self._iterations += 1
        self._iteration = Iteration(int(event["iteration"]), time.monotonic(), self._calls)

    def on_candidate_selected(self, event: Mapping[str, Any]) -> None:
        if self._iteration is not None:
            self._iteration.tasks.append(Task(int(event["candidate_idx"]), dict(event["candidate"])))

    def on_minibatch_sampled(self, event: Mapping[str, Any]) -> None:
        if self._iteration is not None and self._iteration.tasks:
            self._iteration.tasks[-1].minibatch = [str(i) for i in event["minibatch_ids"]]

    def on_evaluation_end(self, event: Mapping[str, Any]) -> None:
        if self._iteration is None:
            return
        if event["candidate_idx"] is None:
            self._iteration.on_child_scores(list(event["scores"]))
        else:
            self._iteration.on_parent_scores(int(event["candidate_idx"]), list(event["scores"]))

    def on_evaluation_skipped(self, event: Mapping[str, Any]) -> None:
        if self._iteration is not None:
            self._iteration.on_skipped(int(event["candidate_idx"]), str(event["reason"]))

    def on_reflective_dataset_built(self, event: Mapping[str, Any]) -> None:
        self._meter.take()  # what the LM spent before this reflection is not its
        if self._iteration is not None:
            self._iteration.on_dataset(int(event["candidate_idx"]), event["dataset"])

    def on_proposal_end(self, event: Mapping[str, Any]) -> None:
        usage = self._meter.take()
        if self._iteration is not None:
            self._iteration.on_proposal(
                dict(event["new_instructions"]), event["prompts"], event["raw_lm_outputs"], usage
            )

    def on_candidate_rejected(self, event: Mapping[str, Any]) -> None:
        if self._iteration is not None:
            self._iteration.rejections.append(str(event["reason"]))

    def on_merge_attempted(self, event: Mapping[str, Any]) -> None:
        if self._iteration is None:
            return
        parents = [int(p) for p in event["parent_ids"]]
        candidate = dict(event["merged_candidate"])
        # the first parent's texts, as GEPA gave them (every program GEPA added had its
        # valset evaluated); an unknown one counts every component as changed
        first = self._programs.get(parents[0], {})
        changed = sorted(name for name in candidate if candidate[name] != first.get(name))
        self._iteration.merge = Proposed(candidate, parents, "merge", changed)

    def on_merge_rejected(self, event: Mapping[str, Any]) -> None:
        if self._iteration is not None:
            self._iteration.merge_rejected = str(event["reason"])

    def on_iteration_end(self, event: Mapping[str, Any]) -> None:
        iteration, self._iteration = self._iteration, None
        if iteration is not None:
            cached_objectives(event.get("state"), iteration.valsets)
            self._end(iteration)

    def _end(self, iteration: Iteration) -> None:
        iteration.ended, iteration.calls_after = time.monotonic(), self._calls
        self._writer.submit(lambda: self._flush(iteration), f"iteration {iteration.number}")

    # -- writing (on the writer's thread) -------------------------------------

    def _flush(self, iteration: Iteration) -> None:
        """Stage the iteration whole (its candidates, evidence, eval records and
        iteration records) with the ones before it; the writer lands them. A candidate
        id drawn twice (48 random bits, odds below 1e-9 for 10,000 candidates) fails
        the write: the recording stops there."""
        if iteration.error:
            iteration.error = self.repo.scrubber.text(iteration.error)
        iteration.settle({v.candidate_idx: v.candidate for v in iteration.valsets})
        # Staged into a transaction of its own first: an iteration that cannot be staged
        # (a score outside [0, 1]) leaves the ones before it whole.
        txn = Transaction("iteration")
        self.commits.update(self._stage(txn, iteration))
        self.recorded += len(iteration.proposals())
        self._staging().include(txn)


def _qualified(adapter: Any) -> str:
    if adapter is None:
        return "unnamed GEPA adapter"
    kind = type(adapter)
    return f"{kind.__module__}.{kind.__qualname__}"
