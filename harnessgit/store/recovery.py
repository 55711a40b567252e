"""Rolling an interrupted transaction forward from its journal (journal.py).

Each update of the journal is looked at as the ref stands now:

- **done**: the ref is at the new value, or at a commit that descends from it (the
  update landed and another writer built on it: a notes append, a merge), or, for the
  evidence store (a fresh root commit each time), at a tree that keeps every blob of it;
- **pending**: the ref is still at the old value (often locked by the killed git);
- **moved**: neither.

Then: nothing moved, so every pending update is applied as one compare-and-swap
transaction (a pin, which expects no old value, is simply set: pins are idempotent);
something moved but nothing landed, so the transaction never took effect and the
journal is dropped; something moved and something landed: the store cannot finish it
without guessing, so it stops and reports (`harnessgit doctor` shows the refs).
Either way the next command observes all of the transaction or none of it.

Lock files: a recovery removes the stale ones (`locks.STALE_AFTER`) on the refs its own
journal names, plus packed-refs.lock and .new when the journal deletes a ref and
HEAD.lock when it moves the branch HEAD points at: the locks a git killed inside that
very transaction leaves. It waits up to `STALE_AFTER` for younger ones to go or age (the
killed harnessgit's git may still be finishing). A transaction it cannot finish keeps
its locks, so that nothing writes to its refs before someone decides. Every other stale
lock is only reported; `harnessgit doctor --fix` removes it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, Protocol

from harnessgit.errors import HarnessgitError
from harnessgit.objects import ZERO
from harnessgit.readstore.git import Git, git_says
from harnessgit.render import short
from harnessgit.store import journal
from harnessgit.store.locks import PACKED_SCRATCH, STALE_AFTER, Lock, age_text, read_lock
from harnessgit.store.transaction import EVIDENCE_STORE, RefMove


class RefsForRecovery(Protocol):
    """What recovery needs of the store's `Refs` part: reading refs and running git."""

    git: Git
    git_dir: Path
    common_dir: Path
    journal_dir: Path

    def value(self, ref: str) -> str | None: ...


log = logging.getLogger("harnessgit")
StepState = Literal["done", "pending", "moved"]
Verdict = Literal["finish", "discard", "blocked"]
_POLL = 0.02  # seconds between looks at a young lock
_ATTEMPTS = 3  # a concurrent writer may take a lock between our look and our update


class InterruptedTransaction(HarnessgitError):
    """A killed transaction that cannot be finished without guessing."""


@dataclass(frozen=True)
class Step:
    """One update of an interrupted transaction, and where its ref stands now."""

    ref: str
    old: str | None  # None: any value (a pin); ZERO: the ref did not exist
    new: str | None  # None: the ref is deleted
    now: str | None  # None: the ref does not exist
    state: StepState

    @property
    def landed(self) -> bool:
        """Proof that the transaction took effect: a compare-and-swap update is done."""
        return self.state == "done" and self.old is not None

    def move(self) -> RefMove:
        return RefMove(self.ref, self.new, self.old)


@dataclass(frozen=True)
class Recovery:
    """An interrupted transaction: what its journal says and what rolling it forward does."""

    journal: Path
    reason: str
    age: float  # seconds since it was written
    steps: tuple[Step, ...]
    locks: tuple[Lock, ...]  # lock files on its refs now
    verdict: Verdict
    finished: bool = False  # rolled forward or dropped, its journal removed
    refused: str = ""  # why git would not apply the pending updates, when it would not

    @property
    def pending(self) -> tuple[Step, ...]:
        return tuple(step for step in self.steps if step.state == "pending")

    def summary(self) -> str:
        what = f"transaction {self.reason!r} ({age_text(self.age)} ago)"
        if self.verdict == "blocked":
            moved = [step for step in self.steps if step.state == "moved"]
            refs = ", ".join(f"{s.ref} is at {short(s.now) if s.now else 'nothing'}" for s in moved)
            return f"interrupted {what} cannot be finished: {refs}, neither its old nor its new value"
        if self.verdict == "discard":
            return f"interrupted {what} never took effect: a ref it would move has moved since"
        total = len(self.steps)
        return f"interrupted {what}: {total - len(self.pending)} of {total} ref updates had landed"


def classify(refs: RefsForRecovery, moves: tuple[RefMove, ...]) -> tuple[tuple[Step, ...], Verdict]:
    steps = tuple(_step(refs, move) for move in moves)
    moved = any(step.state == "moved" for step in steps)
    if moved:
        return steps, "blocked" if any(step.landed for step in steps) else "discard"
    return steps, "finish"


def _step(refs: RefsForRecovery, move: RefMove) -> Step:
    now = refs.value(move.ref)
    old = None if move.old == ZERO else move.old
    if now == move.new:
        state: StepState = "done"
    elif move.old is None or now == old:
        state = "pending"
    elif move.new is not None and now is not None and _keeps(refs, move.ref, move.new, now):
        state = "done"
    else:
        state = "moved"
    return Step(move.ref, move.old, move.new, now, state)


