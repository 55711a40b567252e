"""Evolve's gate step: whether a kept candidate is worth gating, and the gate itself.

`gated_before` finds an earlier edit of the candidate's chain that passed the gate
against the current base (its descendants are not gated again); `verdict_on` asks the
policy (`harnessgit.evolve.policy.judge`), which charges every look at the selection
split; `gate` runs the gate, or with ``auto_merge`` a merge through it, after carrying
the candidate onto the base's tip when the base moved under it.
"""

from __future__ import annotations

from typing import Any

from harnessgit import layout
from harnessgit.candidates.propose import Proposal, rebase
from harnessgit.errors import CarryConflict, GateRefused, ProposalError
from harnessgit.evolve.policy import Verdict, judge, looks_allowed, passed_before
from harnessgit.evolve.session import Session
from harnessgit.gate.attempts import attempt_number
from harnessgit.gate.gate import run_gate
from harnessgit.gate.merge import merge
from harnessgit.gate.outcome import GateOutcome
from harnessgit.gate.prior import all_gate_records, passes_before, prior_before
from harnessgit.records import GateRecord
from harnessgit.targets import proposal_chain


def not_carried(session: Session, exc: ProposalError) -> dict[str, Any]:
    """A candidate whose edit cannot be carried onto the base's tip is not gated; like a
    candidate not worth gating it stays where the frontier puts it (live while on it)."""
    base = session.config.harness.base
    if isinstance(exc, CarryConflict):
        return {"outcome": "conflict", "reason": f"conflicts with {base}: {exc}", "files": exc.paths}
    return {"outcome": "not-carried", "reason": f"cannot be carried onto {base}: {exc}"}


def gated_before(session: Session, commit: str) -> str:
    """Why ``commit`` is not gated: an earlier edit of its chain passed the gate against
    the current base tip, in this run or on the record (an earlier run, a `harnessgit
    gate` by hand); "" when none did."""
    base = session.base_commit()
    chain = [origin.commit for origin in proposal_chain(session.store, commit, base)]
    passed = dict(session.passed)
    for sha in chain[:-1]:
        for record in session.store.notes.records_on(layout.NOTES_GATE, sha):
            if (
                isinstance(record, GateRecord)
                and record.passed
                and record.base == base
                and record.commit == sha
            ):
                passed[sha] = record.candidate or sha[:12]
    return passed_before(chain, passed)


def verdict_on(session: Session, tip: str, commit: str) -> Verdict:
    """The policy's verdict on gating ``commit`` (`harnessgit.evolve.policy.judge`)."""
    session.evaluate(tip, "selection", session.selection)
    base_key, cand_key = session.context(tip).key, session.context(commit).key
    budget = session.options.budget
    pair = (base_key.harness, cand_key.harness)
    gates = all_gate_records(session.store.notes) if session.config.gate.policy != "strict" else []
    return judge(
        session.config.gate,
        session.config.harness.base,
        session.book.scored(base_key, session.selection),
        session.book.scored(cand_key, session.selection),
        attempt=attempt_number(session.store, session.split_hash, (base_key.harness, cand_key.harness)),
        looks=session.looks,
        base_harness=base_key.harness,
        allowed=looks_allowed(
            budget.max_rollouts, budget.max_proposals, len(session.selection), session.config.evolve.minibatch
        ),
        prior=prior_before(gates, pair),
        passed_before=passes_before(gates, session.split_hash, pair),
    )


def gate(session: Session, tip: str, candidate: Proposal, *, note: str = "") -> tuple[str, str, Proposal]:
    """The gate against the base branch, or with ``auto_merge`` a merge through it:
    the iteration's outcome, the reason, and the candidate gated (carried onto the
    base's tip first when it does not descend from it: the base may have moved since
    ``tip``, by this run or by someone else while the iteration ran)."""
    base = session.config.harness.base
    with session.store.refs.direct():  # the gate runs git on the candidate and may move the base
        current = session.base_commit()
        descends = session.store.history.is_ancestor(current, candidate.commit)
        gated = candidate if descends else _carry(session, candidate)
        try:
            outcome, reason = _gate_or_merge(session, gated, note)
        except GateRefused as refusal:  # a precondition failed: nothing was evaluated or recorded
            outcome, reason = "gate-refused", str(refusal)
        finally:
            session.moved(gated.candidate, None, gated.commit)  # a merge moves branches
    if gated is not candidate:
        reason = f"carried onto {base} as {gated.candidate}" + (f"; {reason}" if reason else "")
    return outcome, reason, gated


def _gate_or_merge(session: Session, gated: Proposal, note: str) -> tuple[str, str]:
    if session.options.auto_merge:
        landed, checked = _merge(session, gated, note)
        outcome = "merged" if landed else _OUTCOMES[checked.verdict]
    else:
        checked = run_gate(
            session.store,
            session.config,
            gated.candidate,
            execution=session.options.execution,
            book=session.book,
        )
        outcome = _OUTCOMES[checked.verdict]
    return outcome, "; ".join(checked.record.reasons)


_OUTCOMES = {"pass": "gate-passed", "fail": "gate-failed", "inconclusive": "gate-inconclusive"}


def _carry(session: Session, candidate: Proposal) -> Proposal:
    """``candidate``'s edit carried onto the base's tip (the gate merges only what
    descends from it), scored on the selection split like its original."""
    carried = rebase(session.store, session.config, candidate.candidate, session.config.harness.base)
    session.remember(carried)
    session.meter.candidate, session.meter.judged = carried, False
    session.evaluate(carried.commit, "selection", session.selection)
    session.meter.judged = True
    session.view = None
    return carried


def _merge(session: Session, gated: Proposal, note: str) -> tuple[bool, GateOutcome]:
    """Whether the merge landed, and the gate's outcome on the way; ``note`` (the
    gain corrected for selection) goes into the merge message."""
    merged = merge(
        session.store,
        session.config,
        gated.candidate,
        execution=session.options.execution,
        note=f"Evolve: {note}" if note else "",
    )
    assert merged.outcome is not None  # only an override (revert --no-gate) has none
    return bool(merged.merge), merged.outcome
