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
Everything else goes to the store.
"""

from __future__ import annotations

from typing import Any

from harnessgit.store import RawChange, Store


class ChainStore:
    """``store``, with the chain's ancestry and the refs read once (see the module)."""

    def __init__(self, store: Store, chain: list[tuple[str, list[RawChange]]], sizes: dict[str, int]) -> None:
        self._store = store
        self._chain = chain
        # Newest first: a larger position is older, an ancestor of every smaller one.
        self._position = {commit: position for position, (commit, _changes) in enumerate(chain)}
        self._sizes = sizes  # blob sizes the audit already read
        self._blobs: dict[str, bytes] = {}
        self._resolved: dict[str, str] = {}
        self._refs: dict[tuple[str, ...], dict[str, str]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def diff_raw(self, old: str, new: str | None = None, *, cached: bool = False) -> list[RawChange]:
        """A commit's change against its first parent is the chain's record of it (the
        same ``-M`` raw diff, read by the one `git log`)."""
        position = self._position.get(new) if new is not None and not cached else None
        if position is not None and position + 1 < len(self._chain) and self._chain[position + 1][0] == old:
            return list(self._chain[position][1])
        return self._store.diff_raw(old, new, cached=cached)

    def object_sizes(self, shas: list[str]) -> dict[str, int]:
        known = {sha: self._sizes[sha] for sha in shas if sha in self._sizes}
        if len(known) < len(set(shas)):
            known |= self._store.object_sizes([sha for sha in shas if sha not in self._sizes])
        return known

    def read_blobs(self, shas: list[str]) -> dict[str, bytes]:
        """The audit reads a commit's blobs for their sizes and sections, then the checks
        read the same ones: the last batch is kept for them."""
        if not all(sha in self._blobs for sha in shas):
            self._blobs = self._store.read_blobs(shas)
        return {sha: self._blobs[sha] for sha in shas if sha in self._blobs}

    def merge_base(self, a: str, b: str) -> str | None:
        first, second = self._position.get(a), self._position.get(b)
        if first is None or second is None:
            return self._store.merge_base(a, b)
        return a if first >= second else b

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        first, second = self._position.get(ancestor), self._position.get(descendant)
        if first is None or second is None:
            return self._store.is_ancestor(ancestor, descendant)
        return first >= second

    def commits_between(self, tip: str, stop: str | None, *, limit: int) -> list[str]:
        # A commit with one parent, from that parent: itself (what the trailers read).
        if stop is not None and limit >= 1 and list(self._store.commit_info(tip).parents) == [stop]:
            return [tip]
        return self._store.commits_between(tip, stop, limit=limit)

    def resolve_commit(self, rev: str) -> str:
        if rev not in self._resolved:
            self._resolved[rev] = self._store.resolve_commit(rev)
        return self._resolved[rev]

    def list_refs(self, *prefixes: str) -> dict[str, str]:
        if prefixes not in self._refs:
            self._refs[prefixes] = self._store.list_refs(*prefixes)
        return dict(self._refs[prefixes])
