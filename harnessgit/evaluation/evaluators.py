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
from types import TracebackType

from harnessgit.config import Config
from harnessgit.evaluation.adapter import AdapterEvaluator
from harnessgit.evaluation.inprocess import PythonEvaluator
from harnessgit.evaluation.persistent import Servers
from harnessgit.evaluation.ray_executor import RayConnection
from harnessgit.scrub import Scrubber
from harnessgit.store import Store


class Evaluators:
    def __init__(self) -> None:
        self._python: dict[str, PythonEvaluator] = {}
        # Made on first use: a command whose scores are all on record (a gate after
        # evolve) starts no process and sets up nothing (issue 26).
        self._servers: Servers | None = None  # the persistent evaluator processes
        self._ray: RayConnection | None = None  # executor = "ray": connected on first use
        self._making = threading.Lock()  # batches run in threads: one of each, however many ask
        self.swept = False  # whether what killed runs left was cleaned up (once per command)
        self._scrubbers: dict[int, tuple[Config, Scrubber]] = {}  # id(config) -> it, its scrubber

    @property
    def servers(self) -> Servers:
        with self._making:
            if self._servers is None:
                self._servers = Servers()
            return self._servers

    @property
    def ray(self) -> RayConnection:
        with self._making:
            if self._ray is None:
                self._ray = RayConnection()
            return self._ray

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
            if self._servers is not None:
                self._servers.close()
        finally:
            if self._ray is not None:
                self._ray.close()

    def __enter__(self) -> Evaluators:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
