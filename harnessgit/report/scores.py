"""The score over accepted edits and the failure classes, per commit of the base branch.

Each commit of the base branch's first-parent chain (a REV-RANGE of it) with its
selection mean under the evaluator and model harnessgit.toml names now, read from the
record (`ScoreBook`), a normal 95% interval around it, how it landed (`accepted_log`:
a gated merge, or a commit made without the gate) and the held-out test peeks taken
on it. Reads only.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from harnessgit.candidates.log import LogEntry, TestPeek
from harnessgit.evaluation.scores import ScoreSummary
from harnessgit.review.scores import UNCLASSIFIED

Z95 = 1.959964  # two-sided 95% quantile of the standard normal


@dataclass(frozen=True, kw_only=True)
class ScorePoint:
    """One commit of the base branch, oldest first on the picture's x axis."""

    commit: str
    subject: str
    date: str
    kind: str  # "merge": landed a candidate; "direct": made without harnessgit
    gated: bool  # a gate record on it says the gate let it land
    candidate: str | None
    n: int  # selection instances scored
    mean: float | None
    ci_low: float | None  # mean -/+ 1.96 standard errors, clipped to [0, 1]
    ci_high: float | None
    difference: float | None = None  # the gate's, against the base it was compared with
    peeks: list[TestPeek] = field(default_factory=list)  # test-split looks at this commit


@dataclass(frozen=True, kw_only=True)
class ClassShares:
    """How one commit's selection failures (instances scoring below 1) divide into classes."""

    commit: str
    subject: str
    gated: bool
    failures: int
    classes: dict[str, int]  # failure class -> instances


def score_point(entry: LogEntry, summary: ScoreSummary, peeks: list[TestPeek]) -> ScorePoint:
    low = high = None
    if summary.mean is not None and summary.stderr is not None:
        low = max(0.0, summary.mean - Z95 * summary.stderr)
        high = min(1.0, summary.mean + Z95 * summary.stderr)
    return ScorePoint(
        commit=entry.commit,
        subject=entry.subject,
        date=entry.date,
        kind=entry.kind,
        gated=entry.gate is not None and entry.gate.passed and entry.gate.problem is None,
        candidate=entry.candidate,
        n=summary.n,
        mean=summary.mean,
        ci_low=low,
        ci_high=high,
        difference=entry.gate.difference if entry.gate else None,
        peeks=[peek for peek in peeks if peek.commit == entry.commit],
    )


def class_shares(point: ScorePoint, summary: ScoreSummary) -> ClassShares | None:
    """None when the evaluator reported no failure class for this commit."""
    if not any(item.failure_class for item in summary.instances):
        return None
    failing = [item.failure_class or UNCLASSIFIED for item in summary.instances if item.mean < 1]
    return ClassShares(
        commit=point.commit,
        subject=point.subject,
        gated=point.gated,
        failures=len(failing),
        classes=dict(sorted(Counter(failing).items(), key=lambda item: (-item[1], item[0]))),
    )
