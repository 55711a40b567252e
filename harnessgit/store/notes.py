"""The notes part of the store (`Store.notes`): reading every record on a notes ref fast.

One `git notes list` and one pipelined read through the store's persistent cat-file.
Records are written by `Store.refs.commit` (a `Transaction`'s appends); what is staged
and not applied yet is read back here, through `Refs.staged_lines`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from harnessgit.readstore.git import Git
from harnessgit.render import listing
from harnessgit.store.notes_commits import NoteTexts, joined
from harnessgit.store.refs import Refs
from harnessgit.store.trees import find_note

if TYPE_CHECKING:
    from harnessgit.records import Record
    from harnessgit.records.lines import Skipped

log = logging.getLogger("harnessgit")


class Notes:
    def __init__(self, git: Git, refs: Refs, texts: NoteTexts) -> None:
        self.git = git
        self._refs = refs
        self._objects = texts.objects
        self._texts = texts
        self._read: dict[str, tuple[str | None, dict[str, list[Record]]]] = {}  # ref -> (tip, its records)
        # Warnings given already: a command reads a notes ref several times, and says
        # what it skipped once.
        self._warned: set[str] = set()

    def iter_texts(self, notes_ref: str) -> Iterator[tuple[str, bytes]]:
        """(annotated object, note text) for every note: one ``git notes list``, one
        pipelined cat-file. A generator, so the caller parses one note while git
        inflates the next."""
        for targets, data in self._note_blobs(notes_ref):
            for target in targets:
                yield target, data

    def texts(self, notes_ref: str) -> dict[str, bytes]:
        return dict(self.iter_texts(notes_ref))

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
        extra = dict(self._refs.staged_lines(notes_ref)) if staged else {}
        for blob, _kind, data in self._objects.stream(list(targets)):
            plain = [target for target in targets[blob] if target not in extra]
            if plain:
                yield plain, data
            for target in targets[blob]:
                if target in extra:  # what is staged for it follows what is on record
                    yield [target], joined(data, extra.pop(target))
        for target, lines in extra.items():
            yield [target], joined(b"", lines)

    def records(self, notes_ref: str) -> dict[str, list[Record]]:
        """The records on every object annotated on ``notes_ref``, by that object.
        Records that cannot be read are skipped with one warning per kind of problem."""
        from harnessgit.records.lines import Skipped, parse_note  # not at import: `check` never reads notes

        # The records at a tip never change: read again only when the ref moved (evolve
        # counts gate attempts every iteration; issue 13). The tip is read first, so
        # what is kept is never older than the tip it is kept under.
        tip = self._refs.value(notes_ref)
        kept = self._read.get(notes_ref)
        if kept is None or kept[0] != tip:
            skipped = Skipped(notes_ref)
            read: dict[str, list[Record]] = {}
            for targets, text in self._note_blobs(notes_ref, staged=False):
                records = parse_note(text, listing([target[:12] for target in targets]), skipped)
                for target in targets:
                    read[target] = list(records)
            self.warn_skipped(skipped)
            kept = self._read[notes_ref] = (tip, read)
        found = {target: list(records) for target, records in kept[1].items()}
        for target, lines in self._refs.staged_lines(notes_ref).items():
            found.setdefault(target, []).extend(parse_note(joined(b"", lines), target[:12]))
        return found

    def records_on(self, notes_ref: str, target: str) -> list[Record]:
        """The records on one annotated object."""
        from harnessgit.records.lines import Skipped, parse_note

        tip = self._refs.value(notes_ref)
        found = (
            find_note(self._objects.read_tree, self._objects.commit_info(tip).tree, target) if tip else None
        )
        text = self._texts.text(found[1]) if found else b""
        staged = self._refs.staged_lines(notes_ref)
        if target in staged:
            text = joined(text, staged[target])
        if not text:
            return []
        skipped = Skipped(notes_ref)
        records = parse_note(text, target[:12], skipped)
        self.warn_skipped(skipped)
        return records

    def warn_skipped(self, skipped: Skipped) -> None:
        """Log what reading skipped, each warning once per store."""
        for warning in skipped.warnings():
            if warning not in self._warned:
                self._warned.add(warning)
                log.warning("%s", warning)
