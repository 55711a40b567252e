"""Talking to a user's program: its input written, its output read, with a deadline and
caps, whatever its descendants do.

One thread, one `selectors` loop over the three pipes, and nothing in it blocks past
the deadline (issue 15): a descendant that left the process group and keeps stdout
open used to hold harnessgit until it ended (the command proposer waited out a 300 s
sleep with ``timeout = 5``), and output was kept whole (90 MB printed took 474 MB of
memory, a 300 MB stderr line 1.5 GB and went to the terminal whole). Now:

- when the program exits, its output counts for `DRAIN_GRACE` more and then the pipes
  are closed, whoever still holds them;
- at the deadline its process group is killed and the pipes closed;
- standard output is kept up to ``max_stdout`` bytes: one byte more and the program is
  killed (a line longer than ``max_line`` too); standard error is never kept whole,
  only its last lines, each cut at ``stderr_line`` bytes, and handed line by line to a
  sink until ``max_stderr`` bytes were shown;
- however the loop ends (an exception too: Ctrl-C, SIGTERM), the process group and the
  descendants that left it (`kill_escaped`) are killed and the pipes closed.
"""

from __future__ import annotations

import collections
import contextlib
import os
import selectors
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, Protocol, cast

from harnessgit.processes.group import RUN_VARIABLE, kill_escaped, kill_group, new_token, start_group
from harnessgit.processes.owner import start_time
from harnessgit.render import size

# How often the loop looks whether the program has exited while its pipes stay open.
POLL = 0.05
# After the program exits, how long what its descendants still write counts.
DRAIN_GRACE = 0.5
# After SIGKILL, how long to wait for the exit status; a process in uninterruptible
# sleep (a dead NFS mount) may never give it, and is then left to the system.
REAP_WAIT = 1.0
CHUNK = 64 * 1024
STDERR_TAIL = 5

End = Literal["exited", "timeout", "overflow", "stopped"]


@dataclass(frozen=True)
class Limits:
    timeout: float  # seconds from the start
    max_stdout: int  # bytes kept; one more and the program is killed
    max_line: int | None = None  # bytes in one line of stdout
    max_stderr: int = 16 * 1024 * 1024  # bytes of stderr shown to the sink
    stderr_line: int = 2000  # bytes of one stderr line shown; the rest is cut


@dataclass(frozen=True)
class Outcome:
    end: End
    returncode: int | None  # None unless the program exited by itself
    stdout: bytes
    problem: str | None  # why it was killed, for "overflow"
    stderr_tail: list[str]  # its last lines of stderr
    escaped: int  # processes that had left its group, killed at the end
    wall_time: float


class Child:
    """A running program that leads a process group of its own and whose descendants
    all inherit the ``HARNESSGIT_RUN`` token in their environment."""

    def __init__(self, argv: list[str], cwd: Path | None, env: dict[str, str]) -> None:
        self.token = new_token()
        self.started = time.monotonic()
        self.proc = start_group(argv, cwd, {**env, RUN_VARIABLE: self.token})
        # Its descendants started after it: only their environments need reading.
        self.ticks = start_time(self.proc.pid)

    def kill(self) -> None:
        """Kill its process group (not yet what left it: `communicate` ends with that)."""
        kill_group(self.proc)


