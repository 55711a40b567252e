"""Notes: reading every record on a ref fast, and the ref transactions that write them.

Reading: one `git notes list` and one pipelined read through the store's
persistent cat-file. Writing: `commit` applies a `Transaction` in one
``git update-ref --stdin``, building notes commits in the object database and
re-basing note appends on a lost race (compare-and-swap with retry), so
concurrent writers never lose records.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from harnessgit import layout
from harnessgit.errors import ConcurrentUpdate, GitFailed
from harnessgit.objects import ZERO
from harnessgit.render import listing
from harnessgit.store import journal
from harnessgit.store.git import Result, git_says
from harnessgit.store.locks import locked_by, read_lock, stale_error
from harnessgit.store.recovery import InterruptedTransaction, roll_forward
from harnessgit.store.refsession import RefSession
from harnessgit.store.transaction import EVIDENCE_STORE, NOTES_PREFIX, PINS_PREFIX, RefMove, Transaction
from harnessgit.store.trees import Blob, find_note, note_path

if TYPE_CHECKING:
    from pathlib import Path

    from harnessgit.objects import CommitInfo, TreeEntry
    from harnessgit.records import Record
    from harnessgit.records.lines import Skipped
    from harnessgit.store.git import Git
    from harnessgit.store.objects import CatFile
    from harnessgit.store.staging import Staged

MAX_ATTEMPTS = 200
# Note texts kept (`_note_text`): at most this many, and about this many bytes.
_NOTE_TEXTS = 256
_NOTE_TEXT_BYTES = 16 * 1024 * 1024
log = logging.getLogger("harnessgit")


class NotesMixin:
    git: Git
    catfile: CatFile
    refs: RefSession
    _tips: dict[str, str | None]  # notes tips this store wrote last
    _staged: Staged | None  # `Store.staging`: transactions staged, not applied yet
    _notes_read: dict[str, tuple[str | None, dict[str, list[Record]]]]  # ref -> (tip, its records)
    _note_texts: dict[str, bytes]  # note blob -> text (blobs never change)
    root: Path
    git_dir: Path
    common_dir: Path
    journal_dir: Path

    if TYPE_CHECKING:

        def ref_values(self, refs: Iterable[str]) -> dict[str, str]: ...

        def ref_value(self, ref: str) -> str | None: ...

        def commit_info(self, sha: str) -> CommitInfo: ...

        def read_tree(self, sha: str) -> list[TreeEntry]: ...

        def read_blob(self, sha: str) -> bytes: ...

        def write_blob(self, data: bytes) -> str: ...

        def edit_tree(self, base: str | None, changes: dict[str, Blob | None]) -> str: ...

        def write_commit(self, tree: str, parents: Iterable[str], message: str) -> str: ...

        def flush(self) -> None: ...

    def commit(self, txn: Transaction) -> None:
        """Apply a transaction atomically, re-basing note appends on lost races; while
        `Store.staging` is open, stage it instead (`harnessgit.store.staging`)."""
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
                tips = self.ref_values(shared)
            for ref, tip in txn.expected.items():  # appends that must land on a known tip
                tips.pop(ref, None)
                if tip is not None:
                    tips[ref] = tip
            moves = list(txn.moves)
            written: dict[str, str] = {}
            for notes_ref, appends in txn.notes.items():
                old = tips.get(notes_ref)
                written[notes_ref] = self._notes_commit(old, appends, txn.reason)
                moves.append(RefMove(notes_ref, written[notes_ref], old or ZERO))
            if txn.blobs:
                old = tips.get(EVIDENCE_STORE)
                written[EVIDENCE_STORE] = self._keep_commit(old, txn.blobs)
                moves.append(RefMove(EVIDENCE_STORE, written[EVIDENCE_STORE], old or ZERO))
            moves += [RefMove(f"{PINS_PREFIX}{target}", target, None) for target in txn.pins()]
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

    def _update_refs(self, txid: str, reason: str, moves: list[RefMove]) -> Result:
        """One ``git update-ref --stdin`` transaction, journaled first when it moves more
        than one ref (git applies those one by one: journal.py). Sent as start ... prepare,
        commit, so that input cut short by a kill aborts instead of committing a part."""
        entry = journal.write(self.journal_dir, txid, reason, moves) if len(moves) > 1 else None
        lines = ["start", *(move.command() for move in moves), "prepare", "commit"]
        if _records_only(moves):
            result = self.refs.run(lines)  # one git process for the command's records
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
            current = self.ref_values(txn.expected)
            for ref, tip in txn.expected.items():
                if current.get(ref) != tip:
                    raise ConcurrentUpdate(
                        f"{ref} was written by another process meanwhile; nothing was written"
                    )
        if not any(move.old is not None for move in txn.moves):
            return
        current = self.ref_values(move.ref for move in txn.moves)
        for move in txn.moves:
            expected = None if move.old == ZERO else move.old
            if move.old is not None and current.get(move.ref) != expected:
                raise ConcurrentUpdate(
                    f"{move.ref} was changed by another process while harnessgit worked; nothing was written"
                )

    def _notes_commit(self, tip: str | None, appends: dict[str, list[bytes]], reason: str) -> str:
        root = self.commit_info(tip).tree if tip else None
        changes: dict[str, Blob | None] = {}
        for target, lines in appends.items():
            found = find_note(self.read_tree, root, target) if root else None
            content = b""
            path = note_path(target)
            if found:
                path, blob = found
                content = self._note_text(blob)
                if content and not content.endswith(b"\n"):
                    content += b"\n"
            content += b"".join(line + b"\n" for line in lines)
            blob = self.write_blob(content)
            self._remember_note(blob, content)  # the next append to it reads it back
            changes[path] = Blob(blob)
        tree = self.edit_tree(root, changes)
        return self.write_commit(tree, [tip] if tip else [], f"harnessgit: {reason}")

    def _keep_commit(self, tip: str | None, blobs: set[str]) -> str:
        root = self.commit_info(tip).tree if tip else None
        tree = self.edit_tree(root, {note_path(blob): Blob(blob) for blob in blobs})
        return self.write_commit(tree, [], "harnessgit evidence store: keeps evidence blobs reachable")

    # -- notes -----------------------------------------------------------

    def iter_notes(self, notes_ref: str) -> Iterator[tuple[str, bytes]]:
        """(annotated object, note text) for every note: one ``git notes list``, one
        pipelined cat-file. A generator, so the caller parses one note while git
        inflates the next."""
        for targets, data in self._note_blobs(notes_ref):
            for target in targets:
                yield target, data

    def _note_blobs(self, notes_ref: str, *, staged: bool = True) -> Iterator[tuple[list[str], bytes]]:
        """(every object annotated with it, note text) per distinct note blob. Two
        objects can carry byte-identical notes (`git notes copy`, a rebase that
        copies notes, a merge of notes from two clones): each blob is read once and
        given to all of them, none hidden (issue 15: a merge whose gate note equalled
        another commit's was called ungated)."""
        listed = self.git.out(["notes", f"--ref={notes_ref}", "list"])
        targets: dict[str, list[str]] = {}
        for line in listed.splitlines():
            if line:
                blob, target = line.split()
                targets.setdefault(blob, []).append(target)
        extra = dict(self._staged.lines(notes_ref)) if staged and self._staged is not None else {}
        for blob, _kind, data in self.catfile.read_many(list(targets)):
            plain = [target for target in targets[blob] if target not in extra]
            if plain:
                yield plain, data
            for target in targets[blob]:
                if target in extra:  # what is staged for it follows what is on record
                    yield [target], _joined(data, extra.pop(target))
        for target, lines in extra.items():
            yield [target], _joined(b"", lines)

    def _note_text(self, blob: str) -> bytes:
        """A note blob's text, kept: a note is read back at every append to it."""
        text = self._note_texts.get(blob)
        if text is None:
            text = self.read_blob(blob)
            self._remember_note(blob, text)
        return text

    def _remember_note(self, blob: str, text: bytes) -> None:
        if len(text) > _NOTE_TEXT_BYTES // 8:
            return  # a very large note is read again when needed
        if (
            len(self._note_texts) >= _NOTE_TEXTS
            or sum(map(len, self._note_texts.values())) > _NOTE_TEXT_BYTES
        ):
            self._note_texts.clear()
        self._note_texts[blob] = text

    def raw_notes(self, notes_ref: str) -> dict[str, bytes]:
        return dict(self.iter_notes(notes_ref))

    def notes(self, notes_ref: str) -> dict[str, list[Record]]:
        """The records on every object annotated on ``notes_ref``, by that object.
        Records that cannot be read are skipped with one warning per kind of problem."""
        from harnessgit.records.lines import Skipped, parse_note  # not at import: `check` never reads notes

        # The records at a tip never change: read again only when the ref moved (evolve
        # counts gate attempts every iteration; issue 13). The tip is read first, so
        # what is kept is never older than the tip it is kept under.
        tip = self.ref_value(notes_ref)
        kept = self._notes_read.get(notes_ref)
        if kept is None or kept[0] != tip:
            skipped = Skipped(notes_ref)
            read: dict[str, list[Record]] = {}
            for targets, text in self._note_blobs(notes_ref, staged=False):
                records = parse_note(text, listing([target[:12] for target in targets]), skipped)
                for target in targets:
                    read[target] = list(records)
            self._warn_skipped(skipped)
            kept = self._notes_read[notes_ref] = (tip, read)
        found = {target: list(records) for target, records in kept[1].items()}
        if self._staged is not None:
            for target, lines in self._staged.lines(notes_ref).items():
                found.setdefault(target, []).extend(parse_note(_joined(b"", lines), target[:12]))
        return found

    def notes_on(self, notes_ref: str, target: str) -> list[Record]:
        from harnessgit.records.lines import Skipped, parse_note

        tip = self.ref_value(notes_ref)
        found = find_note(self.read_tree, self.commit_info(tip).tree, target) if tip else None
        text = self._note_text(found[1]) if found else b""
        if self._staged is not None and target in self._staged.lines(notes_ref):
            text = _joined(text, self._staged.lines(notes_ref)[target])
        if not text:
            return []
        skipped = Skipped(notes_ref)
        records = parse_note(text, target[:12], skipped)
        self._warn_skipped(skipped)
        return records

    # Warnings this store gave already: a command reads a notes ref several times, and
    # says what it skipped once. A class default, replaced (never mutated) per store.
    _warned: frozenset[str] = frozenset()

    def _warn_skipped(self, skipped: Skipped) -> None:
        for warning in skipped.warnings():
            if warning not in self._warned:
                self._warned = self._warned | {warning}
                log.warning("%s", warning)


def _joined(note: bytes, lines: list[bytes]) -> bytes:
    """A note's text with staged record lines after it."""
    if note and not note.endswith(b"\n"):
        note += b"\n"
    return note + b"".join(line + b"\n" for line in lines)


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
