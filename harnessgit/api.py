"""The Python API: what the CLI does, for programs (an optimiser's callbacks, a notebook).

    from harnessgit.api import Repository

    with Repository.open(".") as repo:
        proposal = repo.propose({"prompts/system.md": text}, rationale="Say when to stop")
        repo.evaluate(proposal.commit)
        outcome = repo.gate(proposal.candidate)
        if outcome.passed:
            repo.merge(proposal.candidate)

A facade over the functions the commands call (`candidates.propose`, `evaluation.eval`,
`gate`), so it keeps their guarantees: every write is one atomic ref transaction, every
string from an evaluator or a proposer is scrubbed before it reaches git, records are
validated strictly, and a failure is a `HarnessgitError` whose message is the one line
the CLI would print. The results are the commands' own frozen dataclasses
(`render.to_json(result)` is their ``--json``).

One thing has no command: `record_scores`, for scores computed outside harnessgit (an
optimiser that evaluates, such as GEPA). They are recorded like an evaluation's, bound
to the commit's harness tree, under an evaluator fingerprint and model the caller names;
the gate and the frontier use them when that fingerprint and model are the repository
evaluator's (`Repository.evaluator_key`), and otherwise evaluate through the cache.
"""

from __future__ import annotations

import json
import math
import os
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from harnessgit import layout
from harnessgit.candidates.edits import edit_from_files
from harnessgit.candidates.propose import CandidateRequest, Proposal, propose, stage_proposal
from harnessgit.canonical import dumps_canonical
from harnessgit.checks import check_change
from harnessgit.config import Config, load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import Key, eval_context
from harnessgit.evaluation.eval import EvalRequest, Evaluation, evaluate, with_batches
from harnessgit.evaluation.fingerprint import harness_tree_id
from harnessgit.evaluation.splits import Manifest, parse_manifest
from harnessgit.gate.frontier import FrontierView, frontier_view, update_frontier
from harnessgit.gate.gate import GateRequest, run_gate
from harnessgit.gate.merge import MergeResult, merge
from harnessgit.gate.outcome import GateOutcome
from harnessgit.records import EvalRecord
from harnessgit.scrub import Scrubber
from harnessgit.stats.frontier_keys import FrontierType
from harnessgit.store import Store, Transaction
from harnessgit.targets import resolve

if TYPE_CHECKING:  # Python 3.11's typing.Unpack; only read by type checkers
    from typing_extensions import Unpack

__all__ = ["Proposal", "Repository", "ScoreOptions", "StageOptions", "split_hash"]


class StageOptions(TypedDict, total=False):
    """`Repository.stage_proposal`'s keyword arguments, each optional."""

    rationale: str
    evidence: list[Any] | None  # JSON values, scrubbed
    proposer: str | None
    source: str  # default "api"
    rejected: str | None  # a reason: archived at once
    other_parent: str | None  # a commit id: the candidate is a merge


class ScoreOptions(TypedDict, total=False):
    """`Repository.scores_record`'s optional keyword arguments (and `record_scores`')."""

    split: str  # default "selection"
    split_instances: Sequence[str] | None
    feedback: Mapping[str, Any] | None
    feedback_text: Mapping[str, str] | None
    wall_time: float
    objective_scores: Mapping[str, Mapping[str, float]] | None  # instance -> objective -> score


def refuse_unknown(function: str, given: Mapping[str, Any], options: type) -> None:
    """The TypeError Python raises for a misspelt keyword argument, for a function whose
    keyword arguments are a TypedDict (``**options: Unpack[...]``), which Python does not
    check at run time."""
    unknown = sorted(set(given) - set(getattr(options, "__annotations__", {})))
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")


def split_hash(split: str, instances: Sequence[str]) -> str:
    """What makes scores comparable (`Manifest.split_hash`): a split's instance set."""
    return _manifest(split, instances).split_hash(split)


