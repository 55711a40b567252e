"""`harnessgit merge`: the base branch moves through the gate (`revert` is the other way).

A merge is a ``--no-ff`` merge commit on the base branch holding the candidate's
tree, written in one ref transaction with its gate record (as a note on the merge
commit), the move of the base branch (compare-and-swap: a concurrent move makes
this merge fail, never half-land) and the candidate's retirement to the archive.
The base branch's first-parent chain is thus the log of accepted edits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import ClassVar

from harnessgit import layout
from harnessgit.candidates.chain import Measure, own_effects
from harnessgit.candidates.checked import Checker
from harnessgit.candidates.render import effect_text
from harnessgit.config import Config, require_evaluator
from harnessgit.errors import ConcurrentUpdate
from harnessgit.evaluation.execution import Execution
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.gate.checkout import (
    UnfinishedCheckout,
    checkout_ready,
    deferred_signals,
    finish_checkout,
    unfinished_checkout,
    update_worktree,
)
from harnessgit.gate.gate import SELECTION, GateRequest, run_gate
from harnessgit.gate.outcome import GateOutcome
from harnessgit.records import EvidenceRecord, GateRecord, OverrideRecord
from harnessgit.render import chance_text, points
from harnessgit.store import Notes, Store, Transaction
from harnessgit.targets import (
    Provenance,
    Target,
    base_tip,
    proposal_chain,
    resolve,
    retire,
    without_trailer,
)


@dataclass(frozen=True)
class MergeResult:
    """A merge (or an override). Its ``--json`` form: the branch, the merge commit (None
    when the gate rejected), whether the working tree followed, the landing whose working
    tree this run only finished (a rerun after a kill: nothing gated or recorded), and the
    gate record."""

    JSON_EXTRA: ClassVar[tuple[str, ...]] = ("gate",)

    branch: str
    merge: str | None  # the merge commit, when it landed
    worktree_updated: bool
    outcome: GateOutcome | None = field(metadata={"json": False})  # None for an override (revert --no-gate)
    finished: UnfinishedCheckout | None = None

    @property
    def gate(self) -> GateRecord | None:
        return self.outcome.record if self.outcome is not None else None


def merge(
    store: Store,
    config: Config,
    request: GateRequest,
    *,
    execution: Execution,
    check: Checker,
    note: str = "",
) -> MergeResult:
    """Gate ``request.name`` against the base branch and, if it passes, merge it;
    ``note`` (a caller's line, e.g. evolve's gain corrected for selection) joins the
    message; ``execution`` and ``check`` are the gate's (`run_gate`)."""
    config = require_evaluator(config, "`harnessgit merge` (it gates first; `override` moves without it)")
    branch = request.base or config.harness.base
    with store.refs.landing(branch):  # before the gate spends an attempt (issue 28, defect 5)
        return _merge(store, config, request, branch, execution, check, note)


def _merge(
    store: Store,
    config: Config,
    request: GateRequest,
    branch: str,
    execution: Execution,
    check: Checker,
    note: str,
) -> MergeResult:
    target = resolve(store.refs, request.name).sha
    # Merged already, by a run killed before the working tree followed: finish that.
    pending = unfinished_checkout(store)
    if pending is not None and pending.branch == branch and pending.target == target:
        finish_checkout(store, pending)
        return MergeResult(branch, pending.merge, True, None, pending)
    # A checkout the merge cannot move is refused before the gate spends anything.
    checkout_ready(store, branch, base_tip(store.refs, branch), target)
    book = ScoreBook.load(store)  # the gate's scores, which the merge message reads too
    outcome = run_gate(
        store, config, replace(request, base=branch), execution=execution, check=check, book=book
    )
    if not outcome.passed:
        return MergeResult(branch, None, False, outcome)
    record = outcome.record
    message = _merge_message(store, outcome, book, note)
    landed, moved = land(
        store,
        branch,
        outcome.base.commit,
        outcome.target,
        message,
        lambda commit: [record.model_copy(update={"merge": commit})],
        reason="merged",
    )
    return MergeResult(branch, landed, moved, outcome)


