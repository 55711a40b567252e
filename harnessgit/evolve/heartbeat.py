"""A line now and then while evolve waits on something slow (a proposer on a CPU model
can take minutes for one reply), so that a waiting run does not look like a hung one."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger("harnessgit.evolve")

EVERY = 30.0  # seconds between lines


@contextmanager
def heartbeat(what: str, every: float | None = None) -> Iterator[None]:
    """Log "still waiting for WHAT (N s)" every ``every`` seconds until the block ends."""
    interval = EVERY if every is None else every
    done = threading.Event()
    started = time.monotonic()

    def beat() -> None:
        while not done.wait(interval):
            log.info("still waiting for %s (%.0f s)", what, time.monotonic() - started)

    thread = threading.Thread(target=beat, name="harnessgit-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