class Repository:
    """A harness repository: its store (the one door to git) and its configuration.

    Open it with `Repository.open` and close it (or use ``with``): the store keeps two
    long-lived git processes. ``store`` and ``config`` are public for what the API does
    not cover; writing through them keeps the guarantees only through `store.refs.commit`.
    """

    def __init__(self, store: Store, config: Config) -> None:
        self.store = store
        self.config = config
        self.scrubber: Scrubber = config.scrub.scrubber(config.proposer)

    @classmethod
    def open(cls, path: str | os.PathLike[str] = ".") -> Repository:
        """The repository holding ``path``, after the preflight every command runs
        (an interrupted transaction is rolled forward; a stale lock refused)."""
        store = Store.discover(Path(path))
        try:
            return cls(store, load_config(store.root))
        except BaseException:
            store.close()
            raise

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Repository:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def root(self) -> Path:
        return self.store.root

    def resolve(self, rev: str) -> str:
        """The commit a name, candidate id or revision names."""
        return resolve(self.store.refs, rev).sha

    # -- proposing -------------------------------------------------------

    def propose(
        self,
        components: Mapping[str, str | bytes],
        *,
        parent: str | None = None,
        rationale: str = "",
        evidence: list[Any] | None = None,
        proposer: str | None = None,
        other_parent: str | None = None,
    ) -> Proposal:
        """A candidate: ``components`` (harness path -> new text) on ``parent`` (default
        the base branch tip), with its rationale and evidence (JSON values, scrubbed).
        ``other_parent``: a merge of two candidates is a commit on both (the texts are
        ``parent``'s with ``components`` applied)."""
        return propose(
            self.store,
            self.config,
            components,
            parent=parent,
            rationale=rationale,
            evidence=evidence,
            proposer=proposer,
            source="api",
            other_parent=self.resolve(other_parent) if other_parent else None,
        )

    def stage_proposal(
        self,
        txn: Transaction,
        components: Mapping[str, str | bytes],
        parent: str,
        **about: Unpack[StageOptions],
    ) -> Proposal:
        """`propose` into ``txn`` (commit it with `commit`): many candidates in one
        transaction. ``parent`` (and ``other_parent``, for a merge) is a commit id.
        ``about`` (`StageOptions`): ``rationale``, ``evidence``, ``proposer``, ``source``
        (default "api"), ``rejected`` (a reason: the candidate is archived at once, an
        optimiser's rejected proposal kept for review) and ``other_parent``."""
        refuse_unknown("stage_proposal", about, StageOptions)
        tree = self.store.objects.commit_info(parent).tree
        edit = edit_from_files(self.store.objects, self.config, tree, components)
        request = CandidateRequest(
            rationale=about.get("rationale", ""),
            evidence=about.get("evidence"),
            proposer=about.get("proposer"),
            source=about.get("source", "api"),
            other_parent=about.get("other_parent"),
            archived=about.get("rejected"),
        )
        return stage_proposal(self.store, self.config, txn, edit, parent, request, scrubber=self.scrubber)

    def commit(self, txn: Transaction) -> None:
        """Land a transaction: all of it or, on any failure, none of it."""
        self.store.refs.commit(txn)

    # -- scores ----------------------------------------------------------

    def evaluator_key(self, commit: str) -> Key:
        """The cache key the repository's evaluator gives ``commit``: (harness tree,
        evaluator fingerprint, model). Scores recorded under this fingerprint and model
        are the ones `gate`, `frontier` and `evaluate` find without running anything."""
        return eval_context(self.store.objects, self.config, commit).key

    def harness_tree(self, commit: str) -> str:
        """The git tree id of ``commit``'s harness files alone (the cache key's first part)."""
        return harness_tree_id(self.store.objects.files_at(commit), self.config)

    def scores_record(
        self,
        commit: str,
        scores: Mapping[str, float],
        *,
        fingerprint: str,
        model: str,
        **more: Unpack[ScoreOptions],
    ) -> EvalRecord:
        """The eval record of scores computed elsewhere (instance id -> score in [0, 1]),
        bound to ``commit``'s harness tree; not yet written (`record_scores` writes it,
        or add it to a transaction with `layout.NOTES_EVALS` and keep its evidence).
        ``more`` (`ScoreOptions`): ``split`` (default "selection"); ``split_instances``,
        the split's whole instance set (default: the scored ones), which makes scores
        comparable; ``feedback``, instance -> any value (an output, a trajectory), kept
        scrubbed in an evidence blob; ``feedback_text``, instance -> the feedback `review`
        prints for it, kept in the same blob; ``wall_time``, seconds (default 0);
        ``objective_scores``, instance -> objective -> a finite score, for every scored
        instance (GEPA's ``objective_scores``; what the objectives' frontier types read)."""
        refuse_unknown("scores_record", more, ScoreOptions)
        split = more.get("split", "selection")
        split_instances, wall_time = more.get("split_instances"), more.get("wall_time", 0.0)
        feedback, feedback_text = more.get("feedback"), more.get("feedback_text")
        objective_scores = more.get("objective_scores")
        if not scores:
            raise HarnessgitError("no scores to record")
        bad = [name for name, score in scores.items() if not 0 <= score <= 1 or math.isnan(score)]
        if bad:
            raise HarnessgitError(f"scores must be in [0, 1]: {bad[0]!r} has {scores[bad[0]]!r}")
        instances = list(scores)
        manifest = _manifest(split, split_instances if split_instances is not None else instances)
        outside = sorted(set(instances) - set(manifest.ids(split)))
        if outside:
            raise HarnessgitError(f"instance {outside[0]!r} is not in split {split!r}")
        objectives = _objective_column(instances, objective_scores) if objective_scores else None
        return EvalRecord(
            ts=self.store.clock(),
            commit=commit,
            harness=self.harness_tree(commit),
            fingerprint=self.scrubber.text(fingerprint),
            model=self.scrubber.text(model),
            split=split,
            split_hash=manifest.split_hash(split),
            manifest=manifest.hash,
            instances=instances,
            repeats=[0] * len(instances),
            scores=[float(scores[instance]) for instance in instances],
            objective_scores=objectives,
            evidence=self._feedback_blob(scores, feedback or {}, feedback_text or {})
            if feedback or feedback_text
            else None,
            wall_time=round(max(wall_time, 0.0), 4),
            worker=f"{socket.gethostname()}:{os.getpid()}",
        )

    def record_scores(self, commit: str, scores: Mapping[str, float], **how: Any) -> EvalRecord:
        """`scores_record`, written in one transaction."""
        record = self.scores_record(self.resolve(commit), scores, **how)
        txn = Transaction(f"record scores {record.commit[:12]} {record.split}")
        txn.append(layout.NOTES_EVALS, record.commit, [record])
        if record.evidence:
            txn.keep(record.evidence)
        self.store.refs.commit(txn)
        return record

    def _feedback_blob(
        self, scores: Mapping[str, float], feedback: Mapping[str, Any], texts: Mapping[str, str]
    ) -> str:
        lines = []
        for instance, score in scores.items():
            if instance in feedback or instance in texts:
                item: dict[str, Any] = {"instance": instance, "repeat": 0, "score": score}
                if instance in feedback:
                    item["trajectory"] = jsonable(feedback[instance])
                if instance in texts:
                    item["feedback"] = texts[instance]
                lines.append(dumps_canonical(self.scrubber.value(item)))
        return self.store.objects.write_blob(("\n".join(lines) + "\n").encode("utf-8"))

    # -- the commands ----------------------------------------------------

    def evaluate(
        self, rev: str, *, split: str = "selection", instances: list[str] | None = None
    ) -> Evaluation:
        """`harnessgit eval REV`: run the configured evaluator on what is not on record."""
        return evaluate(self.store, self.config, rev, EvalRequest(split=split, instances=instances))

    def frontier(self, *, update: bool = False, frontier_type: FrontierType | None = None) -> FrontierView:
        """`harnessgit frontier [--update] [--type TYPE]`."""
        view = frontier_view(self.store, self.config, frontier_type=frontier_type)
        return update_frontier(self.store, self.config, view) if update else view

    def gate(self, name: str, *, allow_small: bool = False) -> GateOutcome:
        """`harnessgit gate NAME`: evaluates what is missing, decides and records the attempt."""
        request = GateRequest(name, allow_small=allow_small)
        return run_gate(self.store, self.config, request, execution=with_batches(), check=check_change)

    def merge(self, name: str, *, allow_small: bool = False) -> MergeResult:
        """`harnessgit merge NAME`: gate, then land on the base branch if it passes."""
        request = GateRequest(name, allow_small=allow_small)
        return merge(self.store, self.config, request, execution=with_batches(), check=check_change)


