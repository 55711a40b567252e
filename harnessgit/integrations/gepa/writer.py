"""The GEPA recorder's writer: one thread that stages and writes what GEPA's thread hands
it, so that GEPA never waits on git.

GEPA calls its callbacks synchronously on its own thread (gepa/core/callbacks.py
`notify_callbacks`): every millisecond a callback spends is a millisecond of the run.
Staging an iteration (its candidates' objects, evidence, records) and the ref
transaction cost 10-19 ms per proposal on GEPA's thread (docs/benchmarks.md); here they
run in order on this thread while GEPA waits on its task model. Steps land in one ref
transaction once the last write is `WRITE_EVERY` (1 s) old, when no step came for that
long, and at `close`: a run killed anywhere leaves whole iterations only.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from harnessgit.evaluation.batches import WRITE_EVERY

Step = Callable[[], None]


class Writer:
    """Runs steps in the order given, on a thread of its own, and ``write`` (land what the
    steps staged) once a second. The first step that raises stops it: ``failed`` is
    called with the exception and every later step is dropped."""

    def __init__(self, write: Step, failed: Callable[[Exception], None]) -> None:
        self._write, self._failed = write, failed
        self.stopped = False
        self._queue: queue.SimpleQueue[Step | None] = queue.SimpleQueue()
        self._written_at = time.monotonic()
        # a daemon: a script that exits without close() is not held open by the recorder
        self._thread = threading.Thread(target=self._run, name="harnessgit-gepa-writer", daemon=True)
        self._thread.start()

    def submit(self, step: Step) -> None:
        if not self.stopped:
            self._queue.put(step)

    def close(self) -> None:
        """Run every step submitted, write, and end the thread."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def _run(self) -> None:
        while True:
            try:
                step = self._queue.get(timeout=WRITE_EVERY)
            except queue.Empty:  # GEPA is busy elsewhere: land what is staged
                self._do(self._write_now)
                continue
            if step is None:
                self._do(self._write_now)
                return
            self._do(step)
            if time.monotonic() - self._written_at >= WRITE_EVERY:
                self._do(self._write_now)

    def _write_now(self) -> None:
        self._written_at = time.monotonic()
        self._write()

    def _do(self, step: Step) -> None:
        if self.stopped:
            return
        try:
            step()
        except Exception as exc:
            self.stopped = True
            self._failed(exc)
