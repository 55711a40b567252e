"""The evaluators a harnessgit command keeps between evaluations: the in-process
function, imported once, and the persistent evaluator processes, started once.

A command that evaluates many times (`evolve`, `gate`, `bisect`) makes one
`Evaluators` and passes it in `Execution.evaluators`; an evaluation without one
makes its own and closes it when it ends. Closing ends every persistent process
and its process group, and the Ray this command started, if it did (Ctrl-C and
errors too: it is a context manager).
"""

from __future__ import annotations

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
        self.servers = Servers()  # the persistent evaluator processes
        self.ray = RayConnection()  # executor = "ray": connected on first use
        self.swept = False  # whether what killed runs left was cleaned up (once per command)
        self._scrubbers: dict[int, tuple[Config, Scrubber]] = {}  # id(config) -> it, its scrubber

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
            self.servers.close()
        finally:
            self.ray.close()

    def __enter__(self) -> Evaluators:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
