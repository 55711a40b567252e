"""Talking to a remote: one fetch of every harnessgit ref, one atomic leased push, and
the merges of what two clones wrote (notes and the evidence store) without loss.

Only git's own transport is used (`git fetch`, `git push`), so a remote is anything
git reaches: a bare repository on disk, ssh, https. The remote's refs are fetched
into a private namespace (`SYNC_NAMESPACE`), force-updated and pruned, so what is read
there is the remote as it was at this fetch and nothing older; those values are the
leases of the push that follows (`--force-with-lease=<ref>:<expected>`, `--atomic`): if anyone
pushed in between, nothing lands and the caller starts over.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harnessgit.errors import HarnessgitError
from harnessgit.readstore.git import git_says
from harnessgit.store.trees import Blob, note_path

if TYPE_CHECKING:
    from harnessgit.store.repo import Store

SYNC_NAMESPACE = "refs/harnessgit-sync/"
# What `sync` carries: live candidates, and everything under refs/harnessgit/ and
# refs/notes/harnessgit/ (archive, labels, pins, the evidence store, every notes ref).
# How `git push --porcelain` names a ref refused because someone moved it first.
LOST_RACE = ("stale info", "fetch first", "non-fast-forward")
# Refs harnessgit only ever creates, never moves: pushed by wildcard (`push_leased`).
CREATE_ONLY = ("refs/harnessgit/pins/", "refs/harnessgit/archive/")
SHARED = ("refs/heads/harnessgit/cand/", "refs/harnessgit/", "refs/notes/harnessgit/")


class RemoteFailed(HarnessgitError):
    """git could not reach or update the remote (not a lost race: that is retried)."""


@dataclass(frozen=True)
class RemoteUpdate:
    ref: str
    new: str | None  # None deletes the ref on the remote
    expected: str | None  # the remote's value at the fetch (None: it must not exist)

    def lease(self) -> str:
        return f"--force-with-lease={self.ref}:{self.expected or ''}"

    def refspec(self) -> str:
        return f"{self.new or ''}:{self.ref}"


def _namespace(remote: str) -> str:
    # A remote may be a name, a path or a URL: a digest makes it one safe ref component.
    return f"{SYNC_NAMESPACE}{hashlib.sha1(remote.encode()).hexdigest()[:16]}/"


def fetch_shared(store: Store, remote: str) -> dict[str, str]:
    """Every shared ref of ``remote`` (full name -> object id) as it is now, with its
    objects fetched. The namespace is kept between syncs and pruned, so a fetch writes
    only the refs that changed (with 20,000 candidates, most refs never change)."""
    space = _namespace(remote)
    refspecs = [f"+{prefix}*:{space}{prefix.removeprefix('refs/')}*" for prefix in SHARED]
    args = ["fetch", "--quiet", "--prune", "--no-tags", "--no-write-fetch-head", "--", remote, *refspecs]
    result = store.git.run(args, check=False)
    if result.returncode != 0:
        raise RemoteFailed(f"cannot fetch from {remote}: {git_says(result.stderr)}")
    return {
        "refs/" + ref.removeprefix(space): sha for ref, sha in store.refs.listing(space.rstrip("/")).items()
    }


def push_leased(store: Store, remote: str, updates: Iterable[RemoteUpdate]) -> bool:
    """Push every update in one atomic push, each leased on the value it expects.
    False when a lease failed (the remote moved since the fetch; nothing landed).

    Refs that are only ever created (pins, archive refs) go as one wildcard refspec per
    kind, not one refspec each: git matches every refspec and lease against every ref,
    so 5,000 single refspecs took 33-96 s to push, the wildcard 5 s. A non-forced
    create needs no lease: it fails as a non-fast-forward if the ref exists elsewhere."""
    updates = list(updates)
    if not updates:
        return True
    bulk = [u for u in updates if u.new and u.expected is None and u.ref.startswith(CREATE_ONLY)]
    created = {prefix for u in bulk for prefix in CREATE_ONLY if u.ref.startswith(prefix)}
    # Every other ref under those prefixes is the same on both sides (`sync.rules`).
    leased = [u for u in updates if u not in bulk]
    refspecs = [*(f"{prefix}*:{prefix}*" for prefix in sorted(created)), *(u.refspec() for u in leased)]
    args = ["push", "--atomic", "--porcelain", "--quiet", *(u.lease() for u in leased), "--", remote]
    result = store.git.run([*args, *refspecs], check=False)
    if result.returncode == 0:
        return True
    rejected = [
        line for line in result.stdout.decode("utf-8", "replace").splitlines() if line.startswith("!")
    ]
    if any(reason in line for line in rejected for reason in LOST_RACE):
        return False
    # The remote's own ref transaction failed on a lock another push holds, or on a ref
    # that moved after the leases were checked: git says so on stderr only.
    if any("atomic transaction failed" in line for line in rejected) and "cannot lock ref" in result.stderr:
        return False
    reasons = [line.rsplit("\t", 1)[-1] for line in rejected if "atomic push failed" not in line]
    raise RemoteFailed(f"cannot push to {remote}: {reasons[0] if reasons else git_says(result.stderr)}")


def union_notes(store: Store, ours: str, theirs: str, reason: str) -> str:
    """A notes commit holding every record of both notes commits: per annotated object
    the union of the two notes' lines (ours in their order, then theirs not in ours).
    Records are one canonical JSON line each whose order carries no meaning, so the
    union loses nothing and never conflicts (the `cat_sort_uniq` rule, in the store)."""
    if ours == theirs or store.history.is_ancestor(theirs, ours):
        return ours
    if store.history.is_ancestor(ours, theirs):
        return theirs
    root = store.objects.commit_info(ours).tree
    mine, other = _note_blobs(store, root), _note_blobs(store, store.objects.commit_info(theirs).tree)
    changes: dict[str, Blob | None] = {}
    for target, (_path, blob) in other.items():
        here = mine.get(target)
        if here is not None and here[1] == blob:
            continue
        text = store.objects.read_blob(blob)
        if here is not None:
            text = _union_lines(store.objects.read_blob(here[1]), text)
        changes[here[0] if here else note_path(target)] = Blob(store.objects.write_blob(text))
    tree = store.objects.edit_tree(root, changes) if changes else root
    return store.objects.write_commit(tree, [ours, theirs], f"harnessgit: {reason}")


def _note_blobs(store: Store, tree: str) -> dict[str, tuple[str, str]]:
    """annotated object -> (path, blob) in a notes tree of any fanout."""
    found: dict[str, tuple[str, str]] = {}
    for line in store.git.out(["ls-tree", "-r", "-z", tree]).split("\0"):
        if line:
            meta, _, path = line.partition("\t")
            found[path.replace("/", "")] = (path, meta.split()[2])
    return found


def _union_lines(ours: bytes, theirs: bytes) -> bytes:
    lines = [line for line in ours.splitlines() if line.strip()]
    seen = set(lines)
    lines += [line for line in theirs.splitlines() if line.strip() and line not in seen]
    return b"".join(line + b"\n" for line in dict.fromkeys(lines))


def union_kept(store: Store, ours: str | None, others: Iterable[str]) -> str | None:
    """An evidence-store commit whose tree holds every blob ``ours`` and ``others`` keep
    (paths are blob ids, so two trees never disagree on a path). One of the given
    commits when its tree holds them all already, so two clones that hold the same
    blobs end on the same commit instead of each writing its own."""
    commits = [commit for commit in (ours, *others) if commit]
    if not commits:
        return None
    trees = {commit: store.objects.commit_info(commit).tree for commit in commits}
    kept = _note_blobs(store, trees[commits[0]])
    changes: dict[str, Blob | None] = {}
    for commit in commits[1:]:
        for blob, (path, sha) in _note_blobs(store, trees[commit]).items():
            if blob not in kept:
                kept[blob] = (path, sha)
                changes[path] = Blob(sha)
    tree = store.objects.edit_tree(trees[commits[0]], changes) if changes else trees[commits[0]]
    for commit in (*commits[1:], commits[0]):  # the remote's first: what the others hold
        if trees[commit] == tree:
            return commit
    return store.objects.write_commit(tree, [], "harnessgit evidence store: keeps evidence blobs reachable")


def local_shared(store: Store) -> dict[str, str]:
    """This clone's refs under the shared prefixes (full name -> object id)."""
    return store.refs.listing(*(prefix.rstrip("/") for prefix in SHARED))


def notes_at(store: Store, notes_commit: str) -> dict[str, bytes]:
    """annotated object -> note text, as a notes commit holds them (not a ref's tip)."""
    blobs = _note_blobs(store, store.objects.commit_info(notes_commit).tree)
    return {target: store.objects.read_blob(blob) for target, (_path, blob) in blobs.items()}


def checked_out(store: Store) -> set[str]:
    """Branches checked out in some worktree of this repository (full ref names)."""
    listed = store.git.out(["worktree", "list", "--porcelain"])
    return {line.removeprefix("branch ") for line in listed.splitlines() if line.startswith("branch ")}
