"""Indexes of notes: which notes hold records of which harness, and retire records.

Every command used to read every evaluation record (issue 17: `show` of one candidate
grew with the whole history). An index lets a reader ask for the notes that carry
records of one harness tree id, or test peeks, and read only those; the evidence
notes' index carries each retire record's (candidate, reason, time), which is all
`status` needs of 20,000 evidence notes.

git stays the source of truth; an index is derived and rebuildable. It lives in
``<common git dir>/harnessgit/index/<notes ref>``, keyed by the notes commit it was
built from. A reader trusts it only when its key is the notes commit it reads now and
its checksum holds; otherwise it brings it up to date from a tree diff between the two
notes commits (incremental: only the notes that changed are read, whether the ref
moved forward, or sideways after a fetch or a notes merge) or, when the old commit is
gone or the file cannot be read, rebuilds it from every note. Written by rename, so a
concurrent reader sees the old index or the new one, never a part; two writers racing
each leave an index that is true for the commit it names. A lookup reads the note
blobs the index names for its commit, so every lookup of one index is one snapshot.

What an evaluation note is indexed under: every ``harness`` string of every line that
parses as a JSON object, and ``peek`` when a line's ``kind`` is ``test-peek`` or
``export`` (a forced export of a guarded split: a look of its own, listed with the peeks). A line
that is not JSON, or a harness that is not hex, marks its note ``*``, read for every
lookup, so nothing the record reader might accept is ever left out. Readers filter
what they read by key, so a note listed under a harness it does not hold costs time,
never a result. An index edited with its checksum redone is found by `doctor` (it
compares the index with a rebuild).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Collection, Iterator
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from harnessgit import layout
from harnessgit.errors import GitFailed
from harnessgit.readstore.derived import derived_path
from harnessgit.render import listing
from harnessgit.store.index_file import ANY, Entry, IndexUnreadable, NotesIndex, parse_index

if TYPE_CHECKING:
    from harnessgit.records import Record
    from harnessgit.store.repo import Store

PEEK = "peek"
HARNESS = re.compile(r"[0-9a-f]{4,64}")  # what a harness tree id can be written as in the index


RETIRE = "retire/"


def tags_of(ref: str, text: bytes) -> frozenset[str]:
    """What a note is indexed under: `eval_tags`, or `retire_tags` on the evidence ref."""
    return retire_tags(text) if ref == layout.NOTES_EVIDENCE else eval_tags(text)


def retire_tags(text: bytes) -> frozenset[str]:
    """One tag per retire record the record reader accepts: ``retire/<line>/<candidate>/
    <reason>/<ts>``, each part percent-encoded. `status` counts archived candidates by
    reason from these tags instead of parsing 20,000 evidence notes."""
    from harnessgit.records import RetireRecord
    from harnessgit.records.lines import Skipped, parse_note

    records = parse_note(text, "", Skipped())  # what readers see; they warn, not this
    tags = set()
    for n, record in enumerate(records):
        if isinstance(record, RetireRecord):
            parts = (str(n), record.candidate, record.reason, record.ts.isoformat())
            tags.add(RETIRE + "/".join(quoted(part).decode() for part in parts))
    return frozenset(tags)


PLAIN = re.compile(r"[A-Za-z0-9_.~:+-]*")  # what `quote(..., safe=":+")` leaves as it is


def quoted(part: str) -> bytes:
    return (part if PLAIN.fullmatch(part) else quote(part, safe=":+")).encode()


def eval_tags(text: bytes) -> frozenset[str]:
    """What an evaluation note is indexed under (module docstring)."""
    tags: set[str] = set()
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            tags.add(ANY)
            continue
        if isinstance(data, dict):
            harness = data.get("harness")
            if isinstance(harness, str):
                tags.add(harness if HARNESS.fullmatch(harness) else ANY)
            if data.get("kind") in ("test-peek", "export"):
                tags.add(PEEK)
    return frozenset(tags)


def index_path(store: Store, ref: str) -> Path:
    return derived_path(store.common_dir, ref)


def read_index(store: Store, ref: str) -> NotesIndex:
    """The index of ``ref`` as it is now: from the file when its key matches, brought up
    to date (and saved) when it does not, rebuilt when it cannot be read."""
    return _refreshed(store, ref, store.refs.value(ref))[0]


def check_index(store: Store, ref: str) -> str | None:
    """For `doctor`: what is wrong with the index file, or None. A missing file is fine
    (built on first use), and so is a stale one whose update from the notes equals a
    rebuild (readers update it); one that cannot be read, or whose entries differ from
    a rebuild, is not."""
    path = index_path(store, ref)
    if not path.exists():
        return None
    try:
        saved = parse_index(path.read_bytes(), ref)
    except IndexUnreadable as exc:
        return f"the index of {ref} cannot be used: {exc}"
    tags = [line.partition(b" ")[0] for line in saved._text.split(b"\n") if line]
    if any(a >= b for a, b in pairwise(tags)):  # lookups are binary searches
        return f"the index of {ref} has its lines out of order"
    tip = store.refs.value(ref)
    current: NotesIndex | None = saved
    if saved.commit != tip:
        current = _updated(store, saved, tip) if saved.tree is not None and tip is not None else None
    if current is not None and current.entries != _build(store, ref, tip).entries:
        return f"the index of {ref} does not match its notes"
    return None


def rebuild_index(store: Store, ref: str) -> NotesIndex:
    index = _build(store, ref, store.refs.value(ref))
    _save(store, index)
    return index


def _refreshed(store: Store, ref: str, tip: str | None) -> tuple[NotesIndex, str]:
    """(the index at ``tip``, how it was had: current | updated | rebuilt)."""
    path = index_path(store, ref)
    try:
        saved = parse_index(path.read_bytes(), ref)
    except (OSError, IndexUnreadable):
        saved = None
    if saved is not None and saved.commit == tip:
        return saved, "current"
    index = None
    if saved is not None and saved.tree is not None and tip is not None:
        index = _updated(store, saved, tip)
    how = "updated" if index is not None else "rebuilt"
    if index is None:
        index = _build(store, ref, tip)
    _save(store, index)
    return index, how


def _build(store: Store, ref: str, tip: str | None) -> NotesIndex:
    if tip is None:
        return NotesIndex(ref, None, None, {})
    tree = store.objects.commit_info(tip).tree
    # The tree of this very commit (not `git notes list`, which reads the ref as it is
    # by then): the key must name exactly what was read.
    listed = store.git.out(["ls-tree", "-r", "--full-tree", tree])
    targets: dict[str, list[str]] = {}
    for line in listed.splitlines():
        meta, _, path = line.partition("\t")
        _mode, kind, blob = meta.split(" ")
        if kind == "blob":
            targets.setdefault(blob, []).append(path.replace("/", ""))
    entries: dict[str, Entry] = {}
    for blob, _kind, data in store.objects.stream(list(targets)):
        tags = tags_of(ref, data)
        for target in targets[blob]:
            entries[target] = Entry(blob, tags)
    return NotesIndex(ref, tip, tree, entries)


def _updated(store: Store, saved: NotesIndex, tip: str) -> NotesIndex | None:
    """``saved`` moved to ``tip`` by a diff of the two notes trees: the notes that
    changed, whatever the history between them. None when the old tree is gone."""
    tree = store.objects.commit_info(tip).tree
    assert saved.tree is not None
    result = store.git.run(["diff-tree", "-r", "--no-renames", "-z", saved.tree, tree], check=False)
    if result.returncode != 0:
        return None
    entries = dict(saved.entries)
    changed: dict[str, list[str]] = {}
    for mode_line, path in _pairs(result.stdout.split(b"\0")):
        new_blob, status = mode_line.split(b" ")[3].decode(), mode_line.split(b" ")[4].decode()
        target = path.decode().replace("/", "")
        if status == "D":
            # A fanout change deletes and re-adds one target: drop it only if it
            # still names the blob deleted here.
            old_blob = mode_line.split(b" ")[2].decode()
            if target in entries and entries[target].blob == old_blob:
                del entries[target]
        else:
            changed.setdefault(new_blob, []).append(target)
    try:
        for blob, _kind, data in store.objects.stream(list(changed)):
            for target in changed[blob]:
                entries[target] = Entry(blob, tags_of(saved.ref, data))
    except GitFailed:
        return None
    return NotesIndex(saved.ref, tip, tree, entries)


def _pairs(fields: list[bytes]) -> Iterator[tuple[bytes, bytes]]:
    """(":old-mode new-mode old new status", path) from ``diff-tree -r -z`` output."""
    it = iter(field for field in fields if field)
    for meta in it:
        yield meta, next(it)


def changed_notes(store: Store, old: str | None, new: str) -> list[tuple[str, str | None, str | None]] | None:
    """(annotated object, old note blob, new note blob) for every note that differs
    between two notes trees (``old`` None: every note of ``new``); None when the old
    tree is gone. What a derived cache brings itself up to date from."""
    if old is None:
        listed = store.git.out(["ls-tree", "-r", "--full-tree", new])
        found: list[tuple[str, str | None, str | None]] = []
        for line in listed.splitlines():
            head, _, where = line.partition("\t")
            _mode, kind, blob = head.split(" ")
            if kind == "blob":
                found.append((where.replace("/", ""), None, blob))
        return found
    result = store.git.run(["diff-tree", "-r", "--no-renames", "-z", old, new], check=False)
    if result.returncode != 0:
        return None
    by_target: dict[str, list[str | None]] = {}
    for meta, name in _pairs(result.stdout.split(b"\0")):
        _old_mode, _new_mode, old_blob, new_blob, status = meta.decode().split(" ")
        target = name.decode().replace("/", "")
        entry = by_target.setdefault(target, [None, None])
        if status != "A":
            entry[0] = entry[0] or old_blob
        if status != "D":
            entry[1] = new_blob  # a fanout change deletes and re-adds one target
    return [(target, old, new) for target, (old, new) in by_target.items()]


def save_derived(store: Store, name: str, data: bytes) -> None:
    """Write a derived file beside the indexes, atomically, by rename; one that cannot be
    saved (a read-only repository) is only slower next time, never wrong."""
    path = index_path(store, name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".index-", dir=path.parent)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide it from the other users of a shared clone
        os.replace(tmp, path)
    except OSError:
        return


def _save(store: Store, index: NotesIndex) -> None:
    save_derived(store, index.ref, index.dump())


def notes_under(
    store: Store, index: NotesIndex, tags: Collection[str] | None
) -> Iterator[tuple[str, list[Record]]]:
    """(annotated object, its records) for every note indexed under one of ``tags`` (None:
    every note), as `Notes.records` reads them: in its order, each note's blob read once, records
    that cannot be read skipped with one warning per kind of problem."""
    from harnessgit.records.lines import Skipped, parse_note  # not at import: `check` never reads notes

    try:
        notes = index.notes(tags)
    except IndexUnreadable:  # a line edited with the checksum redone: rebuilt, same snapshot
        index = _build(store, index.ref, index.commit)
        _save(store, index)
        notes = index.notes(tags)
    by_blob: dict[str, list[str]] = {}
    for target, blob in notes.items():
        by_blob.setdefault(blob, []).append(target)
    skipped = Skipped(index.ref)
    for blob, _kind, data in store.objects.stream(list(by_blob)):
        shared = by_blob[blob]
        records = parse_note(data, listing([target[:12] for target in shared]), skipped)
        for target in shared:
            yield target, list(records)
    store.notes.warn_skipped(skipped)
