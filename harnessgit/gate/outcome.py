"""What one gate decision is: who it compares (`Sides`), what it read before deciding
(`GateInputs`), and what it decided (`GateOutcome`). Built by `harnessgit.gate.gate`;
read by merge, review, evolve and the renderers."""

from __future__ import annotations

from dataclasses import dataclass, field

from harnessgit.check_findings import CheckReport, Finding
from harnessgit.evaluation.context import EvalContext
from harnessgit.evaluation.scores import ScoreSummary
from harnessgit.gate.settings import Settings
from harnessgit.records import GateRecord, ModelCheck
from harnessgit.stats.decision import GateDecision
from harnessgit.stats.verdict import DEFAULT_PRIOR, Prior
from harnessgit.targets import Target


@dataclass(frozen=True)
class Sides:
    """Who the gate compares: the candidate and the base commit, with their cache keys."""

    target: Target
    branch: str
    base: EvalContext
    candidate: EvalContext
    label: str  # the candidate as messages name it
    shown: str  # the base as messages name it: the branch, or a commit for `review`
    settings: Settings  # what decides: the base commit's harnessgit.toml and manifest


@dataclass(frozen=True)
class GateInputs:
    """Everything the gate reads before it decides, from the store and the record."""

    sides: Sides
    split_hash: str
    base_scores: ScoreSummary
    candidate_scores: ScoreSummary
    checks: CheckReport
    attempt: int
    gate_notes: str | None  # the gate notes' tip the attempt was counted at
    conditions: list[str]  # failures found before any statistics: the refusals, missing scores
    not_evaluated: list[str]  # commands that would supply the missing scores
    failing_checks: list[str]  # one line per failing check finding
    # [gate] models: the other models' loss tests (`harnessgit.gate.models`)
    models: list[ModelCheck] = field(default_factory=list)
    model_records: list[str] = field(default_factory=list)  # ids of the eval records they read
    prior: Prior = DEFAULT_PRIOR  # the prior of true gains, from the earlier gate records
    passed_before: int = 0  # policy elond's D: comparisons on this set that passed before
    read: list[str] | None = None  # sequential evaluation: the instances read; None: the split
    # The (gain, se) pairs the prior was learned from when the caller gave them (evolve's
    # screened looks); None: the prior is the gate records' (`prior_before`).
    prior_gains: list[tuple[float, float]] | None = None


@dataclass(frozen=True)
class GateOutcome:
    """One gate decision. Its ``--json`` form is the gate record's fields, then the
    verdict, the detectable-effect sentence, the missing-score commands and the
    failing and warning check findings."""

    record: GateRecord = field(metadata={"json": "flatten"})
    verdict: str  # "pass", "fail" or "inconclusive"
    detectable: str | None
    not_evaluated: list[str]
    check_findings: list[Finding]
    inputs: GateInputs = field(metadata={"json": False})
    decision: GateDecision | None = field(metadata={"json": False})  # None: fewer than two paired
    instances: bytes | None = field(default=None, metadata={"json": False})  # the listing blob's content
    # the ids of the eval records it read, one per line: the content of the record's `evals` blob
    evals: bytes | None = field(default=None, metadata={"json": False})

    @property
    def passed(self) -> bool:
        return self.record.passed

    @property
    def target(self) -> Target:
        return self.inputs.sides.target

    @property
    def base(self) -> EvalContext:
        return self.inputs.sides.base

    @property
    def candidate(self) -> EvalContext:
        return self.inputs.sides.candidate

    @property
    def checks(self) -> CheckReport:
        return self.inputs.checks
