"""The search bisect runs along a line of points, from a good end to a bad end.

A point is a harness (a commit) judged for a model label. Bisecting over commits
walks the first-parent chain for one model; bisecting over checkpoints walks a
model's lineage for one harness. Either way the ends are judged first (good's
scores become the baseline), then every point whose scores are on record, for
free, then a binary search evaluates only the probes it needs: N steps cost at
most ceil(log2 N) + 2 evaluations.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from harnessgit.bisect.judge import Judge, Step
from harnessgit.errors import HarnessgitError


class Point(NamedTuple):
    commit: str  # the harness judged
    model: str  # the model label it is judged for


# Position on the line (0 = good, N = bad) -> its judgement, in the order judged.
Known = dict[int, Step]


def bound(steps: int) -> int:
    """The evaluations a search over ``steps`` steps may need: ceil(log2 N) + 2."""
    return math.ceil(math.log2(steps)) + 2


def judge_ends(judge: Judge, points: list[Point], names: tuple[str, str]) -> Known:
    """Good and bad, evaluated if need be (neither may be skipped); good's scores
    become the baseline a drop is measured from. ``names`` say the ends in an error."""
    known: Known = {}
    for position in (0, len(points) - 1):
        point = points[position]
        try:
            summary, source = judge.scores(point.commit, point.model)
        except HarnessgitError as exc:
            which = "good" if position == 0 else "bad"
            raise HarnessgitError(f"cannot evaluate {which} {names[position > 0]}: {exc}") from None
        if position == 0:
            judge.set_baseline(summary)
        known[position] = judge.judge(
            point.commit, position, summary=summary, source=source, model=point.model
        )
    return known


def judge_stored(judge: Judge, points: list[Point], known: Known) -> None:
    """Every point between the ends whose scores are on record: free to judge (the
    cache key is the harness tree, so a merge shares the scores of the candidate it merged)."""
    for position in range(1, len(points) - 1):
        point = points[position]
        stored = judge.stored(point.commit, point.model)
        if stored is not None:
            known[position] = judge.judge(point.commit, position, summary=stored, model=point.model)


class Found(NamedTuple):
    """Where a search ended: the last good and the first bad position, more than one
    apart when points the evaluator failed on hide the answer."""

    last_good: int
    first_bad: int

    @property
    def skipped(self) -> int:
        """The points between the two, none judged (the evaluator failed on each)."""
        return self.first_bad - self.last_good - 1

    def suspects(self, items: list[str]) -> list[str]:
        """``items``' entries for the points after the last good, up to the first bad."""
        return items[self.last_good + 1 : self.first_bad + 1]


def search(judge: Judge, points: list[Point], known: Known) -> Found:
    """After the ends (`judge_ends`): the points on record judged for free, then a
    binary search between the last known good and the first known bad, evaluating
    only the probes, until nothing between them is left to judge."""
    judge_stored(judge, points, known)
    first_bad = min(p for p, step in known.items() if step.state == "bad")
    last_good = max(p for p, step in known.items() if step.state == "good" and p < first_bad)
    while True:
        open_ = [p for p in range(last_good + 1, first_bad) if p not in known]
        if not open_:
            return Found(last_good, first_bad)
        middle = (last_good + first_bad) // 2
        probe = min(open_, key=lambda p: (abs(p - middle), p))  # beside a skipped point when need be
        known[probe] = judge.judge(points[probe].commit, probe, model=points[probe].model)
        if known[probe].state == "bad":
            first_bad = probe
        elif known[probe].state == "good":
            last_good = probe
