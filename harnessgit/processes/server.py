"""A user's program that stays running and answers one request line at a time.

`pipes.communicate` runs a program once; a `Server` is started once and then
exchanges many requests over its stdin and stdout, each with its own deadline and
output caps: the request line is written, the answer's lines are read until one that
ends it, and stderr is drained meanwhile (line by line to a sink, its tail kept). Any
other end (it exits, it times out, it prints too much, the caller stops) leaves the
program in an unknown state: the caller then `kill`s it, its process group and what
left the group. `close` is the clean end: stdin closed, `SHUTDOWN_GRACE` to exit, then
the same kill.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, cast

from harnessgit.processes.group import kill_escaped
from harnessgit.processes.pipes import REAP_WAIT, Child, Limits, Reader, _close, _Stderr, pump
from harnessgit.render import size

# How long a server has to exit once its stdin is closed, before it is killed.
SHUTDOWN_GRACE = 5.0

End = Literal["answered", "exited", "timeout", "overflow", "stopped"]


@dataclass(frozen=True)
class Exchange:
    end: End
    lines: list[bytes]  # the answer's lines before the one that ended it
    returncode: int | None  # when it exited
    problem: str | None  # why it was stopped, for "overflow"
    stderr_tail: list[str]
    wall_time: float


class _Answer:
    """The answer's lines on stdout, up to the line that ``ends`` it, within the caps.
    What follows the last complete line waits in ``pending`` for the next read (and the
    next request: the buffer is the server's)."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        limits: Limits,
        ends: Callable[[bytes], bool],
        lines: list[bytes],
        pending: bytearray,
    ) -> None:
        self.proc, self.limits, self.ends, self.lines, self.pending = proc, limits, ends, lines, pending
        self.total = 0
        self.problem: str | None = None

    def feed(self, data: bytes) -> str | None:
        self.total += len(data)
        if self.total > self.limits.max_stdout:
            self.problem = f"printed more than {size(self.limits.max_stdout)} for one batch"
            return "overflow"
        self.pending += data
        *complete, rest = bytes(self.pending).split(b"\n")
        self.pending[:] = rest
        max_line = self.limits.max_line
        if max_line is not None and max([len(rest), *map(len, complete)]) > max_line:
            self.problem = f"printed an output line longer than {max_line} bytes"
            return "overflow"
        for line in complete:
            if self.ends(line):
                return "answered"
            self.lines.append(line)
        return None

    def closed(self) -> str | None:
        """Its stdout closed: no answer can come any more."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(REAP_WAIT)
        return "exited"


class Server:
    def __init__(self, argv: list[str], cwd: Path | None, env: dict[str, str], limits: Limits) -> None:
        self.child = Child(argv, cwd, env)
        self.limits = limits
        proc = self.child.proc
        assert proc.stdin and proc.stdout and proc.stderr
        for stream in (proc.stdout, proc.stderr, proc.stdin):
            os.set_blocking(stream.fileno(), False)
        self._stderr = _Stderr(limits.stderr_line, limits.max_stderr, None)
        self._pending = bytearray()  # stdout after the last complete line
        self.alive = True

    @property
    def pid(self) -> int:
        return self.child.proc.pid

    def exchange(
        self,
        request: bytes,
        ends: Callable[[bytes], bool],
        *,
        on_stderr: Callable[[str], None] | None = None,
        stopped: Callable[[], bool] = lambda: False,
    ) -> Exchange:
        """Write ``request`` (one line), read lines until ``ends(line)`` is true."""
        started = time.monotonic()
        self._stderr.sink, self._stderr.shown = on_stderr, 0
        lines: list[bytes] = []
        end, problem = self._pump(memoryview(request), ends, lines, stopped, started + self.limits.timeout)
        self._stderr.flush()
        proc = self.child.proc
        return Exchange(
            end=end,
            lines=lines,
            returncode=proc.returncode if end == "exited" else None,
            problem=problem,
            stderr_tail=list(self._stderr.tail),
            wall_time=time.monotonic() - started,
        )

    def _pump(
        self,
        pending: memoryview,
        ends: Callable[[bytes], bool],
        lines: list[bytes],
        stopped: Callable[[], bool],
        deadline: float,
    ) -> tuple[End, str | None]:
        proc = self.child.proc
        assert proc.stdout and proc.stderr
        answer = _Answer(proc, self.limits, ends, lines, self._pending)
        readers: dict[IO[bytes], Reader] = {proc.stdout: answer, proc.stderr: self._stderr}
        end = pump(proc, pending, deadline, readers, stopped, close_stdin=False)
        return cast(End, end), answer.problem

    def kill(self) -> None:
        """End it now, with its process group and whatever left the group."""
        self.alive = False
        self.child.kill()
        kill_escaped(self.child.token, self.child.ticks)
        _close(self.child.proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.child.proc.wait(REAP_WAIT)

    def close(self, grace: float = SHUTDOWN_GRACE) -> None:
        """Close its stdin, give it ``grace`` seconds to exit, then `kill` what is left."""
        if not self.alive:
            return
        stdin = self.child.proc.stdin
        if stdin is not None:
            with contextlib.suppress(OSError):
                stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.child.proc.wait(grace)
        self.kill()
