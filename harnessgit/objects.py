"""Git's object formats, computed in Python: tree entries, trees and object ids.

Pure: no git process, no I/O. The store writes and reads objects through git; what
an object's id *is* (a candidate's harness tree id, a listing's blob id) is computed
here, without the store, by whoever needs to name an object before or without
writing it. SHA-1, as the store's object writer (gitdb) uses.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

ZERO = "0" * 40
MODE_FILE = "100644"
MODE_EXEC = "100755"
MODE_LINK = "120000"
MODE_TREE = "40000"
MODE_GITLINK = "160000"


@dataclass(frozen=True)
class TreeEntry:
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


def object_id(kind: str, data: bytes) -> str:
    """The id git gives an object of ``kind`` ("blob", "tree", ...) holding ``data``."""
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


def tree_id(files: Mapping[str, tuple[str, str]]) -> str:
    """The id of a tree holding ``path -> (mode, blob)``, subtrees included: computed, not written."""
    entries: list[TreeEntry] = []
    nested: dict[str, dict[str, tuple[str, str]]] = {}
    for path, (mode, sha) in files.items():
        first, _, rest = path.partition("/")
        if rest:
            nested.setdefault(first, {})[rest] = (mode, sha)
        else:
            entries.append(TreeEntry(mode, first, sha))
    entries += [TreeEntry(MODE_TREE, name, tree_id(sub)) for name, sub in nested.items()]
    return object_id("tree", format_tree(entries))
