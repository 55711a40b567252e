"""The records of optimisation runs: each iteration of `harnessgit evolve` (or of a
recorded GEPA run), and a recorded run as a whole."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from harnessgit.records.base import Count, Record, Score, Seconds


class IterationRecord(Record):
    """One iteration of `harnessgit evolve`, on the parent commit it started from.

    Rejected proposals stay on the record too (GEPA forgets them, gepa #379): with
    their reason here and the proposer's raw output as evidence.
    """

    kind: Literal["evolve-iteration"] = "evolve-iteration"
    run: str  # id of the evolve invocation
    seed: int
    iteration: Count  # counts across resumed runs with the same seed
    parent: str  # commit
    parent_name: str  # candidate id or base branch
    component: str
    minibatch: list[str]
    parent_score: Score | None = None  # minibatch mean
    candidate: str | None = None
    commit: str | None = None
    candidate_score: Score | None = None
    # skipped-perfect | rejected-proposal | rejected-checks | not-better | not-gated | conflict |
    # gate-refused | gate-failed | gate-inconclusive | gate-passed | merged | budget |
    # interrupted (gate-rejected: a record from before three verdicts)
    outcome: str
    reason: str = ""
    files: list[str] = Field(default_factory=list)  # conflict: the harness files that conflicted
    # reflect (one proposer edit) | merge (two frontier candidates combined) | adopt (the
    # one gate at the end of a run on the frontier's best member: harnessgit.evolve.adopt)
    move: str = "reflect"
    other_parent: str | None = None  # merge: the second parent (commit), with its name
    other_parent_name: str | None = None
    ancestor: str | None = None  # merge: their common ancestor (commit)
    selection_mean: Score | None = None
    proposer: str = ""
    cost_usd: float | None = None  # the proposer's, as it reported it
    evaluator_cost_usd: float | None = None  # evaluator "usd" costs this iteration ran
    proposals: Count | None = None  # proposer calls (older records: see `proposer_calls`)
    rollouts: Count = 0  # evaluator rollouts this iteration ran (cached ones excluded)
    seconds: Seconds | None = None  # wall time of the iteration
    evaluator_seconds: Seconds | None = None  # of which evaluator processes ran
    proposer_seconds: Seconds | None = None  # of which the proposer took
    # Who ran the loop: None is `harnessgit evolve`; "gepa" an iteration of a GEPA run
    # recorded by harnessgit.integrations.gepa (its outcomes: accepted, rejected,
    # merge-accepted, merge-rejected, skipped, error).
    optimizer: str | None = None

    @property
    def proposer_calls(self) -> int:
        """Proposer calls this iteration made; records written before ``proposals``
        existed made one unless the minibatch was already solved."""
        if self.proposals is not None:
            return self.proposals
        return 0 if self.outcome == "skipped-perfect" else 1


class RunRecord(Record):
    """One optimisation run as a whole, on the commit it started from: what bounded
    it, why it stopped, and where it ended. Written once, when the run ends (a run
    killed before its end has iteration records and no run record)."""

    kind: Literal["run"] = "run"
    run: str  # the id its iteration records carry
    optimizer: str  # "gepa"
    seed: int
    base: str  # the commit the run started from (GEPA's seed candidate)
    budget: Count | None = None  # max metric calls, when the run had that bound
    metric_calls: Count = 0
    iterations: Count = 0
    candidates: Count = 0  # proposals recorded, accepted and rejected
    stop_reason: str
    best: str | None = None  # commit of the optimiser's best candidate at the end
    fingerprint: str = ""  # the evaluator fingerprint of its eval records
    model: str = ""
    seconds: Seconds | None = None
