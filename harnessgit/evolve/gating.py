"""Evolve's gate step: whether a kept candidate is worth gating, and the gate itself.

`gated_before` finds an earlier edit of the candidate's chain that passed the gate
against the current base (its descendants are not gated again); `verdict_on` asks the
policy (`harnessgit.evolve.policy.judge`), which charges every look at the selection
split; `carry` carries the candidate onto the base's tip when the base moved under it
(`judge_carried` scores the copy), and `gate` runs the gate, or with ``auto_merge`` a
merge through it. Each returns what it made; the iteration keeps it for its record.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from harnessgit import layout
from harnessgit.candidates.propose import Proposal, rebase
from harnessgit.checks import check_change
from harnessgit.errors import CarryConflict, GateRefused, ProposalError
from harnessgit.evolve.policy import (
    Look,
    LookRequest,
    Looks,
    Verdict,
    judge,
    looks_allowed,
    passed_before,
)
from harnessgit.evolve.session import Session
from harnessgit.gate.attempts import attempt_number
from harnessgit.gate.gate import GateRequest, run_gate
from harnessgit.gate.merge import merge
from harnessgit.gate.outcome import GateOutcome
from harnessgit.gate.prior import all_gate_records, gains_before, passes_before
from harnessgit.gate.sequential import reading_order
from harnessgit.records import GateRecord
from harnessgit.render import points
from harnessgit.stats.decision import compare
from harnessgit.stats.pairing import pair_scores
from harnessgit.stats.verdict import DEFAULT_PRIOR, MIN_LOOKS, chance_above, posterior, screened_prior
from harnessgit.targets import proposal_chain

# Evolve's screening of a look on the selection split (policies other than strict): read
# this many instances at a time, and stop when the chance of a gain is under SCREEN_STOP.
SCREEN_BATCH = 12
SCREEN_STOP = 0.1
# Why a look is not gated in a run that gates once at the end (`harnessgit.evolve.adopt`).
DEFERRED = "gated at the end of the run if it is then the frontier's best"


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


def verdict_on(session: Session, tip: str, commit: str, *, count: bool = True) -> Verdict:
    """The policy's verdict on gating ``commit`` (`harnessgit.evolve.policy.judge`).

    Under a policy other than strict the prior is learned from every look this run
    screened on the selection split before this one (each a minibatch winner, scored
    whatever its selection scores turn out to be, so not selected on them) and the
    gains of the gate records written before the run began; the gate then decides with
    the same prior and records the gains it was learned from (`screened_gains`).
    ``count`` False: a second look at a candidate already looked at (`adopt`), which
    does not join the looks the prior is learned from. A run that gates at the end
    gates no look as it comes (`deferred`)."""
    session.evaluate(tip, "selection", session.selection)
    if count and session.at_end:
        return deferred(session, tip, commit)
    base_key, cand_key = session.context(tip).key, session.context(commit).key
    budget = session.options.budget
    pair = (base_key.harness, cand_key.harness)
    strict = session.config.gate.policy == "strict"
    gates = [] if strict else all_gate_records(session.store.notes)
    session.prior_gains = None if strict else screened_gains(session, gates, pair)
    request = LookRequest(
        rules=session.config.gate,
        base_branch=session.config.harness.base,
        base=session.book.scored(base_key, session.selection),
        candidate=session.book.scored(cand_key, session.selection),
        attempt=attempt_number(session.store, session.split_hash, pair),
        base_harness=base_key.harness,
        allowed=looks_allowed(
            budget.max_rollouts, budget.max_proposals, len(session.selection), session.config.evolve.minibatch
        ),
        prior=DEFAULT_PRIOR if session.prior_gains is None else screened_prior(session.prior_gains),
        passed_before=passes_before(gates, session.split_hash, pair),
    )
    verdict = judge(request, session.looks if count else Looks())
    if verdict.gate and session.prior_gains is not None and len(session.prior_gains) < MIN_LOOKS:
        return replace(
            verdict,
            gate=False,
            reason=f"{verdict.reason}; not gated yet: the prior is learned from at least {MIN_LOOKS} "
            f"screened looks, and this run has {len(session.prior_gains)}",
        )
    return verdict


def deferred(session: Session, tip: str, commit: str) -> Verdict:
    """A look in a run that gates once at the end (`harnessgit.evolve.adopt`): it joins
    the looks the prior is learned from, and is not gated (no prior is learned for it,
    no gate record read: the run's own time per iteration stays small)."""
    base_key, cand_key = session.context(tip).key, session.context(commit).key
    paired = pair_scores(
        session.book.scored(base_key, session.selection), session.book.scored(cand_key, session.selection)
    )
    if paired is None:
        return Verdict(False, "fewer than two selection instances scored on both sides")
    difference = compare(paired).difference
    session.looks.add(base_key.harness, Look(difference.mean, difference.se))
    gain = points(difference.mean)
    return Verdict(False, f"selection gain {gain} points over {session.config.harness.base}; {DEFERRED}")


def onto_base(session: Session, candidate: Proposal) -> Proposal:
    """Under a policy other than strict, ``candidate``'s edit carried onto the base's
    tip when it does not descend from it (a parent drawn from the frontier is often
    not the base): the look then measures what a merge would hold, the edit with
    everything merged since, rather than the edit without it. The original is
    retired in favour of its carried copy. Strict, or an edit that cannot be carried:
    ``candidate`` itself (the gate step carries it, or says why not)."""
    if session.config.gate.policy == "strict":
        return candidate
    base = session.base_commit()
    if session.store.history.is_ancestor(base, candidate.commit):
        return candidate
    try:
        carried = rebase(session.store, session.config, candidate.candidate, session.config.harness.base)
    except ProposalError:
        return candidate
    session.remember(carried)
    session.reject(candidate, f"carried onto {session.config.harness.base} as {carried.candidate}")
    return carried


def screen(session: Session, tip: str, commit: str) -> str:
    """Score ``commit`` on the selection split SCREEN_BATCH instances at a time (the
    gate's reading order) and stop early when, under the prior learned from the looks
    screened so far, its chance of gaining more than min_effect over the base ``tip``
    is below SCREEN_STOP: why it stopped, "" when the whole split was read. Only under
    a policy other than strict (strict's look levels assume every look reads it all).
    A stopped look joins the looks the prior is learned from: every screened
    proposal's evidence counts, whether or not it was read to the end."""
    selection = session.selection
    if session.config.gate.policy == "strict" or len(selection) <= SCREEN_BATCH:
        session.evaluate(commit, "selection", selection)
        return ""
    session.evaluate(tip, "selection", selection)
    base = session.book.scored(session.context(tip).key, selection)
    order = reading_order(selection, session.config.gate.seed)
    rules = session.config.gate
    prior = screened_prior(screened_gains(session, [], ("", "")))
    for end in range(SCREEN_BATCH, len(order), SCREEN_BATCH):
        read = order[:end]
        session.evaluate(commit, "selection", read)
        paired = pair_scores(base, session.book.scored(session.context(commit).key, read))
        if paired is None:
            continue
        difference = compare(paired).difference
        # A few 0/1 instances that all tie have se 0: floor it at one instance's flip.
        se = max(difference.se, 1 / len(paired.instances))
        chance = chance_above(posterior(prior, difference.mean, se), rules.min_effect)
        if chance < SCREEN_STOP:
            session.looks.every.append(Look(difference.mean, se))
            return (
                f"selection screening: after {end} of {len(order)} instances, gain {points(difference.mean)} "
                f"points over {session.config.harness.base}, chance of gaining more than min_effect "
                f"{chance:.0%} (under {SCREEN_STOP:.0%}): stopped, {len(order) - end} rollouts saved"
            )
    session.evaluate(commit, "selection", selection)
    return ""


def screened_gains(
    session: Session, gates: list[GateRecord], pair: tuple[str, str]
) -> list[tuple[float, float]]:
    """The (gain, standard error) pairs a policy's prior is learned from: the gate
    records' from before this run, then every look of this run so far."""
    earlier = gains_before(gates, pair, session.started_at)
    return earlier + [(look.gain, look.se) for look in session.looks.every]


def carry(session: Session, candidate: Proposal) -> Proposal:
    """``candidate``, or when it does not descend from the base's tip (the base may have
    moved since the iteration began, by this run or by someone else) its edit carried
    onto it: the gate merges only what descends from the base."""
    with session.store.refs.direct():  # the gate runs git on the candidate it reads
        if session.store.history.is_ancestor(session.base_commit(), candidate.commit):
            return candidate
        carried = rebase(session.store, session.config, candidate.candidate, session.config.harness.base)
        session.remember(carried)
        return carried


def judge_carried(session: Session, carried: Proposal) -> None:
    """Score a carried candidate on the selection split, like its original."""
    with session.store.refs.direct():
        session.evaluate(carried.commit, "selection", session.selection)
    session.view = None


def gate(session: Session, candidate: Proposal, gated: Proposal, *, note: str = "") -> tuple[str, str]:
    """The gate against the base branch, or with ``auto_merge`` a merge through it, of
    ``gated`` (``candidate`` itself, or its edit carried onto the base's tip): the
    iteration's outcome and the reason."""
    base = session.config.harness.base
    with session.store.refs.direct():  # the gate runs git on the candidate and may move the base
        try:
            outcome, reason = _gate_or_merge(session, gated, note)
        except GateRefused as refusal:  # a precondition failed: nothing was evaluated or recorded
            outcome, reason = "gate-refused", str(refusal)
        finally:
            session.moved(gated.candidate, None, gated.commit)  # a merge moves branches
    if gated is not candidate:
        reason = f"carried onto {base} as {gated.candidate}" + (f"; {reason}" if reason else "")
    return outcome, reason


def _gate_or_merge(session: Session, gated: Proposal, note: str) -> tuple[str, str]:
    if session.options.auto_merge:
        landed, checked = _merge(session, gated, note)
        outcome = "merged" if landed else _OUTCOMES[checked.verdict]
    else:
        request = GateRequest(gated.candidate, prior_gains=session.prior_gains, policy=session.override)
        checked = run_gate(
            session.store,
            session.config,
            request,
            execution=session.options.execution,
            check=check_change,
            book=session.book,
        )
        outcome = _OUTCOMES[checked.verdict]
    return outcome, "; ".join(checked.record.reasons)


_OUTCOMES = {"pass": "gate-passed", "fail": "gate-failed", "inconclusive": "gate-inconclusive"}


def _merge(session: Session, gated: Proposal, note: str) -> tuple[bool, GateOutcome]:
    """Whether the merge landed, and the gate's outcome on the way; ``note`` (the
    gain corrected for selection) goes into the merge message."""
    merged = merge(
        session.store,
        session.config,
        GateRequest(gated.candidate, prior_gains=session.prior_gains, policy=session.override),
        execution=session.options.execution,
        check=check_change,
        note=f"Evolve: {note}" if note else "",
    )
    assert merged.outcome is not None  # only an override (revert --no-gate) has none
    return bool(merged.merge), merged.outcome
