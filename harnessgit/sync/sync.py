"""`harnessgit sync [REMOTE]`: bring this clone and a remote to the same records.

One round: fetch every shared ref of the remote (`store.remote.fetch_shared`), union
the records of both sides (every notes ref, the evidence store), decide every other
ref by its kind's rule (`sync.rules`), move this clone's refs in one compare-and-swap
transaction, then push what the remote lacks in one atomic push leased on the values
just fetched. When the remote moved meanwhile (another clone pushed), nothing landed
there: the round starts again from a new fetch, with jitter, up to `MAX_ROUNDS`. A
local writer that moves a ref during the round fails the local transaction the same
way (ConcurrentUpdate) and is retried too, so no writer's record is ever overwritten.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from harnessgit import layout
from harnessgit.errors import ConcurrentUpdate
from harnessgit.records import LabelRecord
from harnessgit.records.lines import parse_note
from harnessgit.store import EVIDENCE_STORE, NOTES_PREFIX, Store, Transaction
from harnessgit.store.remote import (
    RemoteUpdate,
    checked_out,
    fetch_shared,
    local_shared,
    notes_at,
    push_leased,
    union_kept,
    union_notes,
)
from harnessgit.sync.rules import Reconciled, reconcile

MAX_ROUNDS = 20
LEGACY_STORES = "refs/harnessgit/evidence-stores/"  # templates/sync's per-machine copies


@dataclass(frozen=True)
class SyncResult:
    remote: str
    here: list[str]  # refs this sync moved in this clone
    pushed: list[str]  # refs it moved on the remote
    retired: list[str]  # candidates whose stale live branch it removed (archived elsewhere)
    conflicts: list[str] = field(default_factory=list)  # what it settled by a rule, or left
    rounds: int = 1  # 1 + the rounds started again because the remote or a ref here moved


def sync(store: Store, remote: str = "origin") -> SyncResult:
    lost = ""
    for rounds in range(1, MAX_ROUNDS + 1):
        try:
            done = _round(store, remote)
        except ConcurrentUpdate as exc:  # a writer here moved a ref during the round
            done, lost = None, str(exc)
        if done is not None:
            return SyncResult(remote, done[0], done[1], done[2].retired, done[2].conflicts, rounds)
        lost = lost or f"{remote} was pushed to during the sync"
        time.sleep(random.uniform(0.01, min(0.05 * 2**rounds, 1.0)))
    raise ConcurrentUpdate(f"gave up after {MAX_ROUNDS} rounds, the refs keep moving: {lost}")


def _round(store: Store, remote: str) -> tuple[list[str], list[str], Reconciled] | None:
    """One fetch, merge, local transaction and leased push; None when the push lost."""
    theirs = fetch_shared(store, remote)
    ours = local_shared(store)
    merged = _merged_records(store, ours, theirs)
    moves = _label_moves(store, merged.get(layout.NOTES_LABELS))
    plan = reconcile(ours, theirs, merged, moves, checked_out(store))
    here = {ref: new for ref, new in plan.here.items() if ours.get(ref) != new}
    if here:
        txn = Transaction(f"sync with {remote}")
        for ref, new in sorted(here.items()):
            if new is None:
                txn.delete(ref, ours[ref])
            else:
                txn.move(ref, new, ours.get(ref))
        store.refs.commit(txn)
    there = [
        RemoteUpdate(ref, new, theirs.get(ref))
        for ref, new in sorted(plan.there.items())
        if theirs.get(ref) != new
    ]
    if not push_leased(store, remote, there):
        return None
    return sorted(here), [update.ref for update in there], plan


def _merged_records(store: Store, ours: dict[str, str], theirs: dict[str, str]) -> dict[str, str]:
    """Every notes ref and the evidence store, as the union of both sides."""
    merged: dict[str, str] = {}
    for ref in sorted({*ours, *theirs}):
        if not ref.startswith(NOTES_PREFIX):
            continue
        mine, other = ours.get(ref), theirs.get(ref)
        if mine and other:
            merged[ref] = union_notes(store, mine, other, f"sync: union of {ref}")
        else:
            merged[ref] = mine or other or ""
    legacy = [sha for ref, sha in sorted(theirs.items()) if ref.startswith(LEGACY_STORES)]
    others = [sha for sha in (theirs.get(EVIDENCE_STORE), *legacy) if sha]
    kept = union_kept(store, ours.get(EVIDENCE_STORE), others)
    if kept is not None:
        merged[EVIDENCE_STORE] = kept
    return merged


def _label_moves(store: Store, labels_notes: str | None) -> list[LabelRecord]:
    if labels_notes is None:
        return []
    return [
        record
        for target, text in notes_at(store, labels_notes).items()
        for record in parse_note(text, target[:12])
        if isinstance(record, LabelRecord)
    ]


def publish(store: Store, remote: str, before: dict[str, str], refs: list[str]) -> bool:
    """Push this clone's value of each of ``refs`` to ``remote``, leased on its value in
    ``before`` (what both sides held after a sync): False, and nothing pushed, when the
    remote moved since. How a gate takes its attempt number on the remote."""
    now = store.refs.values(refs)
    updates = [
        RemoteUpdate(ref, now.get(ref), before.get(ref)) for ref in refs if now.get(ref) != before.get(ref)
    ]
    return push_leased(store, remote, updates)
