"""The frontier's data: a pool of candidates' per-instance scores in, the frontier
out. `frontier` holds GEPA's rule in plain Python, `frontier_arrays` the same rule on a
score matrix; both return these types.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PoolCandidate:
    id: str
    parent: str | None  # None for the base
    scores: list[float]  # one per pool instance, in pool order


@dataclass(frozen=True)
class ScorePool:
    """Candidates by selection instances. ``candidates`` in pool order: the base tip
    first, then candidates in creation order (gepa's program index)."""

    instances: list[str]
    candidates: list[PoolCandidate]

    def __post_init__(self) -> None:
        if not self.instances or not self.candidates:
            raise ValueError("a pool needs at least one instance and one candidate")
        if len(set(self.instances)) != len(self.instances):
            raise ValueError("instance ids must be unique")
        ids = [c.id for c in self.candidates]
        if len(set(ids)) != len(ids):
            raise ValueError("candidate ids must be unique")
        for candidate in self.candidates:
            if len(candidate.scores) != len(self.instances):
                raise ValueError(
                    f"candidate {candidate.id} has {len(candidate.scores)} scores for "
                    f"{len(self.instances)} instances: the pool must be complete"
                )
            if not all(map(math.isfinite, candidate.scores)):
                raise ValueError(f"candidate {candidate.id} has a score that is not a finite number")


@dataclass(frozen=True)
class InstanceFront:
    instance: str
    best_score: float
    best: list[str]  # every candidate with the best score, in pool order
    kept: list[str]  # those that survive dominated-candidate removal


@dataclass(frozen=True)
class FrontierRow:
    candidate: str
    parent: str | None
    mean: float
    instances_led: int  # instances whose pruned front holds this candidate
    weight: int  # GEPA's sampling weight: the instances led


@dataclass(frozen=True)
class Frontier:
    # Frontier candidates in GEPA's sampling order (first appearance in the pruned
    # fronts); sort a copy for display, `sample_parent` relies on this order.
    rows: list[FrontierRow]
    # One per instance, in pool order; left out of `harnessgit frontier --json`, which
    # would otherwise repeat every instance's scores.
    # Built when read: `frontier` and evolve read only how many there are, and at
    # 20,000 candidates x 300 instances building them all took ~0.1 s.
    fronts: Sequence[InstanceFront] = field(metadata={"json": False})
    dominated: list[str]  # led an instance but every front they lead is covered
    never_best: list[str]  # best on no instance

    @property
    def members(self) -> list[str]:
        return [row.candidate for row in self.rows]
