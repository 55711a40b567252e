"""An iteration's record: where it started (`Draw`), how it ended (`Ending`), and
`write_record`, which every iteration ends with, a stopped one too (`stopped`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from harnessgit import layout
from harnessgit.candidates.propose import Proposal
from harnessgit.evidence import encode_evidence
from harnessgit.evolve.session import Session
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


def stopped(session: Session, number: int, outcome: str, reason: str) -> IterationRecord | None:
    meter = session.meter
    if meter.drawn is None or (session.spend == meter.before and meter.candidate is None):
        session.unbegin()
        return None
    parent, parent_name, batch = meter.drawn
    start = Draw(
        number=number,
        tip="",
        parent=parent,
        parent_name=parent_name,
        component=meter.component,
        batch=batch,
        current="",
        examples=[],
        parent_score=meter.parent_score,
        merge=meter.merge,
    )
    if meter.candidate is not None and not meter.judged:
        session.reject(meter.candidate, f"evolve stopped before judging it: {reason}")
    end = Ending(
        draw=start,
        outcome=outcome,
        reason=reason,
        answer=meter.answer,
        candidate=meter.candidate,
        candidate_score=meter.candidate_score,
    )
    return write_record(session, end)


def scrubber_of(session: Session) -> Scrubber:
    """The run's scrubber, made once: making one reads the whole environment for
    secret values (about 0.5 ms, several times an iteration: issue 13)."""
    if session.scrubber is None:
        session.scrubber = session.config.scrub.scrubber(session.config.proposer)
    return session.scrubber


def write_record(session: Session, end: Ending) -> IterationRecord:
    """The iteration's record, on its candidate (else on its parent); a rejected
    proposal's output goes on the parent as evidence. The reason may quote the
    proposer's output (an anchor that was not found): scrubbed."""
    store, start, meter = session.store, end.draw, session.meter
    scrubber = scrubber_of(session)
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
        move="merge" if start.merge else "reflect",
        other_parent=start.merge.second if start.merge else None,
        other_parent_name=start.merge.second_name if start.merge else None,
        ancestor=start.merge.ancestor if start.merge else None,
        selection_mean=end.selection_mean,
        # as on its proposal record
        proposer="merge" if start.merge else scrubber.text(session.options.proposer.name),
        cost_usd=meter.proposer_cost_usd,
        evaluator_cost_usd=meter.evaluator_cost_usd or None,
        proposals=session.spend.proposals - meter.before.proposals,
        rollouts=session.spend.rollouts - meter.before.rollouts,
        seconds=round(time.monotonic() - meter.started, 4),
        evaluator_seconds=round(meter.evaluator_seconds, 4),
        proposer_seconds=round(meter.proposer_seconds, 4),
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
