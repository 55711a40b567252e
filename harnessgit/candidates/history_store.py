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
its blobs, which the audit has just read.

`ChainStore` is the store with its ``history``, ``objects`` and ``refs`` parts wrapped:
each answers what it can from the chain and hands everything else to the real part.
"""

from __future__ import annotations

from typing import Any

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
    def __init__(self, part: Any, sizes: dict[str, int]) -> None:
        super().__init__(part)
        self._sizes = sizes  # blob sizes the audit already read
        self._blobs: dict[str, bytes] = {}

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
        self.objects = _Objects(store.objects, sizes)
        self.history = _History(store.history, store.objects, chain)
        self.refs = _Refs(store.refs)
