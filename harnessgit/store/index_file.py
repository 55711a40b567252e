"""A notes index as it is on disk and read: `NotesIndex`, one line per tag, sorted.

After a JSON header (format, ref, commit, tree, sha256 of the body), one line per tag:
``<tag> <target>:<blob> <target>:<blob> ...``, sorted by tag. A lookup finds its tag's
line by a binary search of the bytes instead of parsing 20,000 lines; the whole is
parsed only to update it. Keeping it up to date is `harnessgit.store.index`'s.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from harnessgit.readstore.derived import IndexUnreadable as IndexUnreadable
from harnessgit.readstore.derived import seal as seal
from harnessgit.readstore.derived import unseal as unseal

FORMAT = 3  # 1: one line per note (never released); 2: exports not under `peek`
SEARCHES = 16  # more tags than this at once: parse the whole index instead of one search each
ANY = "*"  # a note with a line that is not JSON, or an odd harness string: read for every lookup
NONE = "-"  # a note indexed under nothing (so that every note has a line)
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
        text = self._text
        if self._entries is not None:  # built or updated here: its lines as `dump` writes them
            text = b"\n" + self.dump().partition(b"\n")[2]
        mark = b"\n" + prefix.encode()
        first = text.find(mark)
        if first < 0:
            return b""
        end = text.find(b"\n", text.rfind(mark) + 1)
        return text[first + 1 : end if end >= 0 else None]

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
        return seal({"format": FORMAT, "ref": self.ref, "commit": self.commit, "tree": self.tree}, body)


def _line(line: bytes) -> tuple[str, dict[str, str]]:
    if not LINE.fullmatch(line):
        raise IndexUnreadable("a line has the wrong shape")
    tag, *pairs = line.split(b" ")
    return tag.decode(), {target: blob for target, blob in (pair.decode().split(":") for pair in pairs)}


def parse_index(data: bytes, ref: str) -> NotesIndex:
    header, start = unseal(data, FORMAT)
    body = data[start:]
    if header.get("ref") != ref:
        raise IndexUnreadable(f"it indexes {header.get('ref')!r}, not {ref}")
    commit, tree = header.get("commit"), header.get("tree")
    if not (commit is None or isinstance(commit, str)) or not (tree is None or isinstance(tree, str)):
        raise IndexUnreadable("its key is not a commit id")
    return NotesIndex(ref, commit, tree, body=body)
