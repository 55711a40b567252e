"""The store: harnessgit's one door to git, as the parts it is.

It speaks in object ids, models and records, through five parts reached as attributes,
each with few doors (tests/store/test_parts.py keeps them few):

- ``store.objects`` (`Objects`): blobs, trees and commits, read through one persistent
  cat-file and written straight into the object database, so building a candidate never
  touches the user's index, working tree or HEAD; the files a commit holds;
- ``store.refs`` (`Refs`): ref values, revisions resolved, and every write, one
  ``git update-ref --stdin`` transaction at a time (`Refs.commit`), with the staging
  overlay behind the same interface (`Refs.staging`, `direct`, `flush`);
- ``store.notes`` (`Notes`): the records on a notes ref;
- ``store.history`` (`History`): ancestry, first-parent chains and diffs;
- ``store.worktree`` (`Worktree`): the user's index and working tree, and trees written
  out or patched off to the side.

The store itself keeps what is about the repository as a whole: where it is, who acts
in it (`identity`), its git configuration, the preflight every command runs, and closing
the long-lived git processes. A function that needs one part takes that part.
"""

from __future__ import annotations

import logging
from pathlib import Path

from harnessgit.objects import MODE_TREE, CommitInfo
from harnessgit.readstore import locate
from harnessgit.readstore.git import Git
from harnessgit.readstore.history import History
from harnessgit.store.identity import Clock, Identity, local_now
from harnessgit.store.locks import find_locks, stale_error
from harnessgit.store.notes import Notes
from harnessgit.store.notes_commits import NoteTexts
from harnessgit.store.objectdb import Objects
from harnessgit.store.recovery import recover
from harnessgit.store.refs import Refs
from harnessgit.store.transaction import Transaction
from harnessgit.store.trees import Blob
from harnessgit.store.worktree import Worktree

log = logging.getLogger("harnessgit")


class Store:
    def __init__(
        self,
        root: Path,
        git_dir: Path,
        objects_dir: Path,
        *,
        clock: Clock = local_now,
        common_dir: Path | None = None,
    ) -> None:
        self.root = root
        self.git_dir = git_dir
        self.common_dir = common_dir or git_dir  # refs, shared by every worktree
        self.clock = clock
        self.git = Git(root)
        self._identity = Identity(self.git, clock)
        self.objects = Objects(self.git, objects_dir, self._identity)
        texts = NoteTexts(self.objects)
        self.refs = Refs(self.git, root, git_dir, self.common_dir, texts)
        self.journal_dir = self.refs.journal_dir
        self.notes = Notes(self.git, self.refs, texts)
        self.history = History(self.git)
        self.worktree = Worktree(self.git, root, self.objects)

    @classmethod
    def discover(
        cls,
        path: Path | None = None,
        *,
        clock: Clock = local_now,
        preflight: bool = True,
        writes: bool = True,
    ) -> Store:
        """The store of the repository at ``path``; with ``preflight`` (every command but
        `doctor` and `check`), interrupted transactions are rolled forward and stale locks
        refused first, or, for a command that only reads (``writes=False``), warned about."""
        store = cls._open(path, clock)
        if preflight:
            try:
                store.preflight(writes=writes)
            except BaseException:
                store.close()
                raise
        return store

    @classmethod
    def _open(cls, path: Path | None, clock: Clock) -> Store:
        where = locate(path)
        return cls(where.root, where.git_dir, where.objects_dir, clock=clock, common_dir=where.common_dir)

    def preflight(self, *, writes: bool = True) -> None:
        """What every command does on opening the store, cheaply (one directory listing,
        one walk of refs/): finish or drop transactions a kill interrupted, then refuse
        to go on past a stale lock, which would fail the command's writes at the end. A
        command that only reads (`log`, `show`, `review`...) is not stopped by a lock
        that blocks only writes: it warns, as git's own readers ignore ref locks."""
        recover(self.refs)
        stale = [lock for lock in find_locks(self.common_dir, self.git_dir) if lock.stale]
        if stale and writes:
            raise stale_error(stale, self.root)
        if stale:
            log.warning("%s", stale_error(stale, self.root))

    def identity(self) -> str:
        """Who is acting: the committer, as ``Name <email>``."""
        return self._identity.person()

    def config_values(self, key: str) -> list[str]:
        result = self.git.run(["config", "--get-all", key], check=False)
        return result.stdout.decode().splitlines()

    def config_add(self, key: str, value: str) -> None:
        self.git.run(["config", "--add", key, value])

    def close(self) -> None:
        self.objects.close()
        self.refs.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["MODE_TREE", "Blob", "CommitInfo", "Store", "Transaction"]
