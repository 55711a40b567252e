"""What one report page shows: the data `report.build_report` gathers and
`page.render_page` draws (apart from both, so that neither imports the other)."""

from __future__ import annotations

from dataclasses import dataclass, field

from harnessgit.report.lengths import LengthSteps
from harnessgit.report.scores import ClassShares, ScorePoint
from harnessgit.report.tree import TreeNode
from harnessgit.review.scores import FailureShift, Flips
from harnessgit.stats.frontier_types import FrontierRow


@dataclass(frozen=True, kw_only=True)
class MergeFlips:
    """What `review` says of one gated merge against its first parent."""

    commit: str
    subject: str
    flips: list[Flips]  # per split and model, as `review` finds them
    # Failure classes before and after, per split and model (issue 19: one edit can
    # shift one model's failures into planning and leave another's alone).
    shifts: list[FailureShift] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class Report:
    base: str
    span: str  # the REV-RANGE shown, or the base branch
    points: list[ScorePoint]  # oldest first
    lengths: LengthSteps
    nodes: list[TreeNode]  # creation order
    frontier: list[FrontierRow]
    merges: list[MergeFlips]  # newest first
    classes: list[ClassShares]  # oldest first
    notes: list[str]  # what could not be drawn, and why
