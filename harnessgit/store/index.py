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

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from harnessgit import layout
from harnessgit.errors import GitFailed
from harnessgit.render import listing

if TYPE_CHECKING:
    from harnessgit.records import Record
    from harnessgit.store.repo import Store

FORMAT = 3  # 1: one line per note (never released); 2: exports not under `peek`
PEEK = "peek"
SEARCHES = 16  # more tags than this at once: parse the whole index instead of one search each
ANY = "*"  # a note with a line that is not JSON, or an odd harness string: read for every lookup
NONE = "-"  # a note indexed under nothing (so that every note has a line)
HARNESS = re.compile(r"[0-9a-f]{4,64}")  # what a harness tree id can be written as in the index
LINE = re.compile(rb"[!-~]+(?: [0-9a-f]{40,64}:[0-9a-f]{40,64})+")  # a tag, then target:blob pairs


@dataclass(frozen=True)
class Entry:
    """One annotated object's note: its blob and what it is indexed under."""

    blob: str
    tags: frozenset[str]


class NotesIndex:
    """The notes of one notes commit; ``commit`` None for no notes at all.

    On disk, after a JSON header (format, ref, commit, tree, sha256 of the body), one
    line per tag: ``<tag> <target>:<blob> <target>:<blob> ...``. A lookup finds its
    tag's line with one search through the bytes instead of parsing 20,000 lines
    (that took most of `show`'s time); the whole is parsed only to update it.
    """

    def __init__(
        self,
        ref: str,
        commit: str | None,
        tree: str | None,
        entries: dict[str, Entry] | None = None,
        *,
        body: bytes = b"",
    ) -> None:
        self.ref, self.commit, self.tree = ref, commit, tree
        self._entries = entries
        self._text = b"\n" + body  # a tag's line starts after a newline

    @property
    def entries(self) -> dict[str, Entry]:
        """Annotated object -> its note's entry (parsed on first use)."""
        if self._entries is None:
            tags: dict[str, set[str]] = {}
            blobs: dict[str, str] = {}
            for line in self._text.split(b"\n"):
                if line:
                    tag, pairs = _line(line)
                    for target, blob in pairs.items():
                        blobs[target] = blob
                        tags.setdefault(target, set()).update(() if tag == NONE else (tag,))
            self._entries = {target: Entry(blobs[target], frozenset(tags[target])) for target in blobs}
        return self._entries

    def notes(self, tags: Collection[str] | None) -> dict[str, str]:
        """Annotated object -> note blob for every note indexed under one of ``tags`` or
        ``*`` (None: every note), sorted as `git notes list` sorts them."""
        if tags is None:
            found = {target: entry.blob for target, entry in self.entries.items()}
        elif self._entries is not None or len(tags) > SEARCHES:
            wanted = {*tags, ANY}
            found = {t: e.blob for t, e in self.entries.items() if not wanted.isdisjoint(e.tags)}
        else:
            found = {target: blob for tag in (*tags, ANY) for target, blob in self._tagged(tag).items()}
        return dict(sorted(found.items()))

    def with_prefix(self, prefix: str) -> list[tuple[str, dict[str, str]]]:
        """(tag, annotated object -> note blob) for every tag that starts with ``prefix``:
        the lines are sorted by tag, so they stand together."""
        if self._entries is not None:
            by_tag: dict[str, dict[str, str]] = {}
            for target, entry in sorted(self._entries.items()):
                for tag in entry.tags:
                    if tag.startswith(prefix):
                        by_tag.setdefault(tag, {})[target] = entry.blob
            return sorted(by_tag.items())
        found = []
        at = self._text.find(b"\n" + prefix.encode())
        while at >= 0 and self._text.startswith(prefix.encode(), at + 1):
            end = self._text.find(b"\n", at + 1)
            found.append(_line(self._text[at + 1 : end if end >= 0 else None]))
            at = end
        return found

    def block(self, prefix: str) -> bytes:
        """The lines whose tag starts with ``prefix``, as on disk. The lines are sorted
        by tag, so they run from the first such line to the last."""
        if self._entries is not None:  # built or parsed here: written out again
            lines = self.with_prefix(prefix)
            return "\n".join(
                f"{tag} {' '.join(f'{t}:{b}' for t, b in notes.items())}" for tag, notes in lines
            ).encode()
        mark = b"\n" + prefix.encode()
        first = self._text.find(mark)
        if first < 0:
            return b""
        end = self._text.find(b"\n", self._text.rfind(mark) + 1)
        return self._text[first + 1 : end if end >= 0 else None]

    def _tagged(self, tag: str) -> dict[str, str]:
        text, key = self._text, tag.encode() + b" "
        start = self._seek(tag.encode())
        if not text.startswith(key, start):
            return {}
        end = text.find(b"\n", start)
        return _line(text[start : end if end >= 0 else None])[1]

    def _seek(self, tag: bytes) -> int:
        """Where the first line whose tag is not below ``tag`` starts (the end of the text
        when none does): a binary search, the lines being sorted by tag (`dump`; `doctor`
        checks the order). A search through the whole text took ~1 ms a lookup at 20,000
        notes, and `status` makes dozens."""
        text = self._text
        lo, hi = 1, len(text)  # the line sought starts in [lo, hi]; text starts with "\n"
        while lo < hi:
            mid = (lo + hi) // 2
            start = text.rfind(b"\n", lo - 1, mid) + 1  # the line holding mid (or lo's)
            space = text.find(b" ", start)
            newline = text.find(b"\n", start)
            end = min(i for i in (space, newline, len(text)) if i >= 0)
            if text[start:end] < tag:
                lo = newline + 1 if newline >= 0 else len(text)
            else:
                hi = start
        return lo

    def dump(self) -> bytes:
        by_tag: dict[str, list[str]] = {}
        for target, entry in sorted(self.entries.items()):
            for tag in entry.tags or (NONE,):
                by_tag.setdefault(tag, []).append(f"{target}:{entry.blob}")
        body = "".join(f"{tag} {' '.join(pairs)}\n" for tag, pairs in sorted(by_tag.items())).encode()
        header = {
            "format": FORMAT,
            "ref": self.ref,
            "commit": self.commit,
            "tree": self.tree,
            "sha256": hashlib.sha256(body).hexdigest(),
        }
        return json.dumps(header, sort_keys=True).encode() + b"\n" + body


