"""A set of ref moves and note appends that land together or not at all."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harnessgit.names import check_ref_name
from harnessgit.objects import ZERO

if TYPE_CHECKING:
    from harnessgit.records import Record

NOTES_PREFIX = "refs/notes/harnessgit/"
PINS_PREFIX = "refs/harnessgit/pins/"
EVIDENCE_STORE = "refs/harnessgit/evidence-store"


@dataclass(frozen=True)
class RefMove:
    ref: str
    new: str | None  # None deletes the ref
    old: str | None  # None: whatever it is now; ZERO: it must not exist yet

    def command(self) -> str:
        """The move as a line of ``git update-ref --stdin``."""
        if self.new is None:
            return f"delete {self.ref} {self.old or ''}".rstrip()
        return f"update {self.ref} {self.new} {self.old or ''}".rstrip()


@dataclass
class Transaction:
    """Collects changes; `Refs.commit` (``store.refs.commit``) applies them in one ``update-ref --stdin``.

    Ref moves carry the value they expect to replace: if another process moved
    such a ref first, the whole transaction fails cleanly. Note appends and kept
    blobs have no such expectation: on a lost race they are re-applied on top of
    the new notes tip, so concurrent writers never lose records.
    """

    reason: str
    moves: list[RefMove] = field(default_factory=list)
    notes: dict[str, dict[str, list[bytes]]] = field(default_factory=dict)
    blobs: set[str] = field(default_factory=set)
    # Notes refs whose appends must land on exactly this tip (None: the ref must not
    # exist yet): a decision made from what the ref held is written only if no one
    # wrote there since. A lost race is ConcurrentUpdate, not a retry.
    expected: dict[str, str | None] = field(default_factory=dict)

    def create(self, ref: str, new: str) -> None:
        self.moves.append(RefMove(check_ref_name(ref, "ref"), new, ZERO))

    def move(self, ref: str, new: str, old: str | None) -> None:
        self.moves.append(RefMove(check_ref_name(ref, "ref"), new, old if old else ZERO))

    def delete(self, ref: str, old: str) -> None:
        self.moves.append(RefMove(check_ref_name(ref, "ref"), None, old))

    def append(self, notes_ref: str, target: str, records: Iterable[Record]) -> None:
        if not notes_ref.startswith(NOTES_PREFIX):
            raise ValueError(f"not a harnessgit notes ref: {notes_ref}")
        from harnessgit.records.lines import dump_record  # not at import: reading needs no records

        lines = self.notes.setdefault(notes_ref, {}).setdefault(target, [])
        lines.extend(dump_record(record) for record in records)

    def expect(self, notes_ref: str, tip: str | None) -> None:
        """Append to ``notes_ref`` only if it is still at ``tip`` (compare-and-swap)."""
        self.expected[notes_ref] = tip

    def keep(self, blob: str) -> None:
        """Keep a blob (e.g. trajectories referenced from a record) reachable."""
        self.blobs.add(blob)

    def include(self, other: Transaction) -> None:
        """Add ``other``'s changes to this one: they land together."""
        self.moves += other.moves
        for ref, appends in other.notes.items():
            for target, lines in appends.items():
                self.notes.setdefault(ref, {}).setdefault(target, []).extend(lines)
        self.blobs |= other.blobs
        self.expected.update(other.expected)

    @property
    def empty(self) -> bool:
        return not (self.moves or self.notes or self.blobs)

    def pins(self) -> list[str]:
        """Every annotated commit gets a pin ref, so `git gc` never drops it."""
        return sorted({target for per_ref in self.notes.values() for target in per_ref})