def _keeps(refs: RefsForRecovery, ref: str, new: str, now: str) -> bool:
    """Whether ``now`` holds what ``new`` wrote: it descends from it, or (the evidence
    store, whose every commit is a fresh root) its tree drops none of ``new``'s blobs."""
    if ref == EVIDENCE_STORE:
        dropped = refs.git.run(["diff-tree", "-r", "--diff-filter=D", "--name-only", new, now], check=False)
        return dropped.returncode == 0 and not dropped.stdout.strip()
    return refs.git.run(["merge-base", "--is-ancestor", new, now], check=False).returncode == 0


def inspect(refs: RefsForRecovery, entry: journal.Entry) -> Recovery:
    """What rolling ``entry`` forward would do, changing nothing."""
    intent = entry.read()
    steps, verdict = classify(refs, intent.moves)
    locks = tuple(lock for path in lock_paths(refs, intent.moves) if (lock := read_lock(path)))
    return Recovery(entry.path, intent.reason, max(0.0, time.time() - intent.created), steps, locks, verdict)


def lock_paths(refs: RefsForRecovery, moves: tuple[RefMove, ...]) -> list[Path]:
    """The lock files git takes for these updates (files backend)."""
    paths = [refs.common_dir / f"{move.ref}.lock" for move in moves]
    if any(move.new is None for move in moves):
        paths += [refs.common_dir / "packed-refs.lock", refs.common_dir / PACKED_SCRATCH]
    if _head_branch(refs.git_dir) in {move.ref for move in moves}:  # HEAD's reflog follows it
        paths.append(refs.git_dir / "HEAD.lock")
    return paths


def _head_branch(git_dir: Path) -> str | None:
    """The branch HEAD points at, read from the file (no git process)."""
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return head.removeprefix("ref: ") if head.startswith("ref: ") else None


def roll_forward(refs: RefsForRecovery, entry: journal.Entry) -> Recovery | None:
    """Finish or drop an interrupted transaction; None when another process took it over.
    Unfinished, the journal goes back to its writer's name, for the next command (or
    `harnessgit doctor`) to find again."""
    mine = entry.claim(journal.this_process())
    if mine is None:
        return None
    try:
        found = _finish(refs, mine)
    finally:
        if mine.path.exists() and mine.path != entry.path:
            mine.path.rename(entry.path)
    return found


def _finish(refs: RefsForRecovery, mine: journal.Entry) -> Recovery:
    paths = lock_paths(refs, mine.read().moves)
    refused = ""
    for _ in range(_ATTEMPTS):
        settled = _settled(paths)
        found = inspect(refs, mine)
        if found.verdict == "blocked":
            return found  # its locks stay too: writes to its refs wait for a decision
        for lock in settled:
            if lock.stale:
                lock.path.unlink(missing_ok=True)
        if found.verdict == "finish" and found.pending:
            lines = ["start", *(step.move().command() for step in found.pending), "prepare", "commit"]
            result = refs.git.run(
                ["update-ref", "-m", f"harnessgit: finish {found.reason}", "--stdin"],
                input=("\n".join(lines) + "\n").encode(),
                check=False,
            )
            if result.returncode != 0:
                refused = result.stderr  # a writer took a lock meanwhile? look again
                continue
        mine.remove()
        return replace(found, finished=True)
    return replace(inspect(refs, mine), refused=git_says(refused))


def _settled(paths: list[Path]) -> list[Lock]:
    """The lock files once each is gone or stale, waiting at most STALE_AFTER."""
    deadline = time.monotonic() + STALE_AFTER
    while True:
        locks = [lock for path in paths if (lock := read_lock(path))]
        if all(lock.stale for lock in locks) or time.monotonic() >= deadline:
            return locks
        time.sleep(_POLL)


def recover(refs: RefsForRecovery) -> list[Recovery]:
    """Roll forward every interrupted transaction (one directory listing when there is
    none); raise when one cannot be finished."""
    done = []
    for entry in journal.entries(refs.journal_dir):
        if not entry.interrupted():
            continue  # in flight in a live process
        try:
            found = roll_forward(refs, entry)
        except journal.JournalError as exc:
            raise journal.JournalError(f"{exc}; see `harnessgit doctor`") from None
        if found is None:
            continue
        if found.verdict == "blocked":
            raise InterruptedTransaction(f"{found.summary()}; see `harnessgit doctor`")
        if not found.finished:
            raise InterruptedTransaction(f"{found.summary()}; git would not apply the rest: {found.refused}")
        log.warning("%s: %s", found.summary(), _outcome(refs, found))
        done.append(found)
    return done


def _outcome(refs: RefsForRecovery, found: Recovery) -> str:
    """What the warning says was done, and what is left: a transaction that moved the
    checked-out branch (a merge) was killed before the working tree could follow it."""
    if found.verdict == "discard":
        return "dropped"
    head = _head_branch(refs.git_dir)
    moved = [step for step in found.steps if step.ref == head and step.new is not None]
    if head is None or not moved or refs.value(head) != moved[0].new:
        return "finished it"  # (a branch built on since was followed by whatever built on it)
    branch = head.removeprefix("refs/heads/")
    return (
        f"finished it; {branch} is checked out and its working tree has not followed: "
        "`harnessgit doctor --fix` brings it along (do not commit what `git status` shows staged)"
    )
