"""What an evolve run may spend, what it has spent, and what it reports."""

from __future__ import annotations

from dataclasses import dataclass, field

from harnessgit.records import IterationRecord


@dataclass(frozen=True)
class Budget:
    max_rollouts: int | None = None  # evaluator rollouts run by this invocation
    max_proposals: int | None = None  # proposer calls by this invocation
    max_cost: float | None = None  # USD: proposer cost plus evaluator "usd" cost, when reported

    def reached(self, spent: Spend) -> str:
        """Why no further proposal may be asked for ("" while it may). Rollouts are
        checked before each evaluation instead, where their number is known."""
        if self.max_proposals is not None and spent.proposals >= self.max_proposals:
            return f"max proposals ({self.max_proposals})"
        if self.max_cost is not None and spent.cost_usd >= self.max_cost:
            return f"max cost (${self.max_cost:g})"
        return ""


@dataclass(frozen=True)
class Spend:
    rollouts: int = 0
    proposals: int = 0
    cost_usd: float = 0.0

    def add(self, *, rollouts: int = 0, proposals: int = 0, cost_usd: float = 0.0) -> Spend:
        return Spend(self.rollouts + rollouts, self.proposals + proposals, self.cost_usd + cost_usd)


class BudgetReached(Exception):
    """A budget would be exceeded by the next step."""


@dataclass(frozen=True, kw_only=True)
class EvolveReport:
    """One evolve invocation. Its ``--json`` form: run, seed, stopped, rollouts,
    proposals, cost_usd, merged, iterations (the evolve-iteration records)."""

    run: str
    seed: int
    stopped: str  # why the run stopped
    spend: Spend = field(metadata={"json": "flatten"})
    merged: list[str]  # candidates merged by this run, in order
    iterations: list[IterationRecord]
    # Ctrl-C or SIGTERM stopped the run: the caller reports, then re-raises it.
    interruption: KeyboardInterrupt | None = field(default=None, metadata={"json": False})
