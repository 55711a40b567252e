"""The object database part of the store (`Store.objects`): what `ObjectReader` reads
(blobs, trees and commits through the persistent cat-file, the files a commit or tree
holds), and objects written by the in-process loose-object writer."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harnessgit.objects import TreeEntry, format_tree, parse_commit
from harnessgit.readstore.git import Git
from harnessgit.readstore.objects import CACHE, ObjectReader
from harnessgit.store.identity import Identity
from harnessgit.store.objects import write_loose
from harnessgit.store.trees import Blob, edit_tree


class Objects(ObjectReader):
    def __init__(self, git: Git, directory: Path, identity: Identity) -> None:
        super().__init__(git)
        self.directory = directory  # the repository's objects directory
        self._identity = identity
        self._dirs: set[str] = set()  # objects/xx directories that exist

    # -- writing ---------------------------------------------------------

    def write_object(self, kind: str, data: bytes) -> str:
        # In process: `git hash-object` would be a process per object.
        return write_loose(self.directory, kind, data, self._dirs)

    def write_blob(self, data: bytes) -> str:
        return self.write_object("blob", data)

    def write_tree(self, entries: list[TreeEntry]) -> str:
        sha = self.write_object("tree", format_tree(entries))
        self._trees.setdefault(sha, sorted(entries, key=lambda entry: entry.name))
        return sha

    def edit_tree(self, base: str | None, changes: dict[str, Blob | None]) -> str:
        return edit_tree(self.read_tree, self.write_tree, base, changes)

    def write_commit(self, tree: str, parents: Iterable[str], message: str) -> str:
        lines = [f"tree {tree}"]
        lines += [f"parent {parent}" for parent in parents]
        lines.append(f"author {self._identity.signature('AUTHOR')}")
        lines.append(f"committer {self._identity.signature('COMMITTER')}")
        text = "\n".join(lines) + "\n\n" + message.rstrip("\n") + "\n"
        sha = self.write_object("commit", text.encode("utf-8"))
        if len(self._commits) < CACHE:  # read back at once (a candidate's, a notes tip)
            self._commits.setdefault(sha, parse_commit(sha, text.encode("utf-8")))
        return sha