class IndexUnreadable(Exception):
    """The index file is missing, truncated, tampered with or of another format."""


def _line(line: bytes) -> tuple[str, dict[str, str]]:
    if not LINE.fullmatch(line):
        raise IndexUnreadable("a line has the wrong shape")
    tag, *pairs = line.split(b" ")
    return tag.decode(), {target: blob for target, blob in (pair.decode().split(":") for pair in pairs)}


def parse_index(data: bytes, ref: str) -> NotesIndex:
    head, newline, body = data.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError:
        raise IndexUnreadable("its header is not JSON") from None
    if not newline or not isinstance(header, dict) or header.get("format") != FORMAT:
        raise IndexUnreadable("its header is missing or of another format")
    if header.get("ref") != ref:
        raise IndexUnreadable(f"it indexes {header.get('ref')!r}, not {ref}")
    if header.get("sha256") != hashlib.sha256(body).hexdigest():
        raise IndexUnreadable("its checksum does not match (truncated or edited)")
    commit, tree = header.get("commit"), header.get("tree")
    if not (commit is None or isinstance(commit, str)) or not (tree is None or isinstance(tree, str)):
        raise IndexUnreadable("its key is not a commit id")
    return NotesIndex(ref, commit, tree, body=body)


RETIRE = "retire/"


def tags_of(ref: str, text: bytes) -> frozenset[str]:
    """What a note is indexed under: `eval_tags`, or `retire_tags` on the evidence ref."""
    return retire_tags(text) if ref == layout.NOTES_EVIDENCE else eval_tags(text)


def retire_tags(text: bytes) -> frozenset[str]:
    """One tag per retire record the record reader accepts: ``retire/<line>/<candidate>/
    <reason>/<ts>``, each part percent-encoded. `status` counts archived candidates by
    reason from these tags instead of parsing 20,000 evidence notes."""
    from harnessgit.records import RetireRecord, Skipped, parse_note

    records = parse_note(text, "", Skipped())  # what readers see; they warn, not this
    tags = set()
    for n, record in enumerate(records):
        if isinstance(record, RetireRecord):
            parts = (str(n), record.candidate, record.reason, record.ts.isoformat())
            tags.add(RETIRE + "/".join(_quoted(part).decode() for part in parts))
    return frozenset(tags)


# One retire line of the index: its tag's four parts, then its target:blob pairs.
RETIRE_LINE = re.compile(
    rb"^retire/([!-.0-~]+)/([!-.0-~]+)/([!-.0-~]+)/([!-.0-~]+)((?: [0-9a-f]{40,64}:[0-9a-f]{40,64})+)$",
    re.MULTILINE,
)


def retire_reasons(store: Store, ref: str, archived: Mapping[str, str]) -> dict[str, str]:
    """Candidate -> the reason of its newest retire record on its own commit, for the
    ``archived`` candidates (candidate -> commit). One pattern over the block of retire
    lines, decoding only the lines of the candidates asked about: `status` counts 20,000
    archived candidates this way (parsing each line whole took 130 ms)."""
    # Matched as written in the tags (percent-encoded, `retire_tags`): a line is decoded
    # only when its candidate is asked about and another of its records competes.
    wanted = {_quoted(cid): (cid, f" {sha}:".encode()) for cid, sha in archived.items()}
    newest: dict[str, tuple[bytes, bytes, bytes]] = {}  # candidate -> (n, time, reason) as written
    for n, candidate, reason, ts, pairs in RETIRE_LINE.findall(read_index(store, ref).block(RETIRE)):
        cid, on_commit = wanted.get(candidate, ("", b""))
        if not cid or on_commit not in pairs:
            continue
        if cid not in newest or _later((n, ts), newest[cid][:2]):
            newest[cid] = (n, ts, reason)
    return {cid: _unquoted(reason) for cid, (_n, _ts, reason) in newest.items()}


