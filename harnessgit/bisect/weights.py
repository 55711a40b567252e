"""Was it the weights? The model step at a fixed harness, beside a bisect over commits.

A drop seen between two scores can be a harness edit, a weights change, or both,
when the scores were taken under different model labels (issue 19: the co-evolution
round alternates harness edits and fine-tuning). Bisect over commits judges every
commit for one model, so its search sees harness edits only. The model step is
measured apart, at the good commit's harness: good's scores under the model it was
measured with (``--good-model``, or the oldest checkpoint ancestor of the judged
model with scores on record there: the whole weights change since) against its
scores under the judged model. When that step alone is bad by the same criterion,
the regression (or part of it) came from the weights, and `bisect --good-model OLD
--bad-model NEW --harness GOOD` finds the checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass

from harnessgit.bisect.judge import Baseline, Judge, Source, instance_scores, verdict
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.batch import EvaluatorError
from harnessgit.evaluation.lineage import lineage, registered


@dataclass(frozen=True)
class ModelChange:
    """Good's harness under the model it was measured with, then under the judged model."""

    harness: str  # the good commit: the harness held fixed
    old: str  # the model good was measured with
    new: str  # the model every commit was judged for
    found: str  # "given" (--good-model) or "on record" (a checkpoint ancestor's stored scores)
    source: Source  # old's scores: stored, or evaluated now (only when given)
    lineage: list[str]  # new back to old along the checkpoint lineage; empty when old is no ancestor
    old_mean: float
    new_mean: float
    regressed: bool  # the weights change alone is bad by the criterion (old good, new bad)
    failing: list[str]  # with --instance: the instances the weights change breaks


def model_change(judge: Judge, good: str, new: str, old: str | None) -> ModelChange | None:
    """The model step at ``good``'s harness, or None when there is none to measure:
    ``old`` not given and no checkpoint ancestor of ``new`` has scores on record there."""
    chain = [new, *lineage(registered(judge.store.notes), new)]
    found = "given"
    if old is None:
        # The oldest ancestor: the whole weights change since good was measured, which
        # `bisect --good-model` can then split checkpoint by checkpoint.
        old = next((m for m in reversed(chain[1:]) if judge.stored(good, m) is not None), None)
        found = "on record"
    if old is None or old == new:
        return None
    try:
        before, source = judge.scores(good, old)
    except EvaluatorError as exc:
        raise HarnessgitError(f"cannot evaluate good {good[:12]} for model {old}: {exc}") from None
    after = judge.stored(good, new)
    assert before.mean is not None and after is not None and after.mean is not None  # good was judged
    baseline = Baseline(mean=before.mean, scores=instance_scores(before))
    was, _ = verdict(judge.criterion, before, baseline)
    now, failing = verdict(judge.criterion, after, baseline)
    return ModelChange(
        harness=good,
        old=old,
        new=new,
        found=found,
        source=source,
        lineage=chain[: chain.index(old) + 1] if old in chain else [],
        old_mean=before.mean,
        new_mean=after.mean,
        regressed=was == "good" and now == "bad",
        failing=failing,
    )
