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
from harnessgit.render import listing

# A lock older than this is stale. The longest a live writer was seen holding a ref lock:
# 24 ms, with 8 processes appending notes at once on 2 cores (issue 15; the figure and
# its script are in the report); git itself waits 100 ms for a ref lock
# (core.filesRefLockTimeout) and 1 s for packed-refs.lock (core.packedRefsTimeout)
# before it gives up. So a lock a second old is 40 times older than any live one seen,
# and one git itself would no longer wait for.
STALE_AFTER = 1.0

PACKED_SCRATCH = "packed-refs.new"

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
