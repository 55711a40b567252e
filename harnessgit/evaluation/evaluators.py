"""The evaluators a harnessgit command keeps between evaluations: the in-process
function, imported once, and the persistent evaluator processes, started once.

A command that evaluates many times (`evolve`, `gate`, `bisect`) makes one
`Evaluators` and passes it in `Execution.evaluators`; an evaluation without one
makes its own and closes it when it ends. Closing ends every persistent process
and its process group, and the Ray this command started, if it did (Ctrl-C and
errors too: it is a context manager).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType
from typing import Generic, TypeVar

from harnessgit.config import Config
from harnessgit.evaluation.adapter import AdapterEvaluator
from harnessgit.evaluation.inprocess import PythonEvaluator
from harnessgit.evaluation.persistent import Servers
from harnessgit.evaluation.ray_executor import RayConnection
from harnessgit.scrub import Scrubber
from harnessgit.store import Store

T = TypeVar("T")


class OnFirstUse(Generic[T]):
    """A thing made the first time it is asked for, once however many threads ask
    (batches run in threads); ``made``: it, or None while nobody has asked."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._making = threading.Lock()
        self.made: T | None = None

    def get(self) -> T:
        with self._making:
            if self.made is None:
                self.made = self._make()
            return self.made


class Evaluators:
    def __init__(self) -> None:
        self._python: dict[str, PythonEvaluator] = {}
        # Made on first use: a command whose scores are all on record (a gate after
        # evolve) starts no process and sets up nothing (issue 26).
        self._servers = OnFirstUse(Servers)  # the persistent evaluator processes
        self._ray = OnFirstUse(RayConnection)  # executor = "ray"
        self.swept = False  # whether what killed runs left was cleaned up (once per command)
        self._scrubbers: dict[int, tuple[Config, Scrubber]] = {}  # id(config) -> it, its scrubber

    @property
    def servers(self) -> Servers:
        return self._servers.get()

    @property
    def ray(self) -> RayConnection:
        return self._ray.get()

    def python(self, store: Store, config: Config) -> PythonEvaluator:
        """The ``[evaluator] python`` function (or ``adapter``) of ``store``'s repository,
        imported once."""
        key = f"{store.root}\0{config.evaluator.in_process}\0{config.evaluator.components}"
        if key not in self._python:
            kind = AdapterEvaluator if config.evaluator.adapter else PythonEvaluator
            self._python[key] = kind(store, config)
        return self._python[key]

    def scrubber(self, config: Config) -> Scrubber:
        """``config``'s scrubber, made once per command: making one reads the whole
        environment for secret values (about 0.5 ms an evaluation in evolve: issue 13)."""
        kept = self._scrubbers.get(id(config))
        if kept is None or kept[0] is not config:
            kept = self._scrubbers[id(config)] = (config, config.scrub.scrubber(config.proposer))
        return kept[1]

    def close(self) -> None:
        self._python.clear()
        try:
            if self._servers.made is not None:
                self._servers.made.close()
        finally:
            if self._ray.made is not None:
                self._ray.made.close()

    def __enter__(self) -> Evaluators:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
