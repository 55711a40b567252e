"""What an evolve run spends and reports: budgets, spending, outcomes."""

from __future__ import annotations

from dataclasses import dataclass, field

from harnessgit.records import IterationRecord


@dataclass(frozen=True)
class Budget:
    max_rollouts: int | None = None  # evaluator rollouts run by this invocation
    max_proposals: int | None = None  # proposer calls by this invocation
    max_cost: float | None = None  # USD: proposer cost plus evaluator "usd" cost, when reported


@dataclass
class Spend:
    rollouts: int = 0
    proposals: int = 0
    cost: float = 0.0


def mean_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


class BudgetReached(Exception):
    """A budget would be exceeded by the next step."""


@dataclass(frozen=True)
class IterationOutcome:
    record: IterationRecord
    selection_before: float | None  # the base branch's selection mean, for the progress line


@dataclass
class EvolveReport:
    run: str
    seed: int
    iterations: list[IterationRecord] = field(default_factory=list)
    spend: Spend = field(default_factory=Spend)
    stopped: str = ""
    merged: list[str] = field(default_factory=list)
