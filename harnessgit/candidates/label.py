"""Labels: movable, audited pointers such as ``production`` or ``staging``.

A label is a ref, ``refs/harnessgit/labels/<name>``, moved with compare-and-swap;
every move writes a `label` record (when, who, from where, why) on the labelled
commit in the same transaction, so the audit trail cannot miss a move made
through harnessgit. Moving a label also starts a new test-split peek period.
"""

from __future__ import annotations

from dataclasses import dataclass

from harnessgit import layout
from harnessgit.errors import HarnessgitError
from harnessgit.names import check_ref_name
from harnessgit.records import GateRecord, LabelRecord
from harnessgit.store import Notes, Store, Transaction
from harnessgit.targets import label_moves, resolve


@dataclass(frozen=True)
class Label:
    name: str
    commit: str
    last_move: LabelRecord | None  # None when the ref was made without harnessgit


def label_ref(name: str) -> str:
    return layout.LABELS + check_ref_name(name, "label name")


class LabelUnchanged(HarnessgitError):
    """The label points at that commit already: nothing is recorded (a move would start
    a new test-split peek period). The command says so and exits 0, so that a deploy
    script, or a rerun after a kill that had landed the move, can run it twice."""


def move_label(store: Store, name: str, rev: str, *, reason: str = "") -> LabelRecord:
    ref = label_ref(name)
    target = resolve(store.refs, rev).sha
    previous = store.refs.value(ref)
    if previous == target:
        raise LabelUnchanged(f"label {name!r} already points at {target[:12]}: nothing recorded")
    record = LabelRecord(
        ts=store.clock(),
        name=name,
        commit=target,
        previous=previous,
        author=store.identity(),
        reason=reason,
        gate=_gate_of(store.notes, target),
    )
    txn = Transaction(f"label {name} -> {target[:12]}")
    txn.move(ref, target, previous)
    txn.append(layout.NOTES_LABELS, target, [record])
    store.refs.commit(txn)
    return record


def _gate_of(notes: Notes, commit: str) -> str | None:
    gates = [r for r in notes.records_on(layout.NOTES_GATE, commit) if isinstance(r, GateRecord) and r.passed]
    return gates[-1].id if gates else None


@dataclass(frozen=True)
class Labels:
    labels: list[Label]  # by name


def list_labels(store: Store) -> Labels:
    moves = label_moves(store.notes)
    latest: dict[str, LabelRecord] = {}
    for record in moves:
        latest[record.name] = record
    labels = []
    for ref, sha in sorted(store.refs.listing(layout.LABELS.rstrip("/")).items()):
        name = ref.removeprefix(layout.LABELS)
        move = latest.get(name)
        labels.append(Label(name, sha, move if move is not None and move.commit == sha else None))
    return Labels(labels)
