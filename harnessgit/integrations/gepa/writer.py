"""The GEPA recorder's writer: one thread that stages and writes what GEPA's thread hands
it, so that GEPA never waits on git.

GEPA calls its callbacks synchronously on its own thread (gepa/core/callbacks.py
`notify_callbacks`): every millisecond a callback spends is a millisecond of the run.
Staging an iteration (its candidates' objects, evidence, records) and the ref
transaction cost 10-19 ms per proposal on GEPA's thread (docs/benchmarks.md); here they
run in order on this thread while GEPA waits on its task model. Steps land in one ref
transaction once the last write is `WRITE_EVERY` (1 s) old, when no step came for that
long, at `flush` and at `close`: a run killed anywhere leaves whole iterations only.

The thread is a daemon, so a script that never calls ``close()`` is not held open by
it; but a daemon dies with the interpreter, and what it had not written died with it
(issue 28: a whole run lost that way). So the recorder flushes when GEPA ends a run,
and an exit hook flushes whatever is left when the interpreter exits; when even that
cannot write, the hook says on stderr exactly which steps were not written.
"""

from __future__ import annotations

import atexit
import queue
import sys
import threading
import time
from collections.abc import Callable

from harnessgit.evaluation.batches import WRITE_EVERY

Step = Callable[[], None]
# How long the exit hook waits for the writer: writing a queued iteration takes
# milliseconds (docs/benchmarks.md), so this is only reached when git hangs.
EXIT_WAIT = 60.0


class _Flush:
    """A marker in the queue: write what is staged, then wake whoever waits."""

    def __init__(self) -> None:
        self.done = threading.Event()


class Writer:
    """Runs steps in the order given, on a thread of its own, and ``write`` (land what the
    steps staged) once a second. The first step that raises stops it: ``failed`` is
    called with the exception (and returns it as it may be shown) and every later step
    is dropped.

    Each step is submitted with what it writes ("iteration 3"), so that what was not
    written can be named: `unwritten` lists the steps submitted and not yet landed.
    ``name`` says whose writer this is in the exit hook's message.
    """

    def __init__(self, write: Step, failed: Callable[[Exception], str], name: str = "harnessgit") -> None:
        self._write, self._failed, self._name = write, failed, name
        self.stopped = False
        self.reason = ""  # why it stopped
        self._queue: queue.SimpleQueue[Step | _Flush | None] = queue.SimpleQueue()
        self._written_at = time.monotonic()
        self._lock = threading.Lock()
        self._unwritten: list[str] = []  # in submission order
        self._ran = 0  # how many of them ran (or run now) since the last write
        # a daemon: a script that exits without close() is not held open by the
        # recorder; the exit hook writes what it left (see the module's docstring)
        self._thread = threading.Thread(target=self._run, name="harnessgit-gepa-writer", daemon=True)
        self._thread.start()
        atexit.register(self._at_exit)

    def submit(self, step: Step, what: str = "a step") -> None:
        with self._lock:
            self._unwritten.append(what)
        if not self.stopped:
            self._queue.put(step)

    @property
    def unwritten(self) -> list[str]:
        with self._lock:
            return list(self._unwritten)

    def flush(self, timeout: float | None = None) -> bool:
        """Run every step submitted and write; True when that finished in ``timeout``."""
        if not self._thread.is_alive():
            return True
        marker = _Flush()
        self._queue.put(marker)
        return marker.done.wait(timeout)

    def close(self) -> None:
        """Run every step submitted, write, and end the thread."""
        atexit.unregister(self._at_exit)
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def _at_exit(self) -> None:
        """At interpreter exit (the daemon still runs then: Python stops daemon threads
        after the atexit hooks): write what is left, or say what could not be."""
        if not self.unwritten:
            return
        finished = self.flush(EXIT_WAIT)
        left = self.unwritten
        if not left:
            return
        if self.stopped:
            why = f"recording stopped on {self.reason}"
        else:
            why = f"git still writing after {EXIT_WAIT:.0f} s" if not finished else "the writer ended"
        sys.stderr.write(f"{self._name}: not written ({why}): {summary(left)}\n")
        sys.stderr.flush()

    def _run(self) -> None:
        while True:
            try:
                step = self._queue.get(timeout=WRITE_EVERY)
            except queue.Empty:  # GEPA is busy elsewhere: land what is staged
                self._do(self.write_now)
                continue
            if step is None:
                self._do(self.write_now)
                return
            if isinstance(step, _Flush):
                self._do(self.write_now)
                step.done.set()
                continue
            with self._lock:  # counted first: a step may write what it staged itself
                self._ran += 1
            self._do(step)
            if time.monotonic() - self._written_at >= WRITE_EVERY:
                self._do(self.write_now)

    def write_now(self) -> None:
        """Land what the steps staged; on the writer's thread only (a step may call it)."""
        self._written_at = time.monotonic()
        self._write()
        with self._lock:  # what ran is on record now
            del self._unwritten[: self._ran]
            self._ran = 0

    def _do(self, step: Step) -> None:
        if self.stopped:
            return
        try:
            step()
        except Exception as exc:
            self.stopped = True
            self.reason = self._failed(exc)


def summary(steps: list[str]) -> str:
    """``iteration 3, iteration 4, iteration 5, the run record`` as
    ``iterations 3-5, the run record``: a killed long run can leave hundreds."""
    parts: list[str] = []
    numbers: list[int] = []

    def close_range() -> None:
        if numbers:
            first, last = numbers[0], numbers[-1]
            parts.append(f"iteration {first}" if first == last else f"iterations {first}-{last}")
            numbers.clear()

    for step in steps:
        head, _, tail = step.rpartition(" ")
        if head == "iteration" and tail.isdigit() and (not numbers or int(tail) == numbers[-1] + 1):
            numbers.append(int(tail))
            continue
        close_range()
        if head == "iteration" and tail.isdigit():
            numbers.append(int(tail))
        else:
            parts.append(step)
    close_range()
    return ", ".join(parts)
