"""Temporary directories that name their owner (`ScratchDir`, made in
`harnessgit.processes.scratch_dir`), and the sweep of those left behind.

Every scratch directory (``$TMPDIR/harnessgit-<kind>-XXXXXXXX``) holds a marker file
naming the harnessgit process that made it (`Owner`). It is removed on every exit path
harnessgit sees: a normal end, an error, Ctrl-C, SIGTERM. Only SIGKILL (or a power cut)
leaves it, and `sweep` removes those later: a directory whose owner is gone, and a
directory from before markers (``harnessgit-eval-``, ``harnessgit-tree-``) that no one
has touched for `MAX_AGE`.

The marker is written first and removed last, so a directory of a kind harnessgit knows
is without one only for the moment it is made or the moment it is gone: one a kill left
in that moment, untouched for `CUT_SHORT_AGE`, is swept too. (Before issue 28 the owner
removed its directory in the file system's order, the marker often first: 2 of 110
kills left directories that no sweep would remove.) It also kills evaluators whose harnessgit is gone (their
``HARNESSGIT_RUN`` names it: `harnessgit.processes.group`). Directories of other
hosts or PID namespaces sharing the temporary directory are left alone, and so is
anything without a marker that harnessgit does not know, such as `harnessgit demo`'s
directory.

`eval` sweeps before its first batch. A repair command lists first and acts on what it
listed: `stale_temp_dirs` then `remove_temp_dirs`, `stale_processes` then
`kill_processes`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harnessgit.processes.group import RUN_VARIABLE, family, processes, token_owner
from harnessgit.processes.owner import Owner
from harnessgit.processes.scratch_dir import MARKER as MARKER
from harnessgit.processes.scratch_dir import PREFIX as PREFIX
from harnessgit.processes.scratch_dir import ScratchDir as ScratchDir
from harnessgit.processes.scratch_dir import remove_dir

# Directories of harnessgit versions that wrote no marker: their owner cannot be
# checked, so only their age says they are abandoned. An evaluation touches its
# directories when it starts a batch; a day is far past any batch's timeout.
LEGACY_PREFIXES = ("harnessgit-eval-", "harnessgit-tree-")
MAX_AGE = 24 * 3600.0
# The kinds that always had a marker: without one, such a directory was being made or
# removed when a kill came (either takes milliseconds), or it is an empty one of any kind.
MARKED_PREFIXES = ("harnessgit-index-", "harnessgit-merge-", "harnessgit-server-")
CUT_SHORT_AGE = 60.0


@dataclass(frozen=True)
class StaleDir:
    path: Path
    owner: str  # "pid 4242 on host-1 (gone)", or "no marker" for a legacy directory
    age: float  # seconds since it was last modified


@dataclass(frozen=True)
class StaleProcess:
    pid: int
    owner: str  # the harnessgit process that started it and is gone


@dataclass(frozen=True)
class Sweep:
    removed: list[StaleDir] = field(default_factory=list)
    failed: list[tuple[StaleDir, str]] = field(default_factory=list)  # (directory, why)
    killed: list[StaleProcess] = field(default_factory=list)


def stale_temp_dirs(
    tmpdir: Path | None = None, *, max_age: float = MAX_AGE, now: float | None = None
) -> list[StaleDir]:
    """The scratch directories in ``tmpdir`` (default: Python's temporary directory)
    left by a harnessgit that is gone; without a marker, those older than ``max_age``."""
    root = Path(tmpdir or tempfile.gettempdir())
    here = Owner.current()
    now = time.time() if now is None else now
    try:
        entries = sorted(entry for entry in os.listdir(root) if entry.startswith(PREFIX))
    except OSError:
        return []
    stale = []
    for entry in entries:
        path = root / entry
        try:
            info = path.lstat()
        except OSError:
            continue  # removed meanwhile (by its own harnessgit, or another sweep)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue  # not a directory of this user's harnessgit
        try:
            marker: str | None = (path / MARKER).read_text(encoding="utf-8")
        except FileNotFoundError:
            marker = None
        except OSError:
            continue
        age = now - info.st_mtime
        owner = Owner.loads(marker) if marker is not None else None
        if owner is not None:
            if owner.state(here) == "gone":
                stale.append(StaleDir(path, f"{owner.describe()} (gone)", age))
        elif marker is not None and age >= max_age:  # cut short by a kill while being written
            stale.append(StaleDir(path, "unreadable marker", age))
        elif marker is None and (found := _unmarked(path, entry, age, max_age)):
            stale.append(StaleDir(path, found, age))
    return stale


def _unmarked(path: Path, entry: str, age: float, max_age: float) -> str | None:
    """Why a directory without a marker is abandoned; None when it may not be."""
    if entry.startswith(LEGACY_PREFIXES) and age >= max_age:
        return "no marker"
    if not entry.startswith(LEGACY_PREFIXES + MARKED_PREFIXES) or age < CUT_SHORT_AGE:
        return None
    if entry.startswith(MARKED_PREFIXES):
        return "no marker (made or removed when a kill came)"
    # An eval or tree directory of a version before markers may be in use for a day;
    # an empty one holds nothing to lose.
    try:
        empty = not any(path.iterdir())
    except OSError:
        return None
    return "empty, no marker" if empty else None


def stale_processes() -> list[StaleProcess]:
    """Programs (evaluators, proposer commands, what they started) whose harnessgit is
    gone: it was killed before it could end them. Linux only (/proc)."""
    here = Owner.current()
    mine = os.environ.get(RUN_VARIABLE)  # when this harnessgit runs inside another's evaluator
    gone: dict[str, str | None] = {}  # token -> its owner, described, when that is gone

    def abandoned(token: str) -> bool:
        if token not in gone:
            owner = token_owner(token, here)
            state = owner.state(here) if owner is not None and token != mine else "unknown"
            gone[token] = f"{owner.describe()} (gone)" if owner is not None and state == "gone" else None
        return gone[token] is not None

    stale = family(processes(), abandoned)
    return [StaleProcess(pid, gone[token] or "") for pid, token in sorted(stale.items())]


def remove_temp_dirs(stale: Iterable[StaleDir]) -> Sweep:
    """Remove the directories `stale_temp_dirs` found (``removed``); one that cannot be
    removed is in ``failed`` with why, never an exception. (`harnessgit doctor` lists,
    then removes.)"""
    result = Sweep()
    for found in stale:
        try:
            remove_dir(found.path)
        except FileNotFoundError:  # another sweep got there first
            result.removed.append(found)
        except OSError as exc:
            result.failed.append((found, exc.strerror or str(exc)))
        else:
            result.removed.append(found)
    return result


def kill_processes(stale: Iterable[StaleProcess]) -> list[StaleProcess]:
    """Kill the programs `stale_processes` found; those that were still there."""
    killed = []
    for process in stale:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, signal.SIGKILL)
            killed.append(process)
    return killed


def sweep(tmpdir: Path | None = None, *, max_age: float = MAX_AGE, now: float | None = None) -> Sweep:
    """Kill `stale_processes` (first: they may still write into their directories) and
    remove `stale_temp_dirs`; what was done. Never raises for a directory it cannot
    remove: that one is in ``failed``."""
    killed = kill_processes(stale_processes())
    done = remove_temp_dirs(stale_temp_dirs(tmpdir, max_age=max_age, now=now))
    return Sweep(removed=done.removed, failed=done.failed, killed=killed)