REASONS = "archived-reasons"  # the derived file of `archived_reasons`


def archived_reasons(store: Store, ref: str, archived: Mapping[str, str]) -> dict[str, int]:
    """How many of the ``archived`` candidates (candidate -> commit) have each reason as
    their newest retire record ("unknown" without one). Derived like the indexes and kept
    beside them, keyed by the notes commit of ``ref`` and a digest of ``archived``: a
    `status` with nothing retired since reads a few bytes instead of 20,000 retire lines."""
    key = _reasons_key(store, ref, archived)
    saved = _saved_reasons(store)
    if saved is not None and saved[0] == key:
        return saved[1]
    counts = _counted(store, ref, archived)
    save_derived(store, REASONS, json.dumps({"format": 1, "key": key, "counts": counts}).encode())
    return counts


def check_reasons(store: Store, ref: str, archived: Mapping[str, str]) -> str | None:
    """For `doctor`: None unless the saved counts are for the archive as it is now and
    differ from a count of the retire lines (an edited file; readers would trust it)."""
    saved = _saved_reasons(store)
    if saved is None or saved[0] != _reasons_key(store, ref, archived):
        return None  # missing, unreadable or stale: recounted on the next `status`
    if _counted(store, ref, archived) != saved[1]:
        return "the saved counts of archived candidates do not match the notes"
    return None


def _counted(store: Store, ref: str, archived: Mapping[str, str]) -> dict[str, int]:
    newest = retire_reasons(store, ref, archived)
    counts: dict[str, int] = {}
    for cid in archived:
        reason = newest.get(cid, "unknown")
        counts[reason] = counts.get(reason, 0) + 1
    return counts


def _reasons_key(store: Store, ref: str, archived: Mapping[str, str]) -> str:
    listing = "".join(f"{cid} {sha}\n" for cid, sha in sorted(archived.items()))
    return hashlib.sha256(f"{store.ref_value(ref)}\n{listing}".encode()).hexdigest()


def _saved_reasons(store: Store) -> tuple[str, dict[str, int]] | None:
    try:
        data = json.loads(index_path(store, REASONS).read_bytes())
        key, counts = data["key"], data["counts"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    valid = isinstance(key, str) and isinstance(counts, dict) and data.get("format") == 1
    if not valid or not all(isinstance(n, int) and n >= 0 for n in counts.values()):
        return None
    return key, counts


def _later(a: tuple[bytes, bytes], b: tuple[bytes, bytes]) -> bool:
    """Whether the retire record at (place, time) ``a`` is newer than ``b``; of equal
    times the first in the note is (as ``max`` over the records reads)."""
    ta, tb = (datetime.fromisoformat(_unquoted(ts)) for _n, ts in (a, b))
    return ta > tb or (ta == tb and int(a[0]) < int(b[0]))


PLAIN = re.compile(r"[A-Za-z0-9_.~:+-]*")  # what `quote(..., safe=":+")` leaves as it is


def _quoted(part: str) -> bytes:
    return (part if PLAIN.fullmatch(part) else quote(part, safe=":+")).encode()


def _unquoted(part: bytes) -> str:
    text = part.decode()
    return unquote(text) if "%" in text else text


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
    return store.common_dir / "harnessgit" / "index" / ref.removeprefix("refs/notes/").replace("/", "-")


def read_index(store: Store, ref: str) -> NotesIndex:
    """The index of ``ref`` as it is now: from the file when its key matches, brought up
    to date (and saved) when it does not, rebuilt when it cannot be read."""
    return _refreshed(store, ref, store.ref_value(ref))[0]


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
    tip = store.ref_value(ref)
    current: NotesIndex | None = saved
    if saved.commit != tip:
        current = _updated(store, saved, tip) if saved.tree is not None and tip is not None else None
    if current is not None and current.entries != _build(store, ref, tip).entries:
        return f"the index of {ref} does not match its notes"
    return None


def rebuild_index(store: Store, ref: str) -> NotesIndex:
    index = _build(store, ref, store.ref_value(ref))
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
    tree = store.commit_info(tip).tree
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
    for blob, _kind, data in store.catfile.read_many(list(targets)):
        tags = tags_of(ref, data)
        for target in targets[blob]:
            entries[target] = Entry(blob, tags)
    return NotesIndex(ref, tip, tree, entries)


def _updated(store: Store, saved: NotesIndex, tip: str) -> NotesIndex | None:
    """``saved`` moved to ``tip`` by a diff of the two notes trees: the notes that
    changed, whatever the history between them. None when the old tree is gone."""
    tree = store.commit_info(tip).tree
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
        for blob, _kind, data in store.catfile.read_many(list(changed)):
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
    every note), as `Store.notes` reads them: in its order, each note's blob read once, records
    that cannot be read skipped with one warning per kind of problem."""
    from harnessgit.records import Skipped, parse_note  # not at import: `check` never reads notes

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
    for blob, _kind, data in store.catfile.read_many(list(by_blob)):
        shared = by_blob[blob]
        records = parse_note(data, listing([target[:12] for target in shared]), skipped)
        for target in shared:
            yield target, list(records)
    store._warn_skipped(skipped)
