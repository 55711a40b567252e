"""Which harnessgit process owns something (a scratch directory, an evaluator), and
whether that process is still there.

A pid alone does not say it: pids are reused, and a container sees other pids than
its host. So an owner is (host, PID namespace, pid, start time): a process with the
same pid but another start time is another process, and an owner recorded in another
host or namespace cannot be checked from here ("unknown", never "gone"). The start
time and the namespace come from /proc (Linux); elsewhere they are left out and the
pid alone is checked.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

State = Literal["alive", "gone", "unknown"]
_PROC = Path("/proc")


@dataclass(frozen=True)
class Owner:
    host: str
    namespace: str  # the PID namespace ("4026531836"), "" where there is no /proc
    pid: int
    started: int | None  # clock ticks after boot (/proc/PID/stat field 22), None without /proc

    @classmethod
    def current(cls) -> Owner:
        pid = os.getpid()
        return cls(socket.gethostname(), _namespace(), pid, start_time(pid))

    def state(self, here: Owner | None = None) -> State:
        """ "gone" only when this host and namespace hold no such process (or a reused
        pid, started at another time); "unknown" when it cannot be checked from here."""
        here = here or Owner.current()
        if (self.host, self.namespace) != (here.host, here.namespace):
            return "unknown"
        if not _exists(self.pid):
            return "gone"
        if self.started is not None and start_time(self.pid) not in (self.started, None):
            return "gone"
        return "alive"

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}"

    def dumps(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def loads(cls, text: str) -> Owner | None:
        """The owner a marker names; None when it does not parse (a marker cut short)."""
        try:
            data = json.loads(text)
            owner = cls(
                host=data["host"], namespace=data["namespace"], pid=data["pid"], started=data["started"]
            )
        except (ValueError, KeyError, TypeError):
            return None
        valid = (
            isinstance(owner.host, str)
            and isinstance(owner.namespace, str)
            and isinstance(owner.pid, int)
            and (owner.started is None or isinstance(owner.started, int))
        )
        return owner if valid else None


def start_time(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks after boot; None without /proc, or when
    there is no such process or it is a zombie (it has ended; only its status is left)."""
    try:
        stat = (_PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ")".
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 20 or fields[0] == b"Z":
        return None
    return int(fields[19])


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    if _PROC.is_dir():
        with contextlib.suppress(OSError):
            stat = (_PROC / str(pid) / "stat").read_bytes()
            return stat[stat.rfind(b")") + 2 :][:1] != b"Z"  # a zombie has ended
    return True


def _namespace() -> str:
    try:
        link = os.readlink(_PROC / "self" / "ns" / "pid")  # "pid:[4026531836]"
    except OSError:
        return ""
    return link.partition("[")[2].rstrip("]")
