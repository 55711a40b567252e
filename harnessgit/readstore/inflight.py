"""What a writer leaves in the repository while it writes: ref lock files and the
store's transaction journal.

`Store.preflight` (every command that opens the store) rolls an interrupted
transaction forward from its journal and refuses, or for a reader warns about, a stale
lock (`harnessgit.store.recovery`, `harnessgit.store.locks`). A reader that opens the
repository without the store (a repeat `log --all-history`) asks `settled` first, and
goes through the store when anything is there.
"""

from __future__ import annotations

import os
from pathlib import Path

JOURNAL_DIR = Path("harnessgit", "journal")  # under the common git dir
PACKED_SCRATCH = "packed-refs.new"


def lock_files(common_dir: Path, git_dir: Path) -> list[Path]:
    """Every ref lock file now: one walk of refs/ (a few milliseconds for thousands of
    loose refs), packed-refs.lock and .new, HEAD.lock (per worktree) and reftable's locks."""
    found = []
    for root, _dirs, files in os.walk(common_dir / "refs"):
        found += [Path(root, name) for name in files if name.endswith(".lock")]
    packed = [common_dir / "packed-refs.lock", common_dir / PACKED_SCRATCH]
    for path in {*packed, common_dir / "HEAD.lock", git_dir / "HEAD.lock"}:
        if path.exists():
            found.append(path)
    reftable = common_dir / "reftable"
    if reftable.is_dir():
        found += [path for path in reftable.iterdir() if path.name.endswith(".lock")]
    return sorted(found)


def settled(common_dir: Path, git_dir: Path) -> bool:
    """No journal file (of any transaction, live or not) and no ref lock: nothing for
    `Store.preflight` to finish, refuse or warn about."""
    try:
        if os.listdir(common_dir / JOURNAL_DIR):
            return False
    except (FileNotFoundError, NotADirectoryError):
        pass
    return not lock_files(common_dir, git_dir)
