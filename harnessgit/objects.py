"""Git's object formats, computed in Python: tree entries, trees, commits and object ids.

Pure: no git process, no I/O. The store writes and reads objects through git; what
an object's id *is* (a candidate's harness tree id, a listing's blob id) is computed
here, without the store, by whoever needs to name an object before or without
writing it. SHA-1, as the store's object writer (gitdb) uses.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from typing import NamedTuple

ZERO = "0" * 40
MODE_FILE = "100644"
MODE_EXEC = "100755"
MODE_LINK = "120000"
MODE_TREE = "40000"
MODE_GITLINK = "160000"


class TreeEntry(NamedTuple):
    """One entry of a git tree: mode, name and object id."""

    mode: str
    name: str  # one path component (bytes decoded with surrogateescape)
    sha: str

    @property
    def is_tree(self) -> bool:
        return self.mode == MODE_TREE


def parse_tree(data: bytes) -> list[TreeEntry]:
    entries = []
    pos = 0
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        mode = data[pos:space].decode("ascii")
        name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
        sha = data[nul + 1 : nul + 21].hex()
        entries.append(TreeEntry(mode, name, sha))
        pos = nul + 21
    return entries


def _sort_key(entry: TreeEntry) -> bytes:
    # git orders tree entries by name, comparing a subtree as if it ended in "/".
    name = entry.name.encode("utf-8", "surrogateescape")
    return name + b"/" if entry.is_tree else name


def format_tree(entries: Iterable[TreeEntry]) -> bytes:
    return b"".join(
        entry.mode.encode("ascii")
        + b" "
        + entry.name.encode("utf-8", "surrogateescape")
        + b"\0"
        + bytes.fromhex(entry.sha)
        for entry in sorted(entries, key=_sort_key)
    )


class CommitInfo(NamedTuple):
    """One commit as `git log` describes it."""

    sha: str
    tree: str
    parents: tuple[str, ...]
    author: str  # "Name <email>"
    author_time: datetime
    message: str

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]

    @property
    def body(self) -> str:
        return self.message.split("\n", 1)[1].strip() if "\n" in self.message else ""


def parse_commit(sha: str, data: bytes) -> CommitInfo:
    header, _, message = data.partition(b"\n\n")
    tree, author, parents = "", "", []
    author_time = datetime.fromtimestamp(0, timezone.utc)
    for line in header.split(b"\n"):
        key, _, value = line.partition(b" ")
        if key == b"tree":
            tree = value.decode()
        elif key == b"parent":
            parents.append(value.decode())
        elif key == b"author":
            text = value.decode("utf-8", "replace")
            person, _, when = text.rpartition("> ")
            author = person + ">"
            author_time = _parse_when(when)
    return CommitInfo(sha, tree, tuple(parents), author, author_time, message.decode("utf-8", "replace"))


def _parse_when(when: str) -> datetime:
    try:
        seconds, offset = when.split()
        sign = -1 if offset.startswith("-") else 1
        delta = timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])) * sign
        return datetime.fromtimestamp(int(seconds), timezone(delta))
    except (ValueError, IndexError):
        return datetime.fromtimestamp(0, timezone.utc)
