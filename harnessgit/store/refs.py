"""The refs part of the store (`Store.refs`): what refs point at, revisions resolved, and
every write, as transactions.

Writing: `commit` applies a `Transaction` in one ``git update-ref --stdin``, building
notes commits in the object database and re-basing note appends on a lost race
(compare-and-swap with retry), so concurrent writers never lose records. This part is
also the one interface to the staging overlay (`harnessgit.store.staging`): while
`staging` is open, `commit` stages instead of applying, and every read here (`value`,
`listing`) and of notes (`Store.notes`, through `staged_lines`) sees what is staged.
"""

from __future__ import annotations

import contextlib
import random
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from harnessgit import layout
from harnessgit.errors import ConcurrentUpdate, GitFailed
from harnessgit.objects import ZERO
from harnessgit.readstore.git import Git, Result, git_says
from harnessgit.readstore.refs import RefReader
from harnessgit.store import journal, landing_lock
from harnessgit.store.locks import locked_by, read_lock, stale_error
from harnessgit.store.notes_commits import NoteTexts, keep_commit, notes_commit
from harnessgit.store.objectdb import Objects
from harnessgit.store.recovery import InterruptedTransaction, roll_forward
from harnessgit.store.refsession import RefSession
from harnessgit.store.staging import Staged
from harnessgit.store.transaction import EVIDENCE_STORE, NOTES_PREFIX, PINS_PREFIX, RefMove, Transaction

MAX_ATTEMPTS = 200


