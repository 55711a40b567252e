"""`harnessgit revert`: undo an accepted edit, through the gate or as a recorded override.

The inverse of the edit is proposed as a new candidate on the base tip, to be gated
and merged like any other. ``--no-gate`` lands it at once instead, as an explicit
override: an `override` record with the reason and the author on the merge commit,
which `verify` and `log` list.
"""

from __future__ import annotations

from harnessgit import layout
from harnessgit.candidates.edits import Edit
from harnessgit.candidates.propose import Proposal, propose
from harnessgit.config import Config, require
from harnessgit.errors import HarnessgitError
from harnessgit.gate.checkout import (
    UnfinishedCheckout,
    finish_checkout,
    refuse_locked_index,
    refuse_unfinished,
    unfinished_checkout,
)
from harnessgit.gate.merge import MergeResult, land
from harnessgit.records import OverrideRecord
from harnessgit.store import Blob, Objects, Store
from harnessgit.targets import base_tip, resolve


def revert(
    store: Store,
    config: Config,
    rev: str,
    *,
    base: str | None = None,
    reason: str = "",
    no_gate: bool = False,
) -> tuple[Proposal, MergeResult | None]:
    """Propose the inverse of an accepted edit; with ``no_gate`` land it at once as an override."""
    config = require(config)
    branch = base or config.harness.base
    if not no_gate:
        return _revert(store, config, rev, branch, reason, no_gate)
    with store.refs.landing(branch):  # before anything is proposed (issue 28, defect 5)
        return _revert(store, config, rev, branch, reason, no_gate)


def _revert(
    store: Store, config: Config, rev: str, branch: str, reason: str, no_gate: bool
) -> tuple[Proposal, MergeResult | None]:
    tip = base_tip(store.refs, branch)
    accepted = resolve(store.refs, rev).sha
    if accepted not in store.history.first_parent_chain(tip):
        raise HarnessgitError(f"{rev} is not an accepted edit on {branch}'s first-parent chain")
    info = store.objects.commit_info(accepted)
    if not info.parents:
        raise HarnessgitError(f"{rev} is the first commit: there is nothing to revert to")
    if no_gate and store.refs.head_branch() == branch:
        pending = unfinished_checkout(store)
        if pending is not None and _reverts(store.objects, pending, accepted):
            # This very revert landed, and a kill stopped its working tree: finish that.
            finish_checkout(store, pending)
            return _landed(pending), MergeResult(branch, pending.merge, True, None, pending)
        refuse_unfinished(store)
        refuse_locked_index(store, branch)
    before = info.parents[0]
    changes: dict[str, Blob | None] = {}
    tip_tree = store.objects.commit_info(tip).tree
    for path in store.history.changed_paths(before, accepted):
        now = store.objects.entry_at(tip_tree, path)
        then = store.objects.entry_at(store.objects.commit_info(accepted).tree, path)
        if (now.sha if now else None) != (then.sha if then else None):
            raise HarnessgitError(
                f"{path} changed again after {rev}: revert the later edit first, or edit it by hand"
            )
        old = store.objects.entry_at(store.objects.commit_info(before).tree, path)
        changes[path] = Blob(old.sha, old.mode) if old else None
    if no_gate and not reason.strip():
        raise HarnessgitError("--no-gate needs --reason: an override must say why")
    subject = f'Revert "{info.subject}"'
    rationale = (
        subject + (f"\n\n{reason.strip()}" if reason.strip() else "") + f"\n\nThis reverts {accepted}."
    )
    proposal = propose(store, config, Edit(changes, "revert"), parent=branch, rationale=rationale)
    if not no_gate:
        return proposal, None
    target = resolve(store.refs, proposal.candidate)
    override = OverrideRecord(
        ts=store.clock(),
        commit="",
        candidate=proposal.candidate,
        action="revert",
        reason=reason.strip(),
        author=store.identity(),
    )
    message = (
        f"Merge candidate {proposal.candidate}: {subject} (ungated override)\n\nReason: {reason.strip()}"
    )
    message += f"\n\n{layout.CANDIDATE_TRAILER}: {proposal.candidate}"
    landed, moved = land(
        store,
        branch,
        tip,
        target,
        message,
        lambda commit: [override.model_copy(update={"commit": commit})],
        reason="merged",
    )
    return proposal, MergeResult(branch, landed, moved, None)


def _reverts(objects: Objects, pending: UnfinishedCheckout, accepted: str) -> bool:
    """Whether an unfinished landing is the ungated revert of ``accepted``."""
    message = objects.commit_info(pending.target).message
    return pending.action == "revert" and f"\n\nThis reverts {accepted}." in message


def _landed(pending: UnfinishedCheckout) -> Proposal:
    """The revert candidate an unfinished landing landed, as `revert` reports it."""
    assert pending.candidate is not None  # an override on a landing names its candidate
    return Proposal(
        candidate=pending.candidate,
        commit=pending.target,
        parent=pending.previous,
        components=pending.changed,
        ref=layout.archive_ref(pending.candidate),
    )
