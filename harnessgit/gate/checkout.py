"""A checked-out base branch follows a landing, and a landing a kill interrupted is finished.

`merge` and `revert --no-gate` move the base branch in one ref transaction (the merge
commit, its record, its pins and the candidate's retirement: all or nothing), then
bring a checked-out branch's index and files along, as a fast-forward would. Git has no
transaction that spans refs and the index, so a SIGKILL between the two leaves HEAD's
branch at the merge commit M while the index and files still hold M's first parent P
for the paths M changed: `git status` shows the reverse of the landed edit staged, and
`git commit` would undo the merge (issue 15, defect 3).

That state is recognised from git alone: M is a harnessgit landing (a gate record or
an override on it), the index holds P's entry for some path M changed, and every such
path holds P's or M's content. Rerunning the command (or `harnessgit doctor`) finishes
it through the same steps as an uninterrupted run; finishing replaces only content
that P holds, so it loses nothing even if the user put it there by hand. Anything else
in those paths is the user's: refused, left alone.

The order stays branch first. The ref transaction is the commit point: its
compare-and-swap can lose to a concurrent merge, and a working tree moved first would
then need undoing (itself killable); a kill after an index-first step would leave the
candidate's edit staged on the old tip, where rerunning `merge` reads it as a local
edit. The window between the two steps is kept small and shut to every catchable
signal (`deferred_signals`): Ctrl-C, a CI cancel's SIGTERM or a hang-up waits until
the working tree has followed, so only SIGKILL or a crash can split them, and that is
what rerunning finishes.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from harnessgit import layout
from harnessgit.candidates.log import landing
from harnessgit.errors import GitFailed, HarnessgitError
from harnessgit.objects import MODE_EXEC, MODE_FILE, MODE_GITLINK, TreeEntry
from harnessgit.records import GateRecord, OverrideRecord
from harnessgit.render import listing, short
from harnessgit.store import Objects, Store
from harnessgit.store.locks import IndexLock, index_lock

Settled = dict[str, TreeEntry | None]  # path -> what the merge commit holds there (None: deleted)

KILL_AT = "HARNESSGIT_TEST_KILL_AT"


def kill_point(step: str) -> None:
    """Test-only: with HARNESSGIT_TEST_KILL_AT=<step> (``after-branch-move``,
    ``after-stage``), SIGKILL this process at that step, so that a test reproduces a
    kill between two steps exactly; ``<step>:SIGTERM`` (or ``:SIGINT``) sends that
    signal instead. Never set it outside tests."""
    wanted, _, name = os.environ.get(KILL_AT, "").partition(":")
    if wanted == step:
        os.kill(os.getpid(), getattr(signal, name or "SIGKILL"))


@dataclass(frozen=True)
class UnfinishedCheckout:
    """A landing on the checked-out branch whose index and files did not follow."""

    branch: str
    merge: str  # the branch tip: the merge commit that landed
    previous: str  # its first parent, which the index still holds
    target: str  # its second parent: what it landed
    candidate: str | None
    action: str  # "merge" (gated) or "revert" (revert --no-gate, an ungated override)
    changed: list[str]  # every path the landing changed
    behind: list[str]  # paths whose index entry is still the previous tip's
    edited: list[str]  # paths holding neither side's content: the user's; finishing is refused
    rerun: str  # the command that finishes it

    @property
    def label(self) -> str:
        return self.candidate or short(self.target)


def describe(unfinished: UnfinishedCheckout) -> str:
    """One sentence: which landing stopped short, and what the index still holds."""
    what = "merge of" if unfinished.action == "merge" else "ungated revert"
    return (
        f"the {what} {unfinished.label} landed on {unfinished.branch} as {short(unfinished.merge)}, "
        f"but a kill stopped its working tree: the index still holds {short(unfinished.previous)}'s "
        f"{listing(unfinished.behind)}"
    )


def finished_line(unfinished: UnfinishedCheckout) -> str:
    return (
        f"finished the interrupted merge of {unfinished.label}: the working tree now holds "
        f"{unfinished.branch}'s tip {short(unfinished.merge)} ({listing(unfinished.changed)})"
    )


def unfinished_checkout(store: Store) -> UnfinishedCheckout | None:
    """The landing on HEAD's branch that a kill stopped before the index and files
    followed, or None. For `harnessgit doctor` as well as for the commands that land."""
    branch = store.refs.head_branch()
    tip = store.refs.value(layout.branch_ref(branch)) if branch else None
    if branch is None or tip is None:
        return None
    info = store.objects.commit_info(tip)
    if len(info.parents) != 2:
        return None
    landed = landing(store.notes.records_on(layout.NOTES_GATE, tip), tip)
    records: list[GateRecord | OverrideRecord] = [
        *landed.gates,
        *(r for r in landed.overrides if r.candidate),
    ]
    if not records:
        return None  # a merge made with git: git moved the working tree itself
    previous, target = info.parents
    paths = _inspect(store, previous, tip)
    if not paths.at_old:
        return None
    action = "merge" if landed.gates else "revert"
    candidate = records[0].candidate
    return UnfinishedCheckout(
        branch=branch,
        merge=tip,
        previous=previous,
        target=target,
        candidate=candidate,
        action=action,
        changed=paths.changed,
        behind=paths.at_old,
        edited=paths.edited,
        rerun=_rerun(store.objects, action, candidate or target, target),
    )


def finish_checkout(store: Store, unfinished: UnfinishedCheckout) -> None:
    """Bring the index and files of an interrupted landing to its merge commit, as the
    landing would have; refused, nothing touched, when a path it changed was edited since
    (read again here: the description may be old)."""
    branch, merge = unfinished.branch, unfinished.merge
    if store.refs.head_branch() != branch or store.refs.value(layout.branch_ref(branch)) != merge:
        raise HarnessgitError(f"{branch} is no longer checked out at {short(merge)}: nothing to finish there")
    paths = _inspect(store, unfinished.previous, merge)
    if paths.edited:
        them = "it" if len(paths.edited) == 1 else "them"
        raise HarnessgitError(
            f"{describe(unfinished)}, and {listing(paths.edited)} changed since (holding neither "
            f"{short(merge)}'s content nor {short(unfinished.previous)}'s): nothing was touched; "
            f"set your changes to {them} aside (`git diff HEAD -- {' '.join(paths.edited[:3])}`), "
            "then rerun"
        )
    if paths.at_old:
        with deferred_signals():
            _follow(store, branch, unfinished.previous, merge, paths.settled)


def refuse_unfinished(store: Store) -> None:
    """Refuse to land anything on a branch whose last landing is unfinished: moving on
    would carry its stale index entries along, and they could no longer be told apart."""
    pending = unfinished_checkout(store)
    if pending is not None:
        raise HarnessgitError(
            f"{describe(pending)}: finish it first (`{pending.rerun}`), or, if you staged that undo "
            "on purpose, commit it first"
        )


def refuse_locked_index(store: Store, branch: str) -> None:
    """Refuse to move a checked-out branch while its index is locked: checked before
    anything is written (issue 28, defect 2: a landing that checked only after the ref
    moved left the branch moved, its index not, and the reverse of the edit staged)."""
    held = index_lock(store.git_dir, store.root)
    if held is not None:
        raise HarnessgitError(f"cannot move {branch} under its checkout: {_locked(store, held)}, and rerun")


def checkout_ready(store: Store, branch: str, old: str, new: str) -> Settled:
    """Whether a checked-out base branch can move from ``old`` to ``new`` under the
    working tree: each path the merge changes must hold, in the index and on disk,
    what ``old`` holds or what the merge writes. A file that already holds what the
    merge writes (the README's flow: edit, propose, merge) is staged as a fast-forward
    would; any other local edit to such a path would be lost: refused, before anything
    is evaluated or written."""
    if store.refs.head_branch() != branch:
        return {}
    refuse_unfinished(store)
    refuse_locked_index(store, branch)
    unmerged = store.worktree.unmerged_paths()
    if unmerged:
        raise HarnessgitError(
            f"{branch} is checked out in the middle of a conflicted merge ({listing(unmerged)}): "
            "resolve or abort it first"
        )
    paths = _inspect(store, old, new)
    if paths.edited:
        raise HarnessgitError(
            f"{branch} is checked out with uncommitted changes to {listing(paths.edited)}, "
            "which the merge changes differently: commit or stash them first"
        )
    return paths.settled


def update_worktree(store: Store, branch: str, old: str, new: str, settled: Settled) -> bool:
    """Bring a checked-out base branch's index and files along, like a fast-forward
    (after the branch moved, inside `deferred_signals`)."""
    if store.refs.head_branch() != branch:
        return False
    kill_point("after-branch-move")
    _follow(store, branch, old, new, settled)
    return True


def _follow(store: Store, branch: str, old: str, new: str, settled: Settled) -> None:
    """Stage what the working tree holds already, then move the rest from ``old`` to ``new``."""
    held, unmerged = index_lock(store.git_dir, store.root), store.worktree.unmerged_paths()
    if held is not None or unmerged:
        why = (
            _locked(store, held)
            if held is not None
            else f"the index has conflicts in {listing(unmerged)}; resolve them"
        )
        raise HarnessgitError(f"{branch}'s working tree cannot follow {short(new)} now: {why}, and rerun")
    try:
        store.worktree.stage(settled)
        kill_point("after-stage")
        store.worktree.fast_forward_checkout(old, new)
    except GitFailed as exc:
        reason = exc.stderr.strip().splitlines()[0] if exc.stderr.strip() else str(exc)
        raise HarnessgitError(
            f"{branch} is at {short(new)}, but its working tree could not follow ({reason}): "
            "rerun the command to finish it"
        ) from None


def _locked(store: Store, held: IndexLock) -> str:
    """Who holds the index lock, and what to do: remove a killed git's, wait for a live one."""
    if held.stale:
        return f"{held.why(store.root)}; remove it with `harnessgit doctor --fix`"
    if held.holders is None and held.lock.stale:
        return f"{held.why(store.root)}; once no git runs here, remove it"
    return f"{held.why(store.root)}; wait until that git ends"


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP wait until the block ends, then act as they would have.

    Blocked in this thread (git processes started meanwhile inherit the mask, so a
    Ctrl-C at the terminal stops neither them nor us mid-step) and caught by a handler
    that only notes them, for a signal delivered to another thread.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    caught: list[int] = []
    handlers = {
        sig: handler
        for name in ("SIGINT", "SIGTERM", "SIGHUP")
        if (sig := getattr(signal, name, None)) is not None and (handler := signal.getsignal(sig)) is not None
    }
    for sig in handlers:
        signal.signal(sig, lambda signum, _frame: caught.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, handlers)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # pending ones reach the handler above now
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            signal.raise_signal(sig)


@dataclass(frozen=True)
class _Paths:
    """Where each path a move from ``old`` to ``new`` changes stands in the index and on disk."""

    changed: list[str]
    at_old: list[str]  # the index holds old's entry (the file old's or new's content)
    settled: Settled  # the file holds new's content, the index old's: to stage as it is
    edited: list[str]  # anything else: the user's


def _inspect(store: Store, old: str, new: str) -> _Paths:
    changed = sorted(store.history.changed_paths(old, new))
    before, after = store.objects.entries_at(old, changed), store.objects.entries_at(new, changed)
    index, disk = store.worktree.index_entries(changed), store.worktree.disk_entries(changed)
    at_old, edited, settled = [], [], {}
    for path in changed:
        was, will, staged = before.get(path), after.get(path), index.get(path)
        staged_old, staged_new = _same(staged, was), _same(staged, will)
        if any(e is not None and e.mode == MODE_GITLINK for e in (was, will)):
            on_disk_new = on_disk_old = True  # a submodule's files are not ours to compare
        else:
            on_disk_new, on_disk_old = _holds(disk.get(path), will), _holds(disk.get(path), was)
        if staged_old and not staged_new:
            at_old.append(path)
        if not (staged_old or staged_new) or not (on_disk_old or on_disk_new):
            edited.append(path)
        elif staged_old and not staged_new and on_disk_new and not on_disk_old:
            settled[path] = will
    return _Paths(changed, at_old, settled, edited)


def _same(staged: TreeEntry | None, entry: TreeEntry | None) -> bool:
    if staged is None or entry is None:
        return staged is entry
    return (staged.mode, staged.sha) == (entry.mode, entry.sha)


def _holds(disk: TreeEntry | None, entry: TreeEntry | None) -> bool:
    """Whether a path on disk holds a tree entry's content (a file's exec bit aside)."""
    if disk is None or entry is None:
        return disk is entry
    if disk.mode == MODE_FILE:
        return entry.mode in (MODE_FILE, MODE_EXEC) and disk.sha == entry.sha
    return (disk.mode, disk.sha) == (entry.mode, entry.sha)


_REVERTS = re.compile(r"^This reverts ([0-9a-f]{40})\.$", re.MULTILINE)


def _rerun(objects: Objects, action: str, label: str, target: str) -> str:
    if action == "merge":
        return f"harnessgit merge {label}"
    reverted = _REVERTS.search(objects.commit_info(target).message)
    return f"harnessgit revert --no-gate {short(reverted[1])} --reason …" if reverted else "harnessgit doctor"