def land(
    store: Store,
    branch: str,
    base_sha: str,
    target: Target,
    message: str,
    records_for: Callable[[str], list[GateRecord] | list[OverrideRecord]],
    *,
    reason: str,
) -> tuple[str, bool]:
    """Write the merge commit and move the branch, with its records, in one transaction,
    then bring a checked-out branch's index and files along: the merge commit, and
    whether the working tree followed. No catchable signal comes between the two steps
    (see harnessgit/gate/checkout.py); a kill that does is finished by rerunning."""
    settled = checkout_ready(store, branch, base_sha, target.sha)
    tree = store.objects.commit_info(target.sha).tree
    merge_commit = store.objects.write_commit(tree, [base_sha, target.sha], message)
    txn = Transaction(f"merge {target.candidate or target.sha[:12]} into {branch}")
    txn.move(layout.branch_ref(branch), merge_commit, base_sha)
    records = records_for(merge_commit)
    txn.append(layout.NOTES_GATE, merge_commit, records)
    for record in records:
        if isinstance(record, GateRecord):
            for blob in (record.instances, record.evals):  # the listings verify reads
                if blob:
                    txn.keep(blob)
    if target.candidate and target.state == "live":
        retire(store, txn, target.candidate, target.sha, reason, f"into {branch} as {merge_commit[:12]}")
    with deferred_signals():
        try:
            store.refs.commit(txn)
        except ConcurrentUpdate:
            raise ConcurrentUpdate(
                f"{branch} moved while the gate ran (another merge landed first): nothing was written; "
                f"propose the edit again on the new tip and gate it"
            ) from None
        moved = update_worktree(store, branch, base_sha, merge_commit, settled)
    return merge_commit, moved


def _merge_message(store: Store, outcome: GateOutcome, book: ScoreBook, note: str = "") -> str:
    """The merge commit's message: what it lands and the gate's verdict on it. A
    candidate proposed on other candidates lands all of them: the message lists each
    one, oldest first, with its own effect, and its title credits none with the total."""
    target, record = outcome.target, outcome.record
    info = store.objects.commit_info(target.sha)
    label = target.candidate or target.sha[:12]
    chain = proposal_chain(store, target.sha, outcome.base.commit)
    if len(chain) > 1:
        lines = [f"Merge candidate {label}: {len(chain)} edits (last: {info.subject})", ""]
        lines += _chain_lines(store, outcome, book, chain)
    else:
        lines = [f"Merge candidate {label}: {info.subject}"]
        body = without_trailer(info.body)
        if body:
            lines += ["", body]
    lines += [
        "",
        ("Gate (all edits together)" if len(chain) > 1 else "Gate")
        + f": passed on {record.n} selection instances, {record.model}: "
        f"{points(record.base_mean, False)} -> {points(record.candidate_mean, False)} "
        f"({points(record.difference)} points, 95% CI [{points(record.ci_low)}, {points(record.ci_high)}]), "
        f"attempt {record.attempt} at alpha {record.alpha_k:.3g}",
        f"Wins/losses/ties: {record.wins}/{record.losses}/{record.ties}",
    ]
    if record.corrected is not None and record.chance_better is not None and record.expected_loss is not None:
        lines.append(
            f"Gain corrected for selection: {points(record.corrected)} points; chance better "
            f"{chance_text(record.chance_better)}, expected loss {record.expected_loss * 100:.1f} points "
            f"(policy {record.policy})"
        )
    if note:
        lines.append(note)
    if len(chain) <= 1:
        lines += _evidence_line(store.notes, target.sha)
    if target.candidate:
        lines += ["", f"{layout.CANDIDATE_TRAILER}: {target.candidate}"]
    return "\n".join(lines)


def _chain_lines(store: Store, outcome: GateOutcome, book: ScoreBook, chain: list[Provenance]) -> list[str]:
    """One numbered item per edit of the chain, oldest first: its subject, its own
    effect on the selection split (under the gate's evaluator and model), its
    rationale and its evidence."""
    settings, record = outcome.inputs.sides.settings, outcome.record
    measure = Measure(
        store, settings.config, book, record.fingerprint, record.model, settings.manifest.ids(SELECTION)
    )
    lines = [
        f"It lands {len(chain)} proposals, oldest first, each with its own effect: its selection",
        f"scores against those of the commit it was proposed on ({record.model}).",
    ]
    for number, (origin, effect) in enumerate(zip(chain, own_effects(measure, chain), strict=True), 1):
        info = store.objects.commit_info(origin.commit)
        name = origin.candidate or origin.commit[:12]
        lines += ["", f"{number}. {name}: {info.subject}", f"   Effect: {effect_text(effect)}"]
        lines += [f"   {line}".rstrip() for line in without_trailer(info.body).splitlines()]
        lines += [f"   {line}" for line in _evidence_line(store.notes, origin.commit)]
    return lines


def _evidence_line(notes: Notes, commit: str) -> list[str]:
    evidence = [r for r in notes.records_on(layout.NOTES_EVIDENCE, commit) if isinstance(r, EvidenceRecord)]
    if not evidence:
        return []
    return ["Evidence: " + ", ".join(f"{e.items} {e.label} items (blob {e.blob[:12]})" for e in evidence)]
