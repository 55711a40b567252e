"""What each kind of ref becomes when two clones meet: pure, from their ref values.

Given this clone's refs, the remote's (as fetched), the merged records (notes refs and
the evidence store, already unioned) and the label moves on record, `reconcile` says
what every shared ref should be on both sides, and so what moves here and what is
pushed there. The rules (docs/design.md, "Sharing between clones"):

- notes refs and the evidence store: the union of both sides (merged by the store);
- pins: the union (a pin's name is the commit it pins);
- archive: once retired, a candidate never comes back. An archive ref wins over a
  live ref of the same candidate on either side, and the live ref is deleted there
  (kept, and reported, only where it is checked out). Two archive values: the
  remote's (pushed first) stays, ours is pinned and reported;
- live candidates: the union; two clones with different commits under one id (48
  random bits: not expected) are reported and left as they are;
- labels: a move is a record. A label points where its last move on record (by time,
  then record id) says, on both sides; two moves from the same previous commit to
  different ones are concurrent, reported when this sync settles them. A label with no
  record (made with plain git) is carried as it is, and left alone when the sides differ.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from harnessgit import layout
from harnessgit.records import LabelRecord
from harnessgit.render import short

PINS = "refs/harnessgit/pins/"


@dataclass
class Reconciled:
    """The value every decided ref should have (None: absent) here and on the remote."""

    here: dict[str, str | None] = field(default_factory=dict)
    there: dict[str, str | None] = field(default_factory=dict)
    retired: list[str] = field(default_factory=list)  # candidates whose stale live ref goes
    conflicts: list[str] = field(default_factory=list)

    def both(self, ref: str, value: str | None) -> None:
        self.here[ref] = value
        self.there[ref] = value

    def pin(self, commit: str) -> None:
        self.both(PINS + commit, commit)


def reconcile(
    local: dict[str, str],
    remote: dict[str, str],
    merged: dict[str, str],
    moves: Iterable[LabelRecord],
    checked_out: set[str],
) -> Reconciled:
    out = Reconciled()
    for ref, value in merged.items():  # notes refs and the evidence store, unioned
        out.both(ref, value)
    for ref in sorted({*local, *remote}):
        if ref.startswith(PINS):
            out.both(ref, local.get(ref) or remote[ref])
    for candidate in sorted(_candidates(local) | _candidates(remote)):
        _candidate(out, candidate, local, remote, checked_out)
    _labels(out, local, remote, list(moves))
    return out


def _candidates(refs: dict[str, str]) -> set[str]:
    found = set()
    for ref in refs:
        for prefix in (layout.CANDIDATES, layout.ARCHIVE):
            if ref.startswith(prefix):
                found.add(ref.removeprefix(prefix))
    return found


def _candidate(
    out: Reconciled, candidate: str, local: dict[str, str], remote: dict[str, str], checked_out: set[str]
) -> None:
    live, archive = layout.candidate_ref(candidate), layout.archive_ref(candidate)
    retired_here, retired_there = local.get(archive), remote.get(archive)
    retired = retired_there or retired_here
    if retired is None:
        here, there = local.get(live), remote.get(live)
        if here and there and here != there:
            out.conflicts.append(
                f"candidate {candidate} is live at {short(here)} here and at {short(there)} on the "
                "remote: left as it is on both sides"
            )
            return
        out.both(live, here or there)
        return
    out.both(archive, retired)
    if retired_here and retired_here != retired:
        out.pin(retired_here)
        out.conflicts.append(
            f"candidate {candidate} was archived at {short(retired_here)} here and at {short(retired)} "
            "on the remote: the remote's archive stays, ours is pinned"
        )
    stale = [
        (side, sha) for side, sha in (("here", local.get(live)), ("on the remote", remote.get(live))) if sha
    ]
    for side, sha in stale:
        if sha != retired:
            out.pin(sha)  # the live commit stays reachable, and the report says where it was
            out.conflicts.append(
                f"candidate {candidate} was live {side} at {short(sha)} but archived at {short(retired)}: "
                "the archive wins, the live commit is pinned"
            )
    out.there[live] = None
    if live in checked_out and local.get(live):
        out.here[live] = local[live]
        out.conflicts.append(
            f"candidate {candidate} is archived but checked out here: its branch is kept here"
        )
    else:
        out.here[live] = None
    if stale:
        out.retired.append(candidate)


def _labels(out: Reconciled, local: dict[str, str], remote: dict[str, str], moves: list[LabelRecord]) -> None:
    by_name: dict[str, list[LabelRecord]] = {}
    for move in sorted(moves, key=lambda r: (r.ts, r.id)):  # record order: time, then id
        by_name.setdefault(move.name, []).append(move)
    names = {ref.removeprefix(layout.LABELS) for ref in {*local, *remote} if ref.startswith(layout.LABELS)}
    for name in sorted(names | set(by_name)):
        ref = layout.LABELS + name
        here, there = local.get(ref), remote.get(ref)
        recorded = by_name.get(name)
        if not recorded:
            if here and there and here != there:
                out.conflicts.append(
                    f"label {name} points at {short(here)} here and at {short(there)} on the remote, "
                    "with no move on record: left as it is on both sides"
                )
            else:
                out.both(ref, here or there)
            continue
        last = recorded[-1]
        out.both(ref, last.commit)
        if here != last.commit or there != last.commit:
            out.conflicts += _concurrent_moves(name, recorded, last)


def _concurrent_moves(name: str, recorded: list[LabelRecord], last: LabelRecord) -> list[str]:
    """Moves of one label made from the same commit to different ones: two clones moved
    it without seeing each other's move. The later record decides; say so."""
    found = []
    by_previous: dict[str | None, list[LabelRecord]] = {}
    for move in recorded:
        by_previous.setdefault(move.previous, []).append(move)
    for previous, forks in by_previous.items():
        targets = {move.commit for move in forks}
        if len(targets) > 1:
            named = ", ".join(
                f"{short(m.commit)} ({m.author or 'unknown'}, {m.ts:%Y-%m-%d %H:%M:%S})" for m in forks
            )
            found.append(
                f"label {name} was moved from {short(previous) if previous else 'nowhere'} to {named} "
                f"by clones that had not synced: it points at {short(last.commit)}, the last move on record"
            )
    return found
