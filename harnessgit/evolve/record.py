"""An iteration's record: where it started (`Draw`), how it ended (`Ending`), and
`write_record`, which every iteration ends with, a stopped one too (`stopped`, from
the last `Ending` its steps returned before it stopped)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from harnessgit import layout
from harnessgit.candidates.propose import Proposal
from harnessgit.evidence import encode_evidence
from harnessgit.evolve.session import Mark, Session
from harnessgit.evolve.state import MergePlan
from harnessgit.proposers import ProposedEdit, ReflectiveExample, RejectedProposal
from harnessgit.proposers.protocol import capped, kept_output
from harnessgit.records import EvidenceRecord, IterationRecord
from harnessgit.scrub import Scrubber
from harnessgit.store import Store, Transaction

Answer = ProposedEdit | RejectedProposal


@dataclass(frozen=True, kw_only=True)
class Draw:
    """Where an iteration starts: a parent from the frontier, a train minibatch, how
    the parent did on it, and the component to edit."""

    number: int
    tip: str  # the base branch's tip when the iteration began
    parent: str
    parent_name: str
    component: str
    batch: list[str]
    current: str  # the component's text in the parent
    examples: list[ReflectiveExample]  # the reflective dataset
    parent_score: float | None  # the parent's minibatch mean
    merge: MergePlan | None = None  # a merge: the plan (batch: its selection subsample)
    also: dict[str, str] = field(default_factory=dict)  # [evolve] components > 1: the others' texts
    adopt: bool = False  # gating the frontier's best member (`harnessgit.evolve.adopt`)

    @property
    def parts(self) -> list[tuple[str, str]]:
        """Each component the iteration edits, with its text in the parent."""
        return [(self.component, self.current), *self.also.items()]

    @property
    def label(self) -> str:
        return ", ".join([self.component, *self.also])


@dataclass(frozen=True, kw_only=True)
class Ending:
    """How an iteration ended: what its record says beyond the draw."""

    draw: Draw
    outcome: str  # IterationRecord.outcome
    reason: str
    answer: Answer | None = None  # when the proposer was asked
    candidate: Proposal | None = None  # when the answer became a candidate
    candidate_score: float | None = None  # its minibatch mean
    selection_mean: float | None = None
    files: list[str] = field(default_factory=list)  # conflict: the files that conflicted
    judged: bool = False  # the candidate is scored on the whole selection split


def stopped(
    session: Session, mark: Mark, held: Ending | None, outcome: str, reason: str
) -> IterationRecord | None:
    """The record of an iteration a budget or Ctrl-C stopped, built from ``held``, what
    its steps had returned so far; a candidate not yet judged on the selection split is
    archived. None (and its number given back) when it had drawn no parent, or had
    spent and made nothing."""
    if held is None or (session.spend == mark.spend and held.candidate is None):
        session.unbegin()
        return None
    if held.candidate is not None and not held.judged:
        session.reject(held.candidate, f"evolve stopped before judging it: {reason}")
    end = replace(held, outcome=outcome, reason=reason, selection_mean=None, files=[])
    return write_record(session, end, mark)


def scrubber_of(session: Session) -> Scrubber:
    """The run's scrubber, made once: making one reads the whole environment for
    secret values (about 0.5 ms, several times an iteration: issue 13)."""
    if session.scrubber is None:
        session.scrubber = session.config.scrub.scrubber(session.config.proposer)
    return session.scrubber


def write_record(session: Session, end: Ending, mark: Mark) -> IterationRecord:
    """The iteration's record, on its candidate (else on its parent); a rejected
    proposal's output goes on the parent as evidence. The reason may quote the
    proposer's output (an anchor that was not found): scrubbed. Its time, spending and
    counts are the run's totals since ``mark``, when the iteration began."""
    store, start = session.store, end.draw
    scrubber = scrubber_of(session)
    evaluator, proposer = session.since(mark, "evaluator"), session.since(mark, "proposer")
    proposer_costs = [charge.cost_usd for charge in proposer if charge.cost_usd is not None]
    record = IterationRecord(
        ts=store.clock(),
        run=session.run,
        seed=session.seed,
        iteration=start.number,
        parent=start.parent,
        parent_name=start.parent_name,
        component=start.label,
        minibatch=start.batch,
        parent_score=start.parent_score,
        candidate=end.candidate.candidate if end.candidate else None,
        commit=end.candidate.commit if end.candidate else None,
        candidate_score=end.candidate_score,
        outcome=end.outcome,
        reason=scrubber.text(end.reason),
        files=end.files,
        move="merge" if start.merge else "adopt" if start.adopt else "reflect",
        other_parent=start.merge.second if start.merge else None,
        other_parent_name=start.merge.second_name if start.merge else None,
        ancestor=start.merge.ancestor if start.merge else None,
        selection_mean=end.selection_mean,
        # as on its proposal record
        proposer="merge" if start.merge else scrubber.text(session.options.proposer.name),
        cost_usd=sum(proposer_costs) if proposer_costs else None,  # as the proposer reported it
        evaluator_cost_usd=sum(charge.cost_usd or 0.0 for charge in evaluator) or None,
        proposals=session.spend.proposals - mark.spend.proposals,
        rollouts=session.spend.rollouts - mark.spend.rollouts,
        seconds=round(time.monotonic() - mark.started, 4),
        evaluator_seconds=round(sum(charge.seconds for charge in evaluator), 4),
        proposer_seconds=round(sum(charge.seconds for charge in proposer), 4),
    )
    txn = Transaction(f"evolve iteration {record.iteration}")
    txn.append(layout.NOTES_EVIDENCE, record.commit or start.parent, [record])
    if isinstance(end.answer, RejectedProposal):
        _keep_rejected(store, txn, start.parent, end.answer, scrubber)
    store.refs.commit(txn)
    session.written.append(record)
    return record


def _keep_rejected(
    store: Store, txn: Transaction, parent: str, answer: RejectedProposal, scrubber: Scrubber
) -> None:
    """A rejected proposal, as evidence on the parent (GEPA forgets it): why it was
    rejected and its output, scrubbed and bounded (`kept_output`), as one JSON line."""
    item = {
        "kind": "rejected-proposal",
        "proposer": answer.proposer,
        "component": answer.component,
        "code": answer.code,
        "reason": answer.reason,
        "rationale": capped(answer.rationale),
        **kept_output(answer.raw_output, scrubber),
        "usage": answer.usage.model_dump(mode="json"),
    }
    data, kinds = encode_evidence([item], scrubber)
    blob = store.objects.write_blob(data)
    record = EvidenceRecord(
        ts=store.clock(), blob=blob, items=1, bytes=len(data), label="rejected-proposal", item_kinds=kinds
    )
    txn.append(layout.NOTES_EVIDENCE, parent, [record])
    txn.keep(blob)