def jsonable(value: Any) -> Any:
    """A JSON value for ``value``: itself when JSON holds it, else its ``repr`` (an
    optimiser's outputs are any Python objects; evidence is for reading, not replay)."""
    try:
        return json.loads(json.dumps(value, allow_nan=False, default=repr))
    except (TypeError, ValueError):
        return repr(value)


def _objective_column(
    instances: list[str], found: Mapping[str, Mapping[str, float]]
) -> list[dict[str, float] | None]:
    """The eval record's objective scores, a row per instance: every scored instance
    needs them, each a finite number (a NaN would tie with nothing, as GEPA's would)."""
    missing = [instance for instance in instances if instance not in found]
    if missing:
        raise HarnessgitError(f"instance {missing[0]!r} has scores but no objective scores")
    column: list[dict[str, float] | None] = []
    for instance in instances:
        row = {str(name): float(value) for name, value in found[instance].items()}
        bad = [name for name, value in row.items() if not math.isfinite(value)]
        if bad:
            raise HarnessgitError(
                f"objective {bad[0]!r} of {instance!r} is {row[bad[0]]!r}, not a finite number"
            )
        column.append(row)
    return column


def _manifest(split: str, instances: Sequence[str]) -> Manifest:
    return parse_manifest(json.dumps({split: list(instances)}).encode("utf-8"), "the recorded split")
