"""The store as the history audit's checks read it: what git would answer about the
base branch's first-parent chain, answered from the chain the audit already walked.

`check_change` asks, for every commit, where cumulative growth adds up from: it
resolves the base branch, asks git for the merge base of the commit with it and
whether one commit is an ancestor of another, and lists the labels. On the chain those
answers are known (of two commits on it, the older is the ancestor and the merge
base), and the refs do not move during one read-only audit: four git processes a
commit, 900 of a 220-commit audit's 1,700, were these. The trailers then list the
commits a change brought: for a commit with one parent, itself. Collecting the change
asks for its raw diff against the first parent (the chain's `git log` record of it)
and the sizes of its blobs (read once for the whole audit): two more a commit; and
its blobs, which the audit has just read. And the SKILL.md lookup (`checks.collect`)
asks `git ls-tree` whether each folder above a changed file holds one, a process a
commit: a path's entry at a commit is its entry at an older commit of the chain with
every change the chain records for that path since applied (the chain's raw diffs are
of every path), so git is asked once per path, not once per commit.

`ChainStore` is the store with its ``history``, ``objects`` and ``refs`` parts wrapped:
each answers what it can from the chain and hands everything else to the real part.
"""

from __future__ import annotations

from typing import Any

from harnessgit.objects import TreeEntry
from harnessgit.store import RawChange, Store


class _Part:
    def __init__(self, part: Any) -> None:
        self._part = part

    def __getattr__(self, name: str) -> Any:
        return getattr(self._part, name)


class _History(_Part):
    def __init__(self, part: Any, objects: Any, chain: list[tuple[str, list[RawChange]]]) -> None:
        super().__init__(part)
        self._objects, self._chain = objects, chain
        # Newest first: a larger position is older, an ancestor of every smaller one.
        self._position = {commit: position for position, (commit, _changes) in enumerate(chain)}

    def diff_raw(self, old: str, new: str | None = None, *, cached: bool = False) -> list[RawChange]:
        """A commit's change against its first parent is the chain's record of it (the
        same ``-M`` raw diff, read by the one `git log`)."""
        position = self._position.get(new) if new is not None and not cached else None
        if position is not None and position + 1 < len(self._chain) and self._chain[position + 1][0] == old:
            return list(self._chain[position][1])
        result: list[RawChange] = self._part.diff_raw(old, new, cached=cached)
        return result

    def merge_base(self, a: str, b: str) -> str | None:
        first, second = self._position.get(a), self._position.get(b)
        if first is None or second is None:
            found: str | None = self._part.merge_base(a, b)
            return found
        return a if first >= second else b

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        first, second = self._position.get(ancestor), self._position.get(descendant)
        if first is None or second is None:
            return bool(self._part.is_ancestor(ancestor, descendant))
        return first >= second

    def commits_between(self, tip: str, stop: str | None, *, limit: int) -> list[str]:
        # A commit with one parent, from that parent: itself (what the trailers read).
        if stop is not None and limit >= 1 and list(self._objects.commit_info(tip).parents) == [stop]:
            return [tip]
        commits: list[str] = self._part.commits_between(tip, stop, limit=limit)
        return commits


