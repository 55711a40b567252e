"""The intent journal: every ref update of a transaction, on disk before git applies any.

git's files backend applies a multi-ref ``update-ref --stdin`` transaction one ref at a
time (it renames each ``<ref>.lock`` over its ref, in turn). A SIGKILL inside that loop
leaves some refs moved and the others locked: measured (issue 15), a merge-shaped
transaction killed there wrote the gate note and the archive ref but left the candidate
branch live, with 3 lock files. So before git runs, the store writes the transaction's
updates (ref, old, new) to one file in ``<git common dir>/harnessgit/journal/`` and
removes the file once git has answered. A file whose writer is gone is an interrupted
transaction, which the next command that opens the store rolls forward (recovery.py).

A file's name says who owns it, ``<txid>~<host>~<pid>~<start>.json``, so that seeing
whether a transaction is still in flight takes one directory listing and no read; the
process start time tells a reused pid from the writer. A recovering process takes a
journal over by renaming it to its own name: a rename is atomic, so exactly one wins.

The file is not fsynced: it guards against a killed process, whose writes the page cache
keeps, and against power loss it could not help, since by default git flushes neither
the refs it moves nor the loose objects harnessgit writes (core.fsync), and rolling a
ref forward to an object lost with the power would be worse than not.
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from harnessgit.errors import HarnessgitError
from harnessgit.readstore.inflight import JOURNAL_DIR as JOURNAL_DIR
from harnessgit.store.transaction import RefMove

SUFFIX = ".json"
VERSION = 1

# A journal lives for one git call (milliseconds; at most git's own 1 s wait for
# packed-refs.lock). Its owner on another host (a repository on a shared file system)
# cannot be asked whether it still runs, so such a journal counts as interrupted once
# it is a minute old.
FOREIGN_HOST_AFTER = 60.0


class JournalError(HarnessgitError):
    """A journal file this harnessgit cannot read (damaged, or from a newer version)."""


@dataclass(frozen=True)
class Owner:
    host: str
    pid: int
    start: str  # the process's start time in clock ticks since boot (Linux), "0" elsewhere

    @property
    def token(self) -> str:
        return f"{self.host}~{self.pid}~{self.start}"

    def alive(self) -> bool | None:
        """Whether the process still runs; None for a process on another host."""
        if self.host != _hostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # someone else's process: it exists
            pass
        return self.start == "0" or _start_time(self.pid) == self.start


def this_process() -> Owner:
    return Owner(_hostname(), os.getpid(), _start_time(os.getpid()))


@dataclass(frozen=True)
class Entry:
    """One journal file: a transaction that has not been seen to finish."""

    path: Path
    txid: str
    owner: Owner

    def age(self, now: float | None = None) -> float:
        try:
            return max(0.0, (time.time() if now is None else now) - self.path.stat().st_mtime)
        except FileNotFoundError:
            return 0.0

    def interrupted(self) -> bool:
        """Its writer is gone: nobody else will finish or remove it."""
        alive = self.owner.alive()
        return self.age() >= FOREIGN_HOST_AFTER if alive is None else not alive

    def read(self) -> Intent:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("v") != VERSION:
                raise ValueError(f"version {data.get('v')!r}, this harnessgit reads {VERSION}")
            moves = tuple(RefMove(str(ref), new, old) for ref, old, new in data["updates"])
            return Intent(str(data["reason"]), float(data["created"]), moves)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise JournalError(f"cannot read the transaction journal {self.path} ({exc})") from None

    def claim(self, owner: Owner) -> Entry | None:
        """Take the journal over (to roll it forward); None when another process did first."""
        if owner == self.owner:
            return self
        target = self.path.with_name(_name(self.txid, owner))
        try:
            self.path.rename(target)
        except FileNotFoundError:
            return None
        return Entry(target, self.txid, owner)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


@dataclass(frozen=True)
class Intent:
    """What a journal says: the transaction's reason, when, and every update."""

    reason: str
    created: float
    moves: tuple[RefMove, ...]


def write(directory: Path, txid: str, reason: str, moves: list[RefMove]) -> Entry:
    """Write the journal of one transaction (replacing the one of an earlier attempt).
    Written to a temporary name and renamed, so that a kill never leaves half of one."""
    owner = this_process()
    path = directory / _name(txid, owner)
    data = {
        "v": VERSION,
        "reason": reason,
        "created": time.time(),
        "updates": [[move.ref, move.old, move.new] for move in moves],
    }
    scratch = directory / f".{txid}.tmp"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        scratch.write_text(json.dumps(data, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(scratch, path)
    except OSError as exc:
        raise JournalError(f"cannot write the transaction journal in {directory}: {exc.strerror}") from None
    return Entry(path, txid, owner)


def entries(directory: Path) -> list[Entry]:
    """Every journal file: one directory listing (none at all: no directory)."""
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for name in sorted(names):
        parsed = _parse(name)
        if parsed is not None:
            found.append(Entry(directory / name, *parsed))
    return found


def scratch_files(directory: Path) -> list[Path]:
    """Temporary files of journals whose writer died before renaming them."""
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(directory / name for name in names if name.startswith(".") and name.endswith(".tmp"))


def _name(txid: str, owner: Owner) -> str:
    return f"{txid}~{owner.token}{SUFFIX}"


_NAME = re.compile(r"(?P<txid>[0-9a-f]+)~(?P<host>[A-Za-z0-9.-]+)~(?P<pid>\d+)~(?P<start>\d+)\.json")


def _parse(name: str) -> tuple[str, Owner] | None:
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    return match["txid"], Owner(match["host"], int(match["pid"]), match["start"])


def _hostname() -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname()) or "localhost"


def _start_time(pid: int) -> str:
    """The process's start time from /proc (field 22 of stat), "0" where there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "0"
    fields = stat[stat.rfind(")") + 2 :].split()  # the name may hold spaces and parentheses
    return fields[19] if len(fields) > 19 else "0"
