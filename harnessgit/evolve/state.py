"""What an evolve run may spend, what it has spent, and what it reports."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from harnessgit.records import IterationRecord


@dataclass(frozen=True)
class Budget:
    """What an evolve run may spend, and when it has done enough (GEPA's stoppers)."""

    max_rollouts: int | None = None  # evaluator rollouts run by this invocation
    max_proposals: int | None = None  # proposer calls by this invocation
    max_cost: float | None = None  # USD: proposer cost plus evaluator "usd" cost, when reported
    max_seconds: float | None = None  # wall time of this invocation (GEPA's TimeoutStopCondition)
    no_improvement: int | None = None  # iterations in a row that did not raise the best mean
    target: float | None = None  # stop once the best selection mean reaches it

    def reached(self, spent: Spend, progress: Progress | None = None) -> str:
        """Why no further iteration may start ("" while it may). Rollouts are
        checked before each evaluation instead, where their number is known."""
        if self.max_proposals is not None and spent.proposals >= self.max_proposals:
            return f"max proposals ({self.max_proposals})"
        if self.max_cost is not None and spent.cost_usd >= self.max_cost:
            return f"max cost (${self.max_cost:g})"
        if progress is None:
            return ""
        if self.max_seconds is not None and progress.seconds >= self.max_seconds:
            return f"max time ({self.max_seconds:g} s)"
        best = "-" if progress.best is None else f"{progress.best:.3f}"
        if self.target is not None and progress.best is not None and progress.best >= self.target:
            return f"target reached: best selection mean {best} >= {self.target:g}"
        if self.no_improvement is not None and progress.stale >= self.no_improvement:
            return f"no improvement in {self.no_improvement} iterations (best selection mean {best})"
        return ""


@dataclass(frozen=True)
class EvolveRequest:
    """What one `harnessgit evolve` invocation is asked for: its options, built once."""

    budget: Budget
    seed: int = 0
    auto_merge: bool = False  # a passing gate merges
    merge: bool | None = None  # GEPA's merge proposals; None: [evolve] merge
    stop_file: Path | None = None  # the run stops once this file exists


@dataclass(frozen=True)
class Progress:
    """How far a run has come, for the stoppers. ``best`` is the highest selection mean
    among the programs of the frontier's pool and the candidates this run scored (None
    before the first iteration); ``stale`` counts the iterations in a row, every
    iteration with a record, that did not raise it (GEPA's NoImprovementStopper:
    the first iteration sets it)."""

    seconds: float = 0.0
    best: float | None = None
    stale: int = 0

    def after(self, mean: float | None, seconds: float) -> Progress:
        """The progress once an iteration ended with ``mean`` the best it saw."""
        if mean is not None and (self.best is None or mean > self.best):
            return Progress(seconds, mean, 0)
        return Progress(seconds, self.best, self.stale + 1)


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


@dataclass(frozen=True)
class MergePlan:
    """A merge proposal (GEPA's merge, system-aware): ``first`` and ``second``, two
    frontier members, combined through ``ancestor``, a common ancestor no better than
    either. ``changes`` are relative to ``first`` (path -> blob id and mode); ``files``
    are the harness files the two differ in."""

    first: str  # commits, and their names on the frontier
    first_name: str
    second: str
    second_name: str
    ancestor: str
    changes: dict[str, tuple[str, str]]
    files: list[str]


@dataclass(frozen=True)
class MergeSchedule:
    """GEPA's merge scheduling (gepa/core/engine.py, proposer/merge.py): each iteration
    that adds a program makes one merge due (while fewer than ``max_merges`` merges
    were accepted); the next iteration tries a merge first, if one is due and the
    iteration before it added a program. An accepted merge (it passed its subsample
    test) uses one up; a merge that fails its test still takes the iteration."""

    max_merges: int = 5
    due: int = 0
    accepted: int = 0
    found_new: bool = False  # the last iteration added a program

    def ready(self) -> bool:
        return self.due > 0 and self.found_new

    def after(self, record: IterationRecord) -> MergeSchedule:
        added = record.selection_mean is not None
        if record.move == "merge":
            if added:
                return replace(self, due=self.due - 1, accepted=self.accepted + 1, found_new=False)
            return replace(self, found_new=False)
        if not added:
            return replace(self, found_new=False)
        due = self.due + 1 if self.accepted < self.max_merges else self.due
        return replace(self, due=due, found_new=True)
