"""Reading git objects (the reading half of the store's `Objects`): blobs, trees and
commits through the persistent cat-file, and the files a commit or tree holds.

Objects never change, so trees, commits and subtree listings read once are kept.
"""

from __future__ import annotations

from collections.abc import Iterator

from harnessgit.errors import HarnessgitError
from harnessgit.objects import ZERO, CommitInfo, TreeEntry, parse_commit, parse_tree
from harnessgit.readstore.catfile import CatFile
from harnessgit.readstore.git import Git

CACHE = 4096  # trees, commits and listings kept, each


class ObjectReader:
    def __init__(self, git: Git) -> None:
        self.git = git
        self.catfile = CatFile(git)
        self._trees: dict[str, list[TreeEntry]] = {}
        self._commits: dict[str, CommitInfo] = {}
        self._listings: dict[str, dict[str, TreeEntry]] = {}  # tree id -> files under it

    def close(self) -> None:
        self.catfile.close()

    # -- reading ---------------------------------------------------------

    def read_object(self, sha: str) -> tuple[str, bytes]:
        found = self.catfile.read(sha)
        if found is None:
            raise HarnessgitError(f"object {sha} is missing from the repository")
        return found

    def read_blob(self, sha: str) -> bytes:
        kind, data = self.read_object(sha)
        if kind != "blob":
            raise HarnessgitError(f"object {sha} is a {kind}, not a blob")
        return data

    def read_blobs(self, shas: list[str]) -> dict[str, bytes]:
        """The content of many blobs through one pipelined ``cat-file --batch``."""
        blobs = {}
        for sha, kind, data in self.stream(sorted(set(shas))):
            if kind != "blob":
                raise HarnessgitError(f"object {sha} is a {kind}, not a blob")
            blobs[sha] = data
        return blobs

    def read_small_blobs(self, shas: list[str], max_bytes: int) -> dict[str, tuple[int, bytes | None]]:
        """Each blob's size and content, None for a blob over ``max_bytes``: one pipelined
        ``cat-file --batch`` (the persistent one), where `object_sizes` then `read_blobs`
        would start a second process."""
        found = {}
        for sha, kind, size, data in self.catfile.read_bounded(sorted(set(shas) - {ZERO}), max_bytes):
            if kind != "blob":
                raise HarnessgitError(f"object {sha} is a {kind}, not a blob")
            found[sha] = (size, data)
        return found

    def stream(self, shas: list[str]) -> Iterator[tuple[str, str, bytes]]:
        """(id, kind, content) of each object, in order, pipelined: the caller parses
        one while git inflates the next."""
        return self.catfile.read_many(shas)

    def read_tree(self, sha: str) -> list[TreeEntry]:
        cached = self._trees.get(sha)
        if cached is None:
            kind, data = self.read_object(sha)
            if kind != "tree":
                raise HarnessgitError(f"object {sha} is a {kind}, not a tree")
            cached = parse_tree(data)
            if len(self._trees) >= CACHE:
                self._trees.clear()
            self._trees[sha] = cached
        return cached

    def commit_info(self, sha: str) -> CommitInfo:
        cached = self._commits.get(sha)
        if cached is not None:
            return cached
        kind, data = self.read_object(sha)
        if kind != "commit":
            raise HarnessgitError(f"object {sha} is a {kind}, not a commit")
        info = parse_commit(sha, data)
        if len(self._commits) >= CACHE:
            self._commits.clear()
        self._commits[sha] = info
        return info

    def commit_tree_id(self, rev: str) -> str:
        """The tree of a commit (or the tree itself, given a tree id)."""
        if rev in self._commits:
            return self._commits[rev].tree
        kind, _data = self.read_object(rev)
        if kind == "tree":
            return rev
        if kind != "commit":
            raise HarnessgitError(f"object {rev} is a {kind}, not a commit")
        return self.commit_info(rev).tree

    def object_sizes(self, shas: list[str]) -> dict[str, int]:
        """Size in bytes of each object, without reading its content."""
        wanted = sorted({sha for sha in shas if sha != ZERO})
        if not wanted:
            return {}
        out = self.git.run(
            ["cat-file", "--batch-check"], input="".join(f"{sha}\n" for sha in wanted).encode()
        )
        sizes = {}
        for line in out.stdout.decode().splitlines():
            parts = line.split()
            if len(parts) == 3:
                sizes[parts[0]] = int(parts[2])
        return sizes

    def empty_tree(self) -> str:
        """The id of the empty tree in this repository's hash (it need not be stored)."""
        return self.git.out(["hash-object", "-t", "tree", "--stdin"], input=b"").strip()

    # -- files in a tree -------------------------------------------------

    def files_at(self, commit: str) -> dict[str, TreeEntry]:
        """Every file in a commit's tree, by path; read through cat-file with subtree
        listings memoised by tree id, so candidates that share most of their tree
        cost little more than their differences."""
        return dict(self._files_under(self.commit_tree_id(commit)))

    def _files_under(self, tree: str) -> dict[str, TreeEntry]:
        found = self._listings.get(tree)
        if found is None:
            found = {}
            for entry in self.read_tree(tree):
                if entry.is_tree:
                    for path, sub in self._files_under(entry.sha).items():
                        found[f"{entry.name}/{path}"] = sub
                elif entry.mode != "160000":  # submodules are not files
                    found[entry.name] = entry
            if len(self._listings) > CACHE:
                self._listings.clear()
            self._listings[tree] = found
        return found

    def entries_at(self, treeish: str, paths: list[str] | None = None) -> dict[str, TreeEntry]:
        """Files (blobs, links, submodules) in a commit or tree, by path; only ``paths`` when given."""
        if paths == []:
            return {}
        args = ["--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", treeish, "--", *(paths or [])]
        entries = {}
        for item in self.git.run(args).stdout.split(b"\0"):
            if not item:
                continue
            meta, _, path = item.partition(b"\t")
            mode, _kind, sha = meta.decode().split()
            name = path.decode("utf-8", "surrogateescape")
            entries[name] = TreeEntry(mode, name, sha)
        return entries

    def entry_at(self, tree: str, path: str) -> TreeEntry | None:
        entry: TreeEntry | None = None
        current = tree
        for part in path.split("/"):
            if entry is not None:
                if not entry.is_tree:
                    return None
                current = entry.sha
            entry = next((e for e in self.read_tree(current) if e.name == part), None)
            if entry is None:
                return None
        return entry

    def file_at(self, tree: str, path: str) -> bytes | None:
        entry = self.entry_at(tree, path)
        if entry is None or entry.is_tree:
            return None
        return self.read_blob(entry.sha)