def communicate(
    child: Child,
    payload: bytes,
    limits: Limits,
    *,
    on_stderr: Callable[[str], None] | None = None,
    stopped: Callable[[], bool] = lambda: False,
) -> Outcome:
    """Write ``payload`` to the child's stdin, read its output until it has exited and
    its pipes are closed (or `DRAIN_GRACE` after it exited, or the deadline, or
    ``stopped()``), then end it and everything it started."""
    stdout = _Stdout(limits.max_stdout, limits.max_line)
    stderr = _Stderr(limits.stderr_line, limits.max_stderr, on_stderr)
    escaped = 0
    try:
        end = _pump(child, payload, limits, stdout, stderr, stopped)
    finally:
        child.kill()
        escaped = kill_escaped(child.token, child.ticks)
        _close(child.proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.proc.wait(REAP_WAIT)
    stderr.flush()
    returncode = child.proc.returncode if end == "exited" else None
    return Outcome(
        end=end,
        returncode=returncode,
        stdout=stdout.value(),
        problem=stdout.problem,
        stderr_tail=list(stderr.tail),
        escaped=escaped,
        wall_time=time.monotonic() - child.started,
    )


class Reader(Protocol):
    """What the loop hands a pipe's bytes to: an `End` stops the loop."""

    def feed(self, data: bytes) -> str | None: ...

    def closed(self) -> str | None: ...


def pump(
    proc: subprocess.Popen[bytes],
    pending: memoryview,
    deadline: float,
    readers: dict[IO[bytes], Reader],
    stopped: Callable[[], bool],
    *,
    close_stdin: bool,
) -> str:
    """The one `selectors` loop over a program's pipes: write ``pending`` to its stdin
    (closing it after, with ``close_stdin``), hand what each output pipe gives to its
    reader, and return how it ended: a reader's end, "stopped", "timeout" (the
    deadline, before it exited), or "exited" (`DRAIN_GRACE` after it exited, or every
    pipe closed and the program reaped). `communicate` runs it once per program; a
    `processes.server.Server` once per request, keeping stdin open."""
    assert proc.stdin is not None
    with selectors.DefaultSelector() as selector:
        for stream, stream_reader in readers.items():
            selector.register(stream, selectors.EVENT_READ, stream_reader)
        if pending:
            selector.register(proc.stdin, selectors.EVENT_WRITE)
        elif close_stdin:
            proc.stdin.close()
        exited_at: float | None = None
        while selector.get_map():
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now  # what is still open is held by a descendant
            if stopped():
                return "stopped"
            if exited_at is None and now >= deadline:
                return "timeout"
            until = deadline if exited_at is None else min(deadline, exited_at + DRAIN_GRACE)
            if exited_at is not None and now >= until:
                return "exited"
            for key, _mask in selector.select(min(POLL, until - now)):
                if key.fileobj is proc.stdin:
                    pending = _write(selector, proc.stdin, pending, close=close_stdin)
                    continue
                try:
                    data = os.read(key.fd, CHUNK)
                except BlockingIOError:
                    continue
                reader: Reader = key.data
                if not data:
                    selector.unregister(key.fileobj)
                end = reader.feed(data) if data else reader.closed()
                if end is not None:
                    return end
    # Every pipe is closed: the program has ended, or is about to.
    try:
        proc.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return "timeout"  # it closed its output and went on running
    return "exited"


def _pump(
    child: Child,
    payload: bytes,
    limits: Limits,
    stdout: _Stdout,
    stderr: _Stderr,
    stopped: Callable[[], bool],
) -> End:
    proc = child.proc
    assert proc.stdin and proc.stdout and proc.stderr
    for stream in (proc.stdout, proc.stderr, proc.stdin):
        os.set_blocking(stream.fileno(), False)
    readers: dict[IO[bytes], Reader] = {proc.stdout: stdout, proc.stderr: stderr}
    end = pump(proc, memoryview(payload), child.started + limits.timeout, readers, stopped, close_stdin=True)
    return cast(End, end)


def _write(
    selector: selectors.BaseSelector, stdin: IO[bytes], pending: memoryview, *, close: bool = True
) -> memoryview:
    """Write what the pipe takes now; the rest. Once all is written, stop watching the
    pipe and, with ``close``, close it (a persistent child keeps its stdin for the next
    request: `processes.server`)."""
    try:
        written = os.write(stdin.fileno(), pending[:CHUNK])
    except BlockingIOError:
        return pending
    except OSError:  # it closed its stdin or exited: it does not want the rest
        written = len(pending)
    pending = pending[written:]
    if not pending:
        selector.unregister(stdin)
        if close:
            with contextlib.suppress(OSError):
                stdin.close()
    return pending


def _close(proc: subprocess.Popen[bytes]) -> None:
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


class _Stdout:
    """Standard output, kept up to a cap, checking line lengths as it arrives."""

    def __init__(self, cap: int, max_line: int | None) -> None:
        self.cap, self.max_line = cap, max_line
        self.chunks: list[bytes] = []
        self.total = 0
        self.lines = 0  # complete lines so far
        self.current = 0  # bytes of the line being read
        self.problem: str | None = None

    def feed(self, data: bytes) -> str | None:
        """Keep ``data``; "overflow" when the program must be stopped (``problem`` says why)."""
        if self.max_line is not None and self.current + len(data) > self.max_line:
            lengths = [len(part) for part in data.split(b"\n")]
            lengths[0] += self.current
            too_long = next((index for index, length in enumerate(lengths) if length > self.max_line), None)
            if too_long is not None:
                self.problem = f"output line {self.lines + too_long + 1} is longer than {self.max_line} bytes"
                return "overflow"
            self.lines += len(lengths) - 1
            self.current = lengths[-1]
        elif self.max_line is not None:
            newlines = data.count(b"\n")
            self.lines += newlines
            self.current = len(data) - data.rfind(b"\n") - 1 if newlines else self.current + len(data)
        if self.total + len(data) > self.cap:
            self.problem = f"printed more than {size(self.cap)} on standard output"
            return "overflow"
        self.total += len(data)
        self.chunks.append(data)
        return None

    def closed(self) -> str | None:
        return None

    def value(self) -> bytes:
        value = b"".join(self.chunks)
        self.chunks = []
        return value


class _Stderr:
    """Standard error, line by line: each line cut at ``line_bytes`` and handed to
    ``sink`` until ``max_shown`` bytes were; only the last `STDERR_TAIL` lines kept."""

    def __init__(self, line_bytes: int, max_shown: int, sink: Callable[[str], None] | None) -> None:
        self.line_bytes, self.max_shown, self.sink = line_bytes, max_shown, sink
        self.tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self.partial = bytearray()
        self.cut = 0
        self.shown = 0

    def feed(self, data: bytes) -> str | None:
        start = 0
        if self.sink is None or self.shown > self.max_shown:
            # Nothing more is shown: only the lines that can still reach the tail matter.
            start = _after_last_newlines(data, STDERR_TAIL + 1)
            if start:
                self.partial.clear()
                self.cut = 0
        while start <= len(data):
            newline = data.find(b"\n", start)
            end = len(data) if newline < 0 else newline
            room = max(0, self.line_bytes - len(self.partial))
            self.partial += data[start : start + min(room, end - start)]
            self.cut += max(0, end - start - room)
            if newline < 0:
                break
            self._line()
            start = newline + 1
        return None

    def closed(self) -> str | None:
        return None

    def flush(self) -> None:
        if self.partial or self.cut:
            self._line()

    def _line(self) -> None:
        line = self.partial.decode("utf-8", "replace").rstrip("\r")
        if self.cut:
            # "..." right after the cut: where the scrubber looks for a secret cut short.
            line += f"... [{size(self.cut)} cut]"
        self.partial.clear()
        self.cut = 0
        self.tail.append(line)
        if self.sink is None or self.shown > self.max_shown:
            return
        self.shown += len(line) + 1
        if self.shown <= self.max_shown:
            self.sink(line)
        else:
            self.sink(f"[standard error beyond {size(self.max_shown)} is not shown]")


def _after_last_newlines(data: bytes, count: int) -> int:
    """Where the last ``count`` - 1 lines of ``data`` start, or 0 when it has fewer."""
    position = len(data)
    for _ in range(count):
        position = data.rfind(b"\n", 0, position)
        if position < 0:
            return 0
    return position + 1
