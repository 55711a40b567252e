"""Starting a user's program so that ending it ends everything it started.

Each program starts as the leader of a process group (and session) of its own
(``start_new_session=True``): killing the group ends a timed-out evaluator's agent, a
shell pipeline inside a proposer. A descendant can leave the group, though (``setsid``,
a daemon that double-forks), and then holds its inherited pipes as long as it likes.

Those are found the way Jenkins' ProcessTreeKiller finds a build's leftovers: every
program gets a variable of its own in its environment, ``HARNESSGIT_RUN`` (a token
naming the harnessgit process that started it, then a random part), which every
descendant inherits; on Linux, /proc/PID/environ shows it for each of them, whatever
session or group they moved to. A descendant that clears its environment (``env -i``),
runs as another user, or runs where /proc is not (macOS) is out of reach: only the
process group is killed there.

Not chosen: PR_SET_CHILD_SUBREAPER, which makes orphans children of harnessgit. It is
process-wide, so a program that imports harnessgit (a test run, a notebook) would
inherit every orphan of everything it runs, and reaping them by pid races with
`subprocess`'s own waits for git (a stolen exit status reads as 0). A cgroup per
program would be exact, but needs systemd or root.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harnessgit.processes.owner import Owner

RUN_VARIABLE = "HARNESSGIT_RUN"
_PROC = Path("/proc")


def start_group(argv: list[str], cwd: Path | None, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start ``argv`` with three pipes, leading a process group of its own; OSError when
    it cannot start (the caller says which program that was). ``env`` is all it gets."""
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill a child and everything it started that stayed in its process group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - no process groups
            proc.kill()


def new_token(owner: Owner | None = None) -> str:
    """A ``HARNESSGIT_RUN`` value: the owner's namespace, pid and start time (so that a
    sweep can tell a run whose harnessgit was killed), then a random part."""
    owner = owner or Owner.current()
    return f"{owner.namespace or 0}.{owner.pid}.{owner.started or 0}.{secrets.token_hex(8)}"


def token_owner(token: str, here: Owner) -> Owner | None:
    """The harnessgit process a token names, as seen from ``here``; None when malformed."""
    parts = token.split(".")
    if len(parts) != 4 or not all(part.isdigit() for part in parts[:3]):
        return None
    namespace, pid, started = parts[0], int(parts[1]), int(parts[2])
    return Owner(here.host, "" if namespace == "0" else namespace, pid, started or None)


@dataclass(frozen=True)
class Process:
    pid: int
    parent: int
    token: str | None  # its HARNESSGIT_RUN, None when it has none or it cannot be read


def processes(since: int | None = None) -> list[Process]:
    """The processes /proc shows (empty without /proc); a token only for this user's,
    and only for those started at ``since`` (clock ticks after boot) or later: one that
    started before a program cannot carry its token, and reading every environment
    costs a few milliseconds per batch."""
    needle = f"{RUN_VARIABLE}=".encode()
    try:
        entries = [entry for entry in os.listdir(_PROC) if entry.isdigit()]
    except OSError:
        return []
    table = []
    for entry in entries:
        try:
            stat = (_PROC / entry / "stat").read_bytes()
        except OSError:  # ended meanwhile
            continue
        # The command name (field 2) may hold spaces and parentheses: split after its last ")".
        fields = stat[stat.rfind(b")") + 2 :].split()
        token = None
        if since is None or int(fields[19]) >= since:
            with contextlib.suppress(OSError):  # another user's; or it ended meanwhile
                for item in (_PROC / entry / "environ").read_bytes().split(b"\0"):
                    if item.startswith(needle):
                        token = item[len(needle) :].decode("ascii", "replace")
                        break
        table.append(Process(int(entry), int(fields[1]), token))
    return table


def family(table: list[Process], root: Callable[[str], bool]) -> dict[int, str]:
    """pid -> token of each process whose token ``root`` accepts, and of each of their
    descendants: a child is counted by its parent too, so that one that cleared its
    environment, or is still in the middle of exec (its environment not readable yet),
    is not missed while its parent lives. Never this process or its ancestors."""
    found = {process.pid: process.token for process in table if process.token and root(process.token)}
    children: dict[int, list[int]] = {}
    for process in table:
        children.setdefault(process.parent, []).append(process.pid)
    queue = list(found)
    while queue:
        pid = queue.pop()
        for child in children.get(pid, []):
            if child not in found:
                found[child] = found[pid]
                queue.append(child)
    parents = {process.pid: process.parent for process in table}
    pid = os.getpid()
    while pid > 1:
        found.pop(pid, None)
        pid = parents.get(pid, 0)
    return {pid: token for pid, token in found.items() if token is not None}


def kill_escaped(token: str, since: int | None = None) -> int:
    """Kill every process that carries ``token`` and what they started (a program's
    descendants, wherever they moved); how many were killed. ``since``: when the
    program started (`processes`)."""
    killed = 0
    for pid in family(processes(since), lambda found: found == token):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            killed += 1
    return killed
