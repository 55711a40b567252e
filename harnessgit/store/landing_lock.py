"""One landing at a time per base branch: a lock held from before the gate to the checkout.

Two `merge`s into one branch at once both gated (each recording a pass and spending its
attempt's alpha), then the slower one found the checkout moved under it and blamed the
user: "uncommitted changes ... commit or stash them first" (issue 28, defect 5). A
landing now takes the branch first, before anything is gated or written; the second is
refused at once, in one line that says another harnessgit merge holds it.

An advisory ``flock`` on a file per branch in ``<git common dir>/harnessgit/landing/``:
the kernel drops it when its holder exits, SIGKILL included, so a killed merge leaves
nothing to repair (the file stays, unlocked: named ``.flock``, so that nothing takes it
for one of git's lock files, which a killed git leaves). The holder writes its pid in
the file for the message. POSIX only, as the process groups of harnessgit/processes/ are.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from harnessgit.errors import ConcurrentUpdate

LANDING_DIR = Path("harnessgit", "landing")


class LandingBusy(ConcurrentUpdate):
    """Another harnessgit is landing on the branch: nothing was gated or written."""


def lock_path(common_dir: Path, branch: str) -> Path:
    # A branch name may hold slashes: a digest makes it one file name.
    return common_dir / LANDING_DIR / f"{hashlib.sha1(branch.encode()).hexdigest()[:16]}.flock"


@contextlib.contextmanager
def landing(common_dir: Path, branch: str, *, checked_out: bool) -> Iterator[None]:
    """Hold ``branch`` for one landing, or raise `LandingBusy` naming who holds it."""
    path = lock_path(common_dir, branch)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            who = (
                f"another harnessgit merge (pid {holder})" if holder.isdigit() else "another harnessgit merge"
            )
            where = " and updating this checkout" if checked_out else ""
            raise LandingBusy(
                f"{who} is landing on {branch}{where}: nothing was gated or written; rerun once it ends"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def _holder(fd: int) -> str:
    """The holder's pid as it wrote it. It writes right after taking the lock, so a
    loser that came in between finds the file empty: it looks again for a moment."""
    for _ in range(40):
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if holder:
            return holder
        time.sleep(0.005)
    return ""
