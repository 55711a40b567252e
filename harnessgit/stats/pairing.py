"""Per-instance scores and their pairing: what every comparison starts from.

Pure: numbers in, numbers out. An instance's score is the mean over its repeats
(the unit of analysis, docs/gate.md), computed here and nowhere else; two sides are
paired on the instances both have, in sorted order (the bootstrap's resamples
depend on the order), which is how the gate decides and how `verify`, `review`,
`bisect` and `evolve` recompute or describe the same comparison.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

# instance -> (mean over repeats, cluster)
Scored = dict[str, tuple[float, str | None]]


def instance_means(rows: Iterable[tuple[str, float, str | None]]) -> Scored:
    """Per instance, the mean of its scores over repeats and its cluster (the first
    one given), from (instance, score, cluster) rows in repeat order."""
    totals: dict[str, list[float]] = {}
    clusters: dict[str, str | None] = {}
    for instance, score, cluster in rows:
        totals.setdefault(instance, []).append(score)
        clusters.setdefault(instance, cluster)
    return {instance: (sum(scores) / len(scores), clusters[instance]) for instance, scores in totals.items()}


@dataclass(frozen=True)
class PairedScores:
    """Base and candidate scores on the same instances, in the same order.

    ``clusters[i]`` names the cluster of instance i (the evaluator's ``cluster``);
    instances of one cluster are resampled together. At least two independent units
    (instances, or distinct clusters) are required: one unit has no variance.
    """

    instances: list[str]
    base: list[float]
    candidate: list[float]
    clusters: list[str] | None = None

    def __post_init__(self) -> None:
        n = len(self.instances)
        if len(self.base) != n or len(self.candidate) != n:
            raise ValueError("base and candidate need one score per instance")
        if len(set(self.instances)) != n:
            raise ValueError("instance ids must be unique")
        for score in (*self.base, *self.candidate):
            if not math.isfinite(score):
                raise ValueError(f"a score must be a finite number, not {score}")
            if not 0.0 <= score <= 1.0:
                raise ValueError(f"a score must be between 0 and 1, not {score}")
        if self.clusters is not None and len(self.clusters) != n:
            raise ValueError("clusters need one entry per instance")
        units = n if self.clusters is None else len(set(self.clusters))
        if units < 2:
            raise ValueError("a paired comparison needs at least two independent units")

    @property
    def differences(self) -> list[float]:
        return [c - b for b, c in zip(self.base, self.candidate, strict=True)]


def pair_scores(base: Scored, candidate: Scored, instances: list[str] | None = None) -> PairedScores | None:
    """The paired scores the gate decides on; `verify` rebuilds them the same way.

    Instances in sorted order; clusters from the candidate's evaluation, else the
    base's; an instance without a cluster is its own. None when fewer than two
    units have both scores.
    """
    common = instances if instances is not None else sorted(i for i in base if i in candidate)
    if len(common) < 2:
        return None
    named = [candidate[i][1] or base[i][1] for i in common]
    clusters = [c or f"instance:{i}" for c, i in zip(named, common, strict=True)]
    clustered = any(named) and len(set(clusters)) >= 2
    return PairedScores(
        instances=common,
        base=[base[i][0] for i in common],
        candidate=[candidate[i][0] for i in common],
        clusters=clusters if clustered else None,
    )
