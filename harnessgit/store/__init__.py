"""The store: the only part of harnessgit that talks to git."""

from harnessgit.objects import ZERO, TreeEntry
from harnessgit.store.changes import RawChange, Side
from harnessgit.store.history import FileStat
from harnessgit.store.repo import CommitInfo, Store
from harnessgit.store.transaction import EVIDENCE_STORE, NOTES_PREFIX, PINS_PREFIX, Transaction
from harnessgit.store.trees import Blob

__all__ = [
    "EVIDENCE_STORE",
    "NOTES_PREFIX",
    "PINS_PREFIX",
    "ZERO",
    "Blob",
    "CommitInfo",
    "FileStat",
    "RawChange",
    "Side",
    "Store",
    "Transaction",
    "TreeEntry",
]
