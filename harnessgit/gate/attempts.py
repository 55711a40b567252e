"""Gate attempts: the number k of a comparison on one selection set, and taking it.

k is the rank of a (base harness, candidate harness) pair among the distinct pairs
gated on the selection set (its split hash), so the gate tests at alpha_k and the
false-accept rate over all attempts stays at most alpha (docs/gate.md). Two gates
racing on one selection set must not both take the same k: `record_gate` writes the
record only if the gate notes ref is still where it was when k was counted. Clones
that gate before syncing cannot see each other; `next_attempt` makes the next k,
allocated from the merged record, pay for any k they shared.
"""

from __future__ import annotations

import math

from harnessgit import layout
from harnessgit.errors import ConcurrentUpdate, GateRefused
from harnessgit.gate.outcome import GateOutcome
from harnessgit.records import GateRecord
from harnessgit.render import plural, short
from harnessgit.store import EVIDENCE_STORE, PINS_PREFIX, Store, Transaction
from harnessgit.store.remote import local_shared
from harnessgit.sync.sync import publish, sync

MAX_ATTEMPT = 1_000_000  # past this, alpha_k < 1e-13 alpha: no gate could pass anyway


def attempt_number(store: Store, split_hash: str, pair: tuple[str, str]) -> int:
    """k for a (base harness, candidate harness) comparison on one selection set.

    Re-gating the same comparison (``gate`` then ``merge``) is the same look at
    the same data and keeps its k; a new comparison is the next attempt. When the
    selection set's alpha is spent, a k so large that no gate could pass (evolve asks
    this to judge whether a gate is worth trying: it is not).
    """
    first, _tip = _comparisons(store, split_hash)
    if pair in first:
        return first[pair].attempt
    return next_attempt([record.attempt for record in first.values()]) or MAX_ATTEMPT


def attempt_on_record(store: Store, split_hash: str, pair: tuple[str, str]) -> tuple[int, str | None]:
    """`attempt_number`, and the tip of the gate notes it was counted at: the gate's
    record is written only if that tip is still current (`record_gate`), so two gates
    racing on one selection set never both take the same k."""
    first, tip = _comparisons(store, split_hash)
    if pair in first:
        return first[pair].attempt, tip
    k = next_attempt([record.attempt for record in first.values()])
    if k is None:
        shared = len(first) - len({record.attempt for record in first.values()})
        raise GateRefused(
            f"selection set {short(split_hash)} has spent its alpha: {plural(shared, 'attempt number')} "
            "taken by two comparisons gated on clones that had not synced (harnessgit verify names "
            "them) left no level to test at. Use a new selection set; to gate on several machines, "
            "sync before gating (docs/ci.md)"
        )
    return k, tip


def _comparisons(store: Store, split_hash: str) -> tuple[dict[tuple[str, str], GateRecord], str | None]:
    """The first gate record of each comparison on the selection set, and the gate
    notes tip they were read at."""
    while True:
        tip = store.refs.value(layout.NOTES_GATE)
        notes = store.notes.records(layout.NOTES_GATE)
        if store.refs.value(layout.NOTES_GATE) == tip:  # else a gate wrote meanwhile: count again
            break
    records = [
        r for rs in notes.values() for r in rs if isinstance(r, GateRecord) and r.split_hash == split_hash
    ]
    first: dict[tuple[str, str], GateRecord] = {}
    for record in sorted(records, key=lambda r: (r.ts, r.id)):
        first.setdefault((record.base_harness, record.harness), record)
    return first, tip


def next_attempt(taken: list[int]) -> int | None:
    """The k of a new comparison, given the k each earlier comparison took; None when
    the selection set's alpha is spent.

    Within one clone the ks are 1..m and this is m + 1. Two clones that gated before
    syncing can both have taken a k (two comparisons tested at alpha_8): their levels
    then sum to more than alpha_1 + ... + alpha_m. The next k skips levels until what
    was spent plus every level from k on is at most alpha again (sum 1/j^2 = pi^2/6),
    so the family-wise bound holds over every attempt, the shared ones included (a
    shared 8 burns 9 and 10: 1/81 + 1/100 >= 1/64; the next is 11). A shared k = 1
    spends 2 alpha_1 > alpha: no later level can make up for it.
    """
    if not taken:
        return 1
    spent = math.fsum(1 / k**2 for k in taken)
    if spent >= math.pi**2 / 6 * (1 - 1e-9):
        return None
    k = max(taken) + 1
    below = math.fsum(1 / j**2 for j in range(1, k))  # levels 1..k-1, spent or burned
    while spent > below * (1 + 1e-12):
        if k >= MAX_ATTEMPT:
            return None
        below += 1 / k**2
        k += 1
    return k


def synced_before_counting(store: Store, remote: str) -> dict[str, str]:
    """With ``[gate] remote``: every record of the remote here before k is counted, and
    the shared refs as both sides then hold them (what the record's push is leased on)."""
    sync(store, remote)
    return local_shared(store)


def record_gate(
    store: Store, outcome: GateOutcome, *, remote: str | None = None, before: dict[str, str] | None = None
) -> None:
    """Write the gate record on the candidate commit, with the listing of the instances
    it compared kept reachable, in one transaction. With a ``remote``, the record then
    goes to the remote in a push leased on ``before``: if another clone recorded there
    since, the record is taken back here (it was never shared) and ConcurrentUpdate
    makes the gate sync, count and decide again, so no two clones share a k."""
    record = outcome.record
    txn = Transaction(f"gate {outcome.inputs.sides.label}")
    txn.expect(layout.NOTES_GATE, outcome.inputs.gate_notes)  # k is taken only if still free
    txn.append(layout.NOTES_GATE, record.commit, [record])
    if outcome.instances is not None:
        blob = store.objects.write_blob(outcome.instances)
        assert blob == record.instances, "the listing's blob id is computed as git computes it"
        txn.keep(blob)
    if outcome.evals is not None:  # the eval records it read, named for verify (`harnessgit.gate.used`)
        txn.keep(store.objects.write_blob(outcome.evals))
    store.refs.commit(txn)
    if remote is None or before is None:
        return
    shared = [layout.NOTES_GATE, EVIDENCE_STORE, PINS_PREFIX + record.commit]
    if publish(store, remote, before, shared):
        return
    written, previous = store.refs.value(layout.NOTES_GATE), outcome.inputs.gate_notes
    undo = Transaction(f"gate {outcome.inputs.sides.label}: attempt {record.attempt} taken on {remote}")
    if written is not None and previous is not None:
        undo.move(layout.NOTES_GATE, previous, written)
    elif written is not None:
        undo.delete(layout.NOTES_GATE, written)
    store.refs.commit(undo)
    raise ConcurrentUpdate(f"another clone recorded a gate on {remote} while this one decided")
