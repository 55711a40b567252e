"""What a review says about scores: the table, the flipped instances, the failure classes.

Pure: score summaries in, frozen dataclasses out (the statistics are
`stats.decision.decide`, the gate's own, on scores paired by `stats.pairing`);
`review` fills in feedback and trajectories.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from harnessgit.canonical import dumps_canonical
from harnessgit.evaluation.scores import ScoreSummary
from harnessgit.stats.decision import GateDecision, GateRules, decide
from harnessgit.stats.pairing import pair_scores

UNCLASSIFIED = "(no class)"
# Keys under which evaluators commonly keep a trajectory's steps.
_STEP_KEYS = ("steps", "messages", "turns", "actions", "events", "trajectory")


@dataclass(frozen=True, kw_only=True)
class ScoreRow:
    split: str
    model: str
    fingerprint: str
    current: bool  # the evaluator and model harnessgit.toml names now
    held_out: bool  # the test split: reported, never decides
    decides: bool  # the gate's row: selection split, current evaluator and model
    split_size: int
    base_n: int  # instances of the split with a score on the base: its coverage
    head_n: int
    n: int  # instances with a score on both sides: what is compared
    # Means over the n instances both sides have; None when fewer than two are
    # shared (a base scored on 60 train instances and a head on a 3-instance
    # minibatch are not comparable by their means).
    base_mean: float | None
    base_se: float | None
    head_mean: float | None
    head_se: float | None
    difference: float | None = None  # head - base, per instance, averaged
    ci_low: float | None = None  # two-sided 95% interval of the difference
    ci_high: float | None = None
    p_value: float | None = None
    mde: float | None = None  # minimum detectable effect at the row's level
    alpha: float | None = None  # the level of the p-value's test (alpha_k for the gate's row)
    wins: int = 0
    losses: int = 0
    ties: int = 0


@dataclass(frozen=True, kw_only=True)
class Flip:
    instance: str
    base_score: float
    head_score: float
    base_feedback: str | None = None
    head_feedback: str | None = None
    base_class: str | None = None
    head_class: str | None = None
    trajectory: str | None = None  # an excerpt from the side that failed
    trajectory_side: str | None = None  # "base" or "head"


@dataclass(frozen=True, kw_only=True)
class Flips:
    split: str
    model: str
    fixed: list[Flip]  # head scores higher; the first few, largest change first
    regressed: list[Flip]  # head scores lower
    fixed_count: int
    regressed_count: int


@dataclass(frozen=True, kw_only=True)
class ClassShare:
    failure_class: str
    base_count: int
    base_share: float | None  # of the base's failures; None without failures
    head_count: int
    head_share: float | None


@dataclass(frozen=True, kw_only=True)
class FailureShift:
    """How the failures divide into the evaluator's classes, before and after.

    The co-evolution paper's signature of a harness/model mismatch: planning
    failures went from 1.1% to 14.6% of failures (arXiv 2609.09134)."""

    split: str
    model: str
    base_failures: int  # instances scoring below 1
    head_failures: int
    classes: list[ClassShare]


def score_row(
    split: str,
    base: ScoreSummary,
    head: ScoreSummary,
    gate: GateRules,
    *,
    split_size: int,
    current: bool,
    held_out: bool,
    decision: GateDecision | None = None,
) -> ScoreRow:
    """One line of the score table: the two sides on the instances both have, and
    each side's coverage. ``decision`` is the gate's own verdict for the row it
    decides on (so the table and the verdict agree on attempt k); other rows are
    described at attempt 1: they decide nothing, so they spend nothing."""
    before, after = base.scored(), head.scored()
    paired = pair_scores(before, after)
    row = ScoreRow(
        split=split,
        model=base.model,
        fingerprint=base.fingerprint,
        current=current,
        held_out=held_out,
        decides=decision is not None,
        split_size=split_size,
        base_n=base.n,
        head_n=head.n,
        n=len(before.keys() & after.keys()),
        base_mean=None,
        base_se=None,
        head_mean=None,
        head_se=None,
    )
    if paired is None:
        return row
    if decision is None:
        decision = decide(paired, gate, attempt=1, allow_small=True)
    c = decision.comparison
    return dataclasses.replace(
        row,
        base_mean=c.base.mean,
        base_se=c.base.se,
        head_mean=c.candidate.mean,
        head_se=c.candidate.se,
        difference=c.difference.mean,
        ci_low=decision.bound.ci_low,
        ci_high=decision.bound.ci_high,
        p_value=decision.bound.p_value,
        mde=decision.mde,
        alpha=decision.alpha_k,
        wins=c.wins,
        losses=c.losses,
        ties=c.ties,
    )


def flipped(base: ScoreSummary, head: ScoreSummary) -> tuple[list[str], list[str]]:
    """(fixed, regressed): instances that score higher / lower on the head, the
    largest change first, then by name."""
    before = {item.instance: item.mean for item in base.instances}
    changes = [
        (item.mean - before[item.instance], item.instance)
        for item in head.instances
        if item.instance in before and item.mean != before[item.instance]
    ]
    fixed = [name for delta, name in sorted(changes, key=lambda c: (-c[0], c[1])) if delta > 0]
    regressed = [name for delta, name in sorted(changes, key=lambda c: (c[0], c[1])) if delta < 0]
    return fixed, regressed


def failure_shift(split: str, base: ScoreSummary, head: ScoreSummary) -> FailureShift | None:
    """Failures (instances scoring below 1) by class on each side; None when the
    evaluator reported no failure classes on either side, or neither side failed on
    an instance both scored (an empty table says nothing)."""
    if not any(item.failure_class for item in (*base.instances, *head.instances)):
        return None
    common = {item.instance for item in base.instances} & {item.instance for item in head.instances}

    def count(summary: ScoreSummary) -> tuple[int, dict[str, int]]:
        failures = [item for item in summary.instances if item.instance in common and item.mean < 1]
        classes: dict[str, int] = {}
        for item in failures:
            name = item.failure_class or UNCLASSIFIED
            classes[name] = classes.get(name, 0) + 1
        return len(failures), classes

    base_total, base_classes = count(base)
    head_total, head_classes = count(head)
    if not base_total and not head_total:
        return None  # no failure on the instances both sides scored: nothing to divide (issue 27)
    names = sorted(set(base_classes) | set(head_classes))
    shares = [
        ClassShare(
            failure_class=name,
            base_count=base_classes.get(name, 0),
            base_share=base_classes.get(name, 0) / base_total if base_total else None,
            head_count=head_classes.get(name, 0),
            head_share=head_classes.get(name, 0) / head_total if head_total else None,
        )
        for name in names
    ]
    # The classes that moved most first: that is what a reviewer looks for.
    shares.sort(key=lambda s: (-abs((s.head_share or 0) - (s.base_share or 0)), s.failure_class))
    return FailureShift(
        split=split, model=base.model, base_failures=base_total, head_failures=head_total, classes=shares
    )


def excerpt(trajectory: Any, limit: int = 400, steps: int = 3) -> str | None:
    """A short look at a trajectory: its last few steps (where failures usually
    show), else its compact JSON, cut to ``limit`` characters."""
    if trajectory is None:
        return None
    items: list[Any] | None = trajectory if isinstance(trajectory, list) else None
    if isinstance(trajectory, dict):
        found = next((trajectory[k] for k in _STEP_KEYS if isinstance(trajectory.get(k), list)), None)
        items = found
    if items:
        shown = [compact(item) for item in items[-steps:]]
        earlier = len(items) - len(shown)
        text = (f"[{earlier} earlier steps] " if earlier else "") + " | ".join(shown)
    else:
        text = compact(trajectory)
    return cut(text, limit)


def cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, an ellipsis marking a cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compact(value: Any) -> str:
    """A string on one line, anything else as compact JSON (keys sorted, so it repeats)."""
    if isinstance(value, str):
        return " ".join(value.split())
    return dumps_canonical(value)