class _Objects(_Part):
    def __init__(self, part: Any, sizes: dict[str, int], chain: list[tuple[str, list[RawChange]]]) -> None:
        super().__init__(part)
        self._sizes = sizes  # blob sizes the audit already read
        self._blobs: dict[str, bytes] = {}
        self._chain = chain
        self._position = {commit: position for position, (commit, _changes) in enumerate(chain)}
        # Path -> the chain positions (newest first: a larger one is older) whose change
        # names the path, or a path below it (it became or stopped being a folder).
        self._touched: dict[str, list[int]] = {}
        for position, (_commit, changes) in enumerate(chain):
            for change in changes:
                for path in _names(change):
                    for above in _and_folders(path):
                        positions = self._touched.setdefault(above, [])
                        if not positions or positions[-1] != position:
                            positions.append(position)
        self._known: dict[str, tuple[int, TreeEntry | None]] = {}  # path -> (position, entry there)

    def entries_at(self, treeish: str, paths: list[str] | None = None) -> dict[str, TreeEntry]:
        """A chain commit's entries at ``paths``: each from the last answer about it at
        an older commit with the changes since, git asked only for the rest."""
        position = self._position.get(treeish)
        if position is None or not paths:
            found: dict[str, TreeEntry] = self._part.entries_at(treeish, paths)
            return found
        answers: dict[str, TreeEntry | None] = {}
        for path in dict.fromkeys(paths):
            known = self._known.get(path)
            if (
                known is not None
                and known[0] >= position
                and (replayed := self._replay(path, *known, position))
            ):
                answers[path] = replayed[0]
        asked = [path for path in dict.fromkeys(paths) if path not in answers]
        if asked:
            listed = self._part.entries_at(treeish, asked)
            if any(name not in asked for name in listed):  # a folder of that name: git's
                return _in_git_order({**{p: e for p, e in answers.items() if e is not None}, **listed})
            answers |= {path: listed.get(path) for path in asked}
        for path, answer in answers.items():
            self._known[path] = (position, answer)
        return _in_git_order({path: answer for path, answer in answers.items() if answer is not None})

    def _replay(
        self, path: str, since: int, entry: TreeEntry | None, position: int
    ) -> tuple[TreeEntry | None] | None:
        """``path``'s entry at ``position`` from its ``entry`` at the older ``since``, or
        None when a change below it (a folder of that name) makes it git's to answer."""
        for at in reversed(self._touched.get(path, [])):  # oldest first
            if not position <= at < since:
                continue
            changes = [change for change in self._chain[at][1] if path in _names(change)]
            if any(name.startswith(path + "/") for c in self._chain[at][1] for name in _names(c)):
                return None  # the path is, or was, a folder here
            # A change whose new side is the path wins over one that removes it (a
            # rename away and a new file of the same name in one commit).
            added = [change.new for change in changes if change.path == path and change.new is not None]
            entry = TreeEntry(added[0].mode, path, added[0].sha) if added else None
        return (entry,)

    def object_sizes(self, shas: list[str]) -> dict[str, int]:
        known = {sha: self._sizes[sha] for sha in shas if sha in self._sizes}
        if len(known) < len(set(shas)):
            known |= self._part.object_sizes([sha for sha in shas if sha not in self._sizes])
        return known

    def read_blobs(self, shas: list[str]) -> dict[str, bytes]:
        """The audit reads a commit's blobs for their sizes and sections, then the checks
        read the same ones: the last batch is kept for them."""
        if not all(sha in self._blobs for sha in shas):
            self._blobs = self._part.read_blobs(shas)
        return {sha: self._blobs[sha] for sha in shas if sha in self._blobs}


class _Refs(_Part):
    def __init__(self, part: Any) -> None:
        super().__init__(part)
        self._resolved: dict[str, str] = {}
        self._listed: dict[tuple[str, ...], dict[str, str]] = {}

    def resolve(self, rev: str) -> str:
        if rev not in self._resolved:
            self._resolved[rev] = self._part.resolve(rev)
        return self._resolved[rev]

    def listing(self, *prefixes: str) -> dict[str, str]:
        if prefixes not in self._listed:
            self._listed[prefixes] = self._part.listing(*prefixes)
        return dict(self._listed[prefixes])


class ChainStore(_Part):
    """``store``, with the chain's ancestry and diffs, the audit's blobs and the refs
    read once (see the module)."""

    def __init__(self, store: Store, chain: list[tuple[str, list[RawChange]]], sizes: dict[str, int]) -> None:
        super().__init__(store)
        self.objects = _Objects(store.objects, sizes, chain)
        self.history = _History(store.history, store.objects, chain)
        self.refs = _Refs(store.refs)


def _and_folders(path: str) -> list[str]:
    """``path`` and every folder above it (``a/b/c``: ``a/b/c``, ``a/b``, ``a``)."""
    parts = path.split("/")
    return ["/".join(parts[:end]) for end in range(len(parts), 0, -1)]


def _in_git_order(entries: dict[str, TreeEntry]) -> dict[str, TreeEntry]:
    """As `git ls-tree -r` lists them: by the paths' bytes."""
    return dict(sorted(entries.items(), key=lambda item: item[0].encode("utf-8", "surrogateescape")))


def _names(change: RawChange) -> set[str]:
    return {change.path} if change.old_path is None else {change.path, change.old_path}
