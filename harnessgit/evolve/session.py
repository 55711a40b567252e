"""What an evolve run keeps between iterations: the splits, the scores on record,
the frontier, what it has spent, and the door to the evaluator under the budget."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Literal

from harnessgit import layout
from harnessgit.candidates.propose import Proposal
from harnessgit.config import Config
from harnessgit.evaluation.context import EvalContext, eval_context
from harnessgit.evaluation.eval import EvalRequest, Execution, evaluate
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.splits import load_manifest
from harnessgit.evolve.policy import Looks
from harnessgit.evolve.state import Budget, BudgetReached, MergeSchedule, Spend
from harnessgit.gate.frontier import FrontierView, Known, frontier_view, proposals_by_commit
from harnessgit.proposers import Proposer
from harnessgit.records import IterationRecord, ProposalRecord
from harnessgit.scrub import Scrubber
from harnessgit.store import Notes, Store, Transaction
from harnessgit.targets import State, base_tip, candidate_tips, retire


@dataclass(frozen=True, kw_only=True)
class Options:
    """How an evolve invocation runs, as the caller asked."""

    proposer: Proposer
    seed: int
    budget: Budget
    auto_merge: bool = False
    execution: Execution = Execution()
    merge: bool = False  # GEPA's merge proposals ([evolve] merge, --merge)


@dataclass(frozen=True)
class Charge:
    """One call the run paid for, the evaluator's or the proposer's: its time and cost
    (a proposer's cost is None when it did not report one)."""

    by: str  # "evaluator" | "proposer"
    seconds: float
    cost_usd: float | None


@dataclass(frozen=True)
class Mark:
    """The run's running totals when an iteration began: an iteration's record takes
    its time, spending and calls as the difference from its mark."""

    started: float
    spend: Spend
    charges: int  # len(Session.charges)


class Session:
    def __init__(self, store: Store, config: Config, options: Options) -> None:
        self.store, self.config, self.options = store, config, options
        self.seed = options.seed
        self.run = uuid.uuid4().hex[:12]
        self.spend = Spend()
        manifest = self.manifest = load_manifest(store.root, config.splits.manifest)
        self.train, self.selection = manifest.ids("train"), manifest.ids("selection")
        self.split_hash = manifest.split_hash("selection")
        self.solved_streak = 0  # iterations in a row whose minibatch the parent already solved
        self.batches_per_epoch = max(1, len(self.train) // min(config.evolve.minibatch, len(self.train)))
        self.book = ScoreBook.load(store)
        self.proposals = proposals_by_commit(store.notes)
        self.contexts: dict[str, EvalContext] = {}  # commit -> cache key, for the frontier
        self.view: FrontierView | None = None
        self.scrubber: Scrubber | None = None  # `record.scrubber_of`
        # Candidate id -> (live | archived, tip), kept as this run moves them (a listing
        # of every branch is a git process); listed again after a gate or a base move.
        self._tips: dict[str, tuple[State, str]] | None = None
        self.passed: dict[str, str] = {}  # commit -> candidate id of candidates that passed the gate
        self.charges: list[Charge] = []  # every evaluator and proposer call of the run, in order
        self.written: list[IterationRecord] = []  # this invocation's iteration records, in order
        self.schedule = MergeSchedule(max_merges=config.evolve.max_merges)
        self.merges_tried: set[tuple[str, str, str]] = set()  # (first, second, ancestor) commits
        self.looks = Looks()  # candidates scored on the selection split against the current base
        self.started_at = store.clock()  # gate records from before the run inform its prior
        # The (gain, se) pairs the last look's prior was learned from (None: strict's looks)
        self.prior_gains: list[tuple[float, float]] | None = None
        self.iteration = _next_iteration(store.notes, options.seed)
        # How the run gates (`harnessgit.evolve.adopt.evolve_rules`): once at the end, or
        # each look as it comes; where its policy came from; the (policy, q) the gate
        # decides with instead of the base's committed [gate] ones (None: those).
        self.at_end = False
        self.source = "[gate] policy"
        self.override: tuple[Literal["strict", "bayes", "elond"], float] | None = None

    def begin(self) -> tuple[int, Mark]:
        """Start the next iteration: its number, and the run's totals as it begins."""
        number, self.iteration = self.iteration, self.iteration + 1
        return number, Mark(started=time.monotonic(), spend=self.spend, charges=len(self.charges))

    def since(self, mark: Mark, by: str) -> list[Charge]:
        """The calls by ``by`` ("evaluator" or "proposer") made since ``mark``, in order."""
        return [charge for charge in self.charges[mark.charges :] if charge.by == by]

    def unbegin(self) -> None:
        """Give back the number of an iteration that stopped before it spent anything:
        it leaves no record, and a resumed run draws that minibatch again."""
        self.iteration -= 1

    def base_commit(self) -> str:
        return base_tip(self.store.refs, self.config.harness.base)

    def frontier(self) -> FrontierView:
        """The frontier, rebuilt only when the pool may have changed: a candidate
        scored on the selection split, a retirement, or a move of the base branch.
        A base tip not yet scored on the selection split (the run's first iteration,
        or someone else moved the base) is evaluated first, inside the iteration, so
        its rollouts are on that iteration's record."""
        tip = self.base_commit()
        if self.view is not None and self.view.members[self.view.base].commit != tip:
            self.view = self._tips = None  # someone else may have moved candidates too
        if self.view is None:
            self.evaluate(tip, "selection", self.selection)
            known = Known(self.book, self.proposals, self.contexts, self.tips(), self.manifest)
            self.view = frontier_view(self.store, self.config, known=known)
        return self.view

    def tips(self) -> dict[str, tuple[State, str]]:
        """Every candidate's state and tip (`candidate_tips`), as this run left them."""
        if self._tips is None:
            self._tips = candidate_tips(self.store.refs)
        return self._tips

    def moved(self, candidate: str, state: State | None, commit: str) -> None:
        """This run moved ``candidate``'s branch; None: it does not know where (the gate
        moves branches of its own), so the next `tips` lists them again."""
        if state is None:
            self._tips = None
        elif self._tips is not None:
            self._tips[candidate] = (state, commit)

    def context(self, commit: str) -> EvalContext:
        if commit not in self.contexts:
            self.contexts[commit] = eval_context(self.store.objects, self.config, commit)
        return self.contexts[commit]

    def evaluate(self, commit: str, split: str, instances: list[str]) -> float | None:
        """The mean score of ``commit`` on ``instances``, evaluating only what is missing."""
        key = self.context(commit).key
        have = self.book.rows(key)
        needed = sum(1 for instance in instances if (instance, 0) not in have)
        if needed:
            self._run_evaluator(commit, split, instances, needed)
        means = self.book.complete_means(key, tuple(instances), f"{split}:{'|'.join(instances)}")
        return sum(means) / len(means) if means else None

    def _run_evaluator(self, commit: str, split: str, instances: list[str], needed: int) -> None:
        limit = self.options.budget.max_rollouts
        if limit is not None and self.spend.rollouts + needed > limit:
            raise BudgetReached(f"max rollouts ({limit}): the next evaluation needs {needed} more")
        known = set(self.book.records)
        result = evaluate(
            self.store,
            self.config,
            commit,
            EvalRequest(split=split, instances=instances),
            execution=self.options.execution,
            book=self.book,
            manifest=self.manifest,  # read once per run, as the splits above
            context=self.context(commit),
        )
        self.spend = self.spend.add(rollouts=result.evaluated)
        paid = 0.0
        for record_id in set(self.book.records) - known:  # the records this evaluation wrote
            cost = (self.book.records[record_id].cost or {}).get("usd", 0.0)
            self.spend = self.spend.add(cost_usd=cost)
            paid += cost
        self.charges.append(Charge("evaluator", result.evaluator_time, paid))

    def remember(self, proposal: Proposal) -> None:
        """Add a new candidate's proposal record to the pool the frontier reads."""
        for record in self.store.notes.records_on(layout.NOTES_EVIDENCE, proposal.commit):
            if isinstance(record, ProposalRecord):
                self.proposals[proposal.commit] = record
        self.moved(proposal.candidate, "live", proposal.commit)

    def reject(self, proposal: Proposal, detail: str) -> None:
        """Archive a candidate that lost (still pinned, still audited), if it is live."""
        # One ref lookup (of what this iteration staged, too), not a listing of every branch.
        if self.store.refs.value(layout.candidate_ref(proposal.candidate)) is None:
            return
        txn = Transaction(f"retire {proposal.candidate}")
        retire(self.store, txn, proposal.candidate, proposal.commit, "rejected", detail)
        self.store.refs.commit(txn)
        self.moved(proposal.candidate, "archived", proposal.commit)


def _next_iteration(notes: Notes, seed: int) -> int:
    """Iterations count across resumed runs with the same seed."""
    done = [
        r.iteration
        for records in notes.records(layout.NOTES_EVIDENCE).values()
        for r in records
        if isinstance(r, IterationRecord) and r.seed == seed
    ]
    return max(done) + 1 if done else 0
