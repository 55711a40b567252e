"""The store: the only part of harnessgit that talks to git (`Store` and its parts)."""

from harnessgit.objects import ZERO, TreeEntry
from harnessgit.readstore.changes import RawChange, Side
from harnessgit.readstore.history import FileStat, History
from harnessgit.store.notes import Notes
from harnessgit.store.objectdb import Objects
from harnessgit.store.refs import Refs
from harnessgit.store.repo import CommitInfo, Store
from harnessgit.store.transaction import EVIDENCE_STORE, NOTES_PREFIX, PINS_PREFIX, Transaction
from harnessgit.store.trees import Blob
from harnessgit.store.worktree import Worktree

__all__ = [
    "EVIDENCE_STORE",
    "NOTES_PREFIX",
    "PINS_PREFIX",
    "ZERO",
    "Blob",
    "CommitInfo",
    "FileStat",
    "History",
    "Notes",
    "Objects",
    "RawChange",
    "Refs",
    "Side",
    "Store",
    "Transaction",
    "TreeEntry",
    "Worktree",
]
