"""What a command hands the core to evaluate and check with: the batch runner and the
harness checks, each loaded when first called. The gate and merge take both from their
caller (issue 26), so a gate with every score and the checks' verdict on record loads
neither the evaluator's code nor the rules; a module apart from `_base`, so that a
command that evaluates nothing (`check`) does not even define them."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harnessgit.check_findings import CheckReport
    from harnessgit.config import CheckSections
    from harnessgit.evaluation.evaluators import Evaluators
    from harnessgit.evaluation.execution import Work
    from harnessgit.store import Store


class BatchRunner:
    """One command's batch runner (`harnessgit.evaluation.eval.run_batches`), loaded when
    the command first has scores to run, with one set of evaluators for the whole command
    (a persistent process starts once), made then and closed with the command's context
    however it ends. A command whose scores are all on record (a gate after evolve)
    loads no evaluator, batch or process code (issue 26)."""

    def __init__(self) -> None:
        self.evaluators: Evaluators | None = None
        self._making = threading.Lock()  # batches of two evaluations may start in two threads

    def __call__(self, work: Work, /) -> tuple[int, float]:
        from harnessgit.evaluation.eval import run_batches
        from harnessgit.evaluation.evaluators import Evaluators

        if work.execution.evaluators is None:  # evolve brings its own
            with self._making:
                if self.evaluators is None:
                    self.evaluators = Evaluators()
            work = replace(work, execution=replace(work.execution, evaluators=self.evaluators))
        return run_batches(work)

    def close(self) -> None:
        if self.evaluators is not None:
            self.evaluators.close()


def checker(store: Store, config: CheckSections, old: str | None, new: str | None, /) -> CheckReport:
    """The harness checks on a change (`harnessgit.checks.check_change`), loaded when a
    gate first has no verdict on record to read back: a gate on a candidate whose proposal
    kept one imports no rule (issue 26)."""
    from harnessgit.checks import check_change

    return check_change(store, config, old, new)
