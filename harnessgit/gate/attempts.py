"""Gate attempts: the number k of a comparison on one selection set, and taking it.

k is the rank of a (base harness, candidate harness) pair among the distinct pairs
gated on the selection set (its split hash), so the gate tests at alpha_k and the
false-accept rate over all attempts stays at most alpha (docs/gate.md). Two gates
racing on one selection set must not both take the same k: `record_gate` writes the
record only if the gate notes ref is still where it was when k was counted.
"""

from __future__ import annotations

from harnessgit import layout
from harnessgit.gate.outcome import GateOutcome
from harnessgit.records import GateRecord
from harnessgit.store import Store, Transaction


def attempt_number(store: Store, split_hash: str, pair: tuple[str, str]) -> int:
    """k for a (base harness, candidate harness) comparison on one selection set.

    Re-gating the same comparison (``gate`` then ``merge``) is the same look at
    the same data and keeps its k; a new comparison is the next attempt.
    """
    return attempt_on_record(store, split_hash, pair)[0]


def attempt_on_record(store: Store, split_hash: str, pair: tuple[str, str]) -> tuple[int, str | None]:
    """`attempt_number`, and the tip of the gate notes it was counted at: the gate's
    record is written only if that tip is still current (`record_gate`), so two gates
    racing on one selection set never both take the same k."""
    while True:
        tip = store.ref_value(layout.NOTES_GATE)
        notes = store.notes(layout.NOTES_GATE)
        if store.ref_value(layout.NOTES_GATE) == tip:  # else a gate wrote meanwhile: count again
            break
    seen: dict[tuple[str, str], None] = {}
    records = [
        r for rs in notes.values() for r in rs if isinstance(r, GateRecord) and r.split_hash == split_hash
    ]
    for record in sorted(records, key=lambda r: r.ts):
        seen.setdefault((record.base_harness, record.harness), None)
    order = list(seen)
    return (order.index(pair) + 1 if pair in seen else len(order) + 1), tip


def record_gate(store: Store, outcome: GateOutcome) -> None:
    """Write the gate record on the candidate commit, with the listing of the instances
    it compared kept reachable, in one transaction."""
    record = outcome.record
    txn = Transaction(f"gate {outcome.comparison.sides.label}")
    txn.expect(layout.NOTES_GATE, outcome.comparison.gate_notes)  # k is taken only if still free
    txn.append(layout.NOTES_GATE, record.commit, [record])
    if outcome.instances is not None:
        blob = store.write_blob(outcome.instances)
        assert blob == record.instances, "the listing's blob id is computed as git computes it"
        txn.keep(blob)
    store.commit(txn)