class Refs(RefReader):
    def __init__(self, git: Git, root: Path, git_dir: Path, common_dir: Path, texts: NoteTexts) -> None:
        super().__init__(git, git_dir, common_dir, texts.objects.catfile)
        self.root = root
        self.journal_dir = common_dir / journal.JOURNAL_DIR
        self.session = RefSession(git)  # ref transactions of records
        self._objects: Objects = texts.objects
        self._texts = texts
        self._tips: dict[str, str | None] = {}  # notes tips this store wrote last
        self._staged: Staged | None = None  # `staging`: transactions not applied yet

    def close(self) -> None:
        self.session.close()

    # -- reading: `RefReader`, with what is staged -----------------------------

    def value(self, ref: str) -> str | None:
        """The object a full ref name points at now (what is staged, while staging), or
        None: from git's ref files (`RefFiles`), else through the persistent cat-file;
        never a new process."""
        if self._staged is not None:
            if not ref.startswith("refs/"):
                raise ValueError(f"not a full ref name: {ref}")
            staged, value = self._staged.ref(ref)
            if staged:
                return value
        return super().value(ref)

    def listing(self, *prefixes: str) -> dict[str, str]:
        """Every ref under ``prefixes`` (all refs without), by full name, as staged."""
        refs = super().listing(*prefixes)
        return self._staged.listed(refs, prefixes) if self._staged is not None else refs

    # -- the staging overlay ---------------------------------------------

    @contextlib.contextmanager
    def staging(self, reason: str, *, max_age: float) -> Iterator[None]:
        """Stage every transaction committed in the body and apply them as one when it
        ends, however it ends, or once the oldest is ``max_age`` seconds old
        (`harnessgit.store.staging`). Reads in the body see what is staged."""
        if self._staged is not None:  # nested: the outer staging lands it
            yield
            return
        self._staged = Staged(reason, max_age)
        try:
            yield
        finally:
            try:
                self.flush()
            finally:
                self._staged = None

    @contextlib.contextmanager
    def direct(self) -> Iterator[None]:
        """Apply what is staged, then write straight through for the body (a step that
        runs git on what it reads: the gate's checkouts and merges)."""
        staged, self._staged = self._staged, None
        if staged is not None and (txn := staged.take()) is not None:
            self.commit(txn)
        try:
            yield
        finally:
            self._staged = staged

    def flush(self) -> None:
        """Apply what is staged now, as one transaction."""
        staged, self._staged = self._staged, None
        try:
            if staged is not None and (txn := staged.take()) is not None:
                self.commit(txn)
        finally:
            self._staged = staged

    def staged_lines(self, notes_ref: str) -> dict[str, list[bytes]]:
        """The record lines staged on ``notes_ref`` and not applied yet, by annotated object."""
        return self._staged.lines(notes_ref) if self._staged is not None else {}

    @contextlib.contextmanager
    def landing(self, branch: str) -> Iterator[None]:
        """Hold ``branch`` for one landing (`merge`, `revert --no-gate`), from before the
        gate to its checkout; `LandingBusy` when another harnessgit holds it."""
        with landing_lock.landing(self.common_dir, branch, checked_out=self.head_branch() == branch):
            yield

    # -- writing ---------------------------------------------------------

    def commit(self, txn: Transaction) -> None:
        """Apply a transaction atomically, re-basing note appends on lost races; while
        `staging` is open, stage it instead (`harnessgit.store.staging`)."""
        if self._staged is not None:
            self._staged.add(txn)
            if self._staged.due:
                self.flush()
            return
        shared = [*txn.notes, EVIDENCE_STORE] if txn.blobs else list(txn.notes)
        txid = uuid.uuid4().hex
        refused = ""
        for attempt in range(MAX_ATTEMPTS):
            # Optimistic: guess the notes tips this store last wrote (one git call
            # fewer); a wrong guess fails the compare-and-swap and we read them fresh.
            guessed = attempt == 0 and all(ref in self._tips for ref in shared)
            if guessed:
                tips = {ref: sha for ref in shared if (sha := self._tips[ref]) is not None}
            else:
                tips = self.values(shared)
            for ref, tip in txn.expected.items():  # appends that must land on a known tip
                tips.pop(ref, None)
                if tip is not None:
                    tips[ref] = tip
            moves, written = self._moves(txn, tips)
            result = self._update_refs(txid, txn.reason, moves)
            if result.returncode == 0:
                self._tips.update(written)
                return
            for ref in shared:
                self._tips.pop(ref, None)
            busy = "cannot lock ref" in result.stderr or "Unable to create" in result.stderr
            if not busy and not locked_by(result.stderr):
                raise GitFailed(["update-ref"], result.returncode, result.stderr)
            self._refuse_stale_locks(result.stderr)
            self._check_moves_still_apply(txn)
            refused = git_says(result.stderr)
            if not guessed:
                time.sleep(random.uniform(0.001, min(0.002 * 2 ** min(attempt, 6), 0.1)))
        raise ConcurrentUpdate(f"gave up after {MAX_ATTEMPTS} attempts, the refs are too busy: {refused}")

    def _moves(self, txn: Transaction, tips: dict[str, str]) -> tuple[list[RefMove], dict[str, str]]:
        """Every ref move of ``txn`` on these notes tips, and the notes tips it writes."""
        moves = list(txn.moves)
        written: dict[str, str] = {}
        for notes_ref, appends in txn.notes.items():
            old = tips.get(notes_ref)
            written[notes_ref] = notes_commit(self._texts, old, appends, txn.reason)
            moves.append(RefMove(notes_ref, written[notes_ref], old or ZERO))
        if txn.blobs:
            old = tips.get(EVIDENCE_STORE)
            written[EVIDENCE_STORE] = keep_commit(self._objects, old, txn.blobs)
            moves.append(RefMove(EVIDENCE_STORE, written[EVIDENCE_STORE], old or ZERO))
        moves += [RefMove(f"{PINS_PREFIX}{target}", target, None) for target in txn.pins()]
        return moves, written

    def _update_refs(self, txid: str, reason: str, moves: list[RefMove]) -> Result:
        """One ``git update-ref --stdin`` transaction, journaled first when it moves more
        than one ref (git applies those one by one: journal.py). Sent as start ... prepare,
        commit, so that input cut short by a kill aborts instead of committing a part."""
        entry = journal.write(self.journal_dir, txid, reason, moves) if len(moves) > 1 else None
        lines = ["start", *(move.command() for move in moves), "prepare", "commit"]
        if _records_only(moves):
            result = self.session.run(lines)  # one git process for the command's records
        else:
            result = self.git.run(
                ["update-ref", "-m", f"harnessgit: {reason}", "--stdin"],
                input=("\n".join(lines) + "\n").encode(),
                check=False,
            )
        # Interrupted before this line (an exception, a signal), the journal stays for the
        # next command. Landed, or refused before committing (input, locks, an old value
        # that no longer holds: no ref moved): done with it.
        if entry is None or result.returncode == 0 or "fatal: commit: " not in result.stderr:
            if entry is not None:
                entry.remove()
            return result
        # git failed while committing, after some refs may have moved: finish it now, as
        # the next command would.
        found = roll_forward(self, entry)
        if found is not None and found.finished and found.verdict == "finish":
            return Result(0, result.stdout, "")
        if found is not None and not found.finished:
            raise InterruptedTransaction(f"{found.summary()}; see `harnessgit doctor`")
        return result

    def _refuse_stale_locks(self, stderr: str) -> None:
        """A lock that made the update fail and is older than any live writer's: no
        retry can succeed, so say so now (instead of 200 attempts and ~40 s later)."""
        now = time.time()
        stale = [lock for path in locked_by(stderr) if (lock := read_lock(path, now)) and lock.stale]
        if stale:
            raise stale_error(stale, self.root)

    def _check_moves_still_apply(self, txn: Transaction) -> None:
        if txn.expected:
            current = self.values(txn.expected)
            for ref, tip in txn.expected.items():
                if current.get(ref) != tip:
                    raise ConcurrentUpdate(
                        f"{ref} was written by another process meanwhile; nothing was written"
                    )
        if not any(move.old is not None for move in txn.moves):
            return
        current = self.values(move.ref for move in txn.moves)
        for move in txn.moves:
            expected = None if move.old == ZERO else move.old
            if move.old is not None and current.get(move.ref) != expected:
                raise ConcurrentUpdate(
                    f"{move.ref} was changed by another process while harnessgit worked; nothing was written"
                )


def _record_ref(ref: str) -> bool:
    """A ref whose every commit says why it was written (`RefSession`)."""
    return ref.startswith((NOTES_PREFIX, PINS_PREFIX)) or ref == EVIDENCE_STORE


def _records_only(moves: list[RefMove]) -> bool:
    """Moves whose reasons are all on record: record refs, and candidate branches moved
    beside notes, whose records (a proposal, a retirement) say why. The generic reflog
    message of `RefSession` loses nothing there; an evolve iteration, which proposes and
    archives, then costs no git process of its own."""
    candidates = (layout.CANDIDATES, layout.ARCHIVE)
    if not any(move.ref.startswith(NOTES_PREFIX) for move in moves):
        return all(_record_ref(move.ref) for move in moves)
    return all(_record_ref(move.ref) or move.ref.startswith(candidates) for move in moves)
