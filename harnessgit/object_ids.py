"""The ids git gives objects (SHA-1 over the object's header and content), computed
without writing: a leaf of its own, because hashlib loads OpenSSL's libcrypto (about
5 ms of CPU at start-up), which reading a repository (`harnessgit.readstore`, the
pre-commit hook) never needs: only what writes or fingerprints objects imports this."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from harnessgit.objects import MODE_TREE, TreeEntry, format_tree


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
