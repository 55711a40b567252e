"""Many transactions written as one: an evolve iteration's writes, staged and committed
together with its record (issue 13).

While `Refs.staging` is open, `Refs.commit` adds each transaction to one staged
transaction instead of applying it, and the store answers reads of what it staged:
a ref's value and the refs listed (`Refs.value`, `Refs.listing`), a notes ref's records
(`Notes.records`, `Notes.records_on`, through `Refs.staged_lines`). `Refs` is the one
interface to this overlay: nothing else holds a `Staged`. The staged writes land in one ``update-ref --stdin``
transaction when the staging ends, however it ends (an exception lands what was
staged, as separate commits would have), or earlier once the oldest staged write is
``max_age`` seconds old, so that a kill loses at most that much of a slow
evaluator's work. `Refs.direct` commits what is staged and writes straight through
for its body: for steps that run git on what they read (the gate's checkouts and
merges).

Moves of one ref coalesce (git refuses two updates of a ref in one transaction): the
first expected value and the last new one; a ref created and deleted while staged is
not moved at all (a candidate proposed and archived in one iteration only ever has its
archive ref).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from harnessgit.objects import ZERO
from harnessgit.store.transaction import RefMove, Transaction


@dataclass
class Staged:
    """The staged writes, and when the oldest of them was staged."""

    reason: str
    max_age: float
    txn: Transaction = field(init=False)
    since: float | None = None  # monotonic time of the oldest staged write
    reasons: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.txn = Transaction(self.reason)

    def add(self, txn: Transaction) -> None:
        if txn.empty and not txn.expected:
            return
        if self.since is None:
            self.since = time.monotonic()
        if txn.reason not in self.reasons:
            self.reasons.append(txn.reason)
        moves = {move.ref: move for move in self.txn.moves}
        for move in txn.moves:
            earlier = moves.get(move.ref)
            moves[move.ref] = move if earlier is None else RefMove(move.ref, move.new, earlier.old)
        self.txn.moves = [m for m in moves.values() if not (m.old == ZERO and m.new is None)]
        for ref, appends in txn.notes.items():
            for target, lines in appends.items():
                self.txn.notes.setdefault(ref, {}).setdefault(target, []).extend(lines)
        self.txn.blobs |= txn.blobs
        self.txn.expected.update(txn.expected)

    @property
    def due(self) -> bool:
        return self.since is not None and time.monotonic() - self.since >= self.max_age

    def take(self) -> Transaction | None:
        """The staged transaction, its reason naming what it holds; staging starts afresh."""
        txn, self.txn, self.since = self.txn, Transaction(self.reason), None
        reasons, self.reasons = self.reasons, []
        if txn.empty and not txn.expected:
            return None
        txn.reason = f"{self.reason}: {'; '.join(reasons)}" if reasons else self.reason
        return txn

    def ref(self, ref: str) -> tuple[bool, str | None]:
        """(staged, value): whether a staged move sets ``ref``, and to what (None: deleted)."""
        for move in reversed(self.txn.moves):
            if move.ref == ref:
                return True, move.new
        return False, None

    def listed(self, refs: dict[str, str], prefixes: tuple[str, ...]) -> dict[str, str]:
        """``refs`` (as `list_refs` found them under ``prefixes``) with the staged moves."""
        out = dict(refs)
        under = tuple(prefix.rstrip("/") + "/" for prefix in prefixes)
        for move in self.txn.moves:
            if prefixes and not (move.ref in prefixes or move.ref.startswith(under)):
                continue
            if move.new is None:
                out.pop(move.ref, None)
            else:
                out[move.ref] = move.new
        return dict(sorted(out.items()))

    def lines(self, notes_ref: str) -> dict[str, list[bytes]]:
        """The staged note lines on ``notes_ref``, by annotated object."""
        return self.txn.notes.get(notes_ref, {})
