"""Lock files git left behind: found in one cheap scan, judged stale by their age.

git takes ``<ref>.lock`` for every ref a transaction moves (and ``packed-refs.lock``
with its scratch file ``packed-refs.new`` when it deletes one, ``HEAD.lock`` when the
branch HEAD points at moves) and removes them when the transaction ends, a few
milliseconds later. A git killed inside that window (SIGKILL on its process group: a CI
cancel, a container stop) leaves them, and every later write to those refs fails with
"Unable to create '...lock': File exists" ("unable to create file .../packed-refs.new:
File exists" for the scratch file, which acts as a lock too).
A lock file names no owner, so its age (mtime: git writes it right after creating it)
is what tells a live writer from a dead one.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from harnessgit.errors import HarnessgitError
from harnessgit.readstore.inflight import PACKED_SCRATCH as PACKED_SCRATCH
from harnessgit.readstore.inflight import lock_files
from harnessgit.render import listing

# A lock older than this is stale. The longest a live writer was seen holding a ref lock:
# 24 ms, with 8 processes appending notes at once on 2 cores (issue 15; the figure and
# its script are in the report); git itself waits 100 ms for a ref lock
# (core.filesRefLockTimeout) and 1 s for packed-refs.lock (core.packedRefsTimeout)
# before it gives up. So a lock a second old is 40 times older than any live one seen,
# and one git itself would no longer wait for.
STALE_AFTER = 1.0


# git's messages for a lock it could not take ("File exists": another process holds it).
_LOCKED = re.compile(
    r"Unable to create '(?P<lock>[^']+\.lock)': File exists"
    r"|unable to create file (?P<scratch>\S+/packed-refs\.new): File exists"
)


class StaleLocks(HarnessgitError):
    """Lock files left by a killed git block every write to their refs."""


@dataclass(frozen=True)
class Lock:
    path: Path
    age: float  # seconds since git last wrote it

    @property
    def stale(self) -> bool:
        return self.age >= STALE_AFTER


def age_text(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"


def read_lock(path: Path, now: float | None = None) -> Lock | None:
    """The lock at ``path`` with its age, or None once it is gone."""
    try:
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        return None
    return Lock(path, max(0.0, (time.time() if now is None else now) - mtime))


def find_locks(common_dir: Path, git_dir: Path) -> list[Lock]:
    now = time.time()
    return [lock for path in lock_files(common_dir, git_dir) if (lock := read_lock(path, now))]


def locked_by(stderr: str) -> list[Path]:
    """The lock files git's error names as held by someone else."""
    return [Path(match["lock"] or match["scratch"]) for match in _LOCKED.finditer(stderr)]


def stale_error(locks: list[Lock], root: Path) -> StaleLocks:
    """One line: which locks, how old, and the fix."""
    named = [f"{_shown(lock.path, root)} ({age_text(lock.age)} old)" for lock in locks]
    if len(locks) == 1:
        return StaleLocks(
            f"a stale lock left by a killed git blocks every write to its ref: {named[0]}; "
            "remove it with `harnessgit doctor --fix`"
        )
    return StaleLocks(
        f"{len(locks)} stale locks left by a killed git block every write to their refs: "
        f"{listing(named)}; remove them with `harnessgit doctor --fix`"
    )


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


# -- the index lock --------------------------------------------------------------

INDEX_LOCK = "index.lock"
_PROC = Path("/proc")


@dataclass(frozen=True)
class IndexLock:
    """``index.lock`` of a checkout, with the git processes running in that checkout.

    Its age alone cannot tell a killed git's from a live one's: `git commit` holds it
    while the commit message editor is open, for minutes. A git that holds it runs in
    the checkout (its working directory is the checkout or inside its git directory),
    so a lock older than `STALE_AFTER` while no git runs there is a killed git's
    (issue 28, defect 2). ``holders`` is None where processes cannot be listed (no
    /proc): then nothing calls it stale."""

    lock: Lock
    holders: tuple[int, ...] | None  # pids of the git processes running in the checkout

    @property
    def stale(self) -> bool:
        return self.lock.stale and self.holders == ()

    def why(self, root: Path) -> str:
        """What holds it, for a message that says what to do."""
        shown = f"{_shown(self.lock.path, root)} ({age_text(self.lock.age)} old)"
        if self.stale:
            return f"{shown} was left by a killed git (no git runs in this checkout)"
        if self.holders:
            return f"{shown} is held by a running git (pid {', '.join(map(str, self.holders))})"
        if not self.lock.stale:
            return f"{shown} was taken just now"
        return f"{shown} exists, and whether a git still holds it cannot be told here"


def index_lock(git_dir: Path, root: Path) -> IndexLock | None:
    """The checkout's index lock now, or None when there is none."""
    lock = read_lock(git_dir / INDEX_LOCK)
    if lock is None:
        return None
    return IndexLock(lock, git_processes_in((root, git_dir)))


def git_processes_in(places: tuple[Path, ...]) -> tuple[int, ...] | None:
    """The git processes (Linux: read from /proc) whose working directory is one of
    ``places`` or inside it, but this process's own (the store's cat-file and ref
    session); None where processes cannot be listed. A process of another user's,
    whose directory cannot be read, is not counted."""
    if not _PROC.is_dir():
        return None
    wanted = [place.resolve() for place in places]
    found = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if not (entry / "comm").read_text().startswith("git"):
                continue
            stat = (entry / "stat").read_bytes()
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:  # gone meanwhile, or not ours to read
            continue
        # The command name may hold spaces and parentheses: the parent's pid is the
        # second field after its last ")".
        if int(stat[stat.rfind(b")") + 2 :].split()[1]) == os.getpid():
            continue
        if any(cwd == place or place in cwd.parents for place in wanted):
            found.append(int(entry.name))
    return tuple(sorted(found))
