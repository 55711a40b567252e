"""`[gate] models`: the candidate passes on the primary model and loses on no other.

The primary model (``[evaluator] model``) decides as always (docs/gate.md). Each model
in ``[gate] models`` (and each ``gate --model``) besides it is evaluated on the same
selection set for both sides, and the candidate is rejected when Holm's step-down at the
attempt's alpha_k declares a significant loss on any of them (`stats.holm`). This can
only turn a pass into a rejection, so the gate's false-accept guarantee on the primary
model is unchanged; what Holm adds is that a candidate that hurts no model is refused for
a loss on some model with probability at most alpha_k. "No significant loss" is not
"shown not to lose": a small loss on a small set passes (docs/coevolution.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from harnessgit.evaluation.context import EvalContext, eval_context
from harnessgit.evaluation.execution import EvalRequest, Execution, evaluate
from harnessgit.evaluation.models import for_model
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.gate.outcome import GateInputs, Sides
from harnessgit.records import ModelCheck
from harnessgit.render import points
from harnessgit.stats.decision import alpha_for_attempt
from harnessgit.stats.holm import model_losses
from harnessgit.stats.pairing import pair_scores
from harnessgit.store import Objects, Store

SELECTION = "selection"


def other_models(sides: Sides, extra: Sequence[str] = ()) -> list[str]:
    """The models besides the primary that must show no significant loss."""
    primary = sides.candidate.key.model
    listed = [*sides.settings.config.gate.models, *extra]
    return [model for model in dict.fromkeys(listed) if model != primary]


def model_contexts(objects: Objects, sides: Sides, model: str) -> tuple[EvalContext, EvalContext]:
    """(base, candidate) as evaluated for ``model``, under the deciding settings."""
    config = for_model(sides.settings.config, model)
    return eval_context(objects, config, sides.base.commit), eval_context(
        objects, config, sides.candidate.commit
    )


def evaluate_models(
    store: Store, sides: Sides, models: Sequence[str], book: ScoreBook, execution: Execution
) -> None:
    """Run whatever selection scores either side lacks for each of ``models``."""
    for model in models:
        config = for_model(sides.settings.config, model)
        for commit in (sides.base.commit, sides.candidate.commit):
            evaluate(
                store,
                config,
                commit,
                EvalRequest(split=SELECTION),
                execution=execution,
                book=book,
                manifest=sides.settings.manifest,
            )


def with_models(objects: Objects, inputs: GateInputs, book: ScoreBook, models: Sequence[str]) -> GateInputs:
    """``inputs`` with each of ``models``' loss test recorded, and a condition (so a
    rejection) for every significant loss and every model without scores on both sides."""
    if not models:
        return inputs
    sides, gate = inputs.sides, inputs.sides.settings.config.gate
    ids = sorted(inputs.read) if inputs.read is not None else sides.settings.manifest.ids(SELECTION)
    flipped, conditions, missing = {}, list(inputs.conditions), []
    read: list[str] = []  # the eval records the loss tests read, named in the gate record
    commands = list(inputs.not_evaluated)
    for model in models:
        base, candidate = model_contexts(objects, sides, model)
        before = book.summary(base.key, SELECTION, ids, for_decision=True)
        after = book.summary(candidate.key, SELECTION, ids, for_decision=True)
        paired = pair_scores(after.scored(), before.scored())  # candidate as base: a loss is > 0
        read += before.records + after.records
        if before.missing or after.missing or paired is None:
            missing.append(model)
            run = [
                f"harnessgit eval {who} --split selection --model {model}"
                for who, summary in ((sides.shown, before), (sides.label, after))
                if summary.missing or paired is None
            ]
            commands += run
            conditions.append(
                f"not evaluated for model {model} on the whole selection split: run " + " and ".join(run)
            )
        else:
            flipped[model] = paired
    alpha_k = alpha_for_attempt(gate.alpha, inputs.attempt)
    losses = model_losses(flipped, alpha_k, method=gate.method, resamples=gate.resamples, seed=gate.seed)
    for loss in losses:
        if loss.loss:
            conditions.append(
                f"a significant loss on model {loss.model}: {points(loss.difference)} points "
                f"(p = {loss.p_value:.2g} <= Holm's level {loss.level:.2g} at alpha_k = {alpha_k:.2g} "
                f"over {len(models)} other model{'s' if len(models) > 1 else ''})"
            )
    checks = [ModelCheck(**dataclasses.asdict(loss)) for loss in losses]
    checks += [ModelCheck(model=model, n=0) for model in missing]
    return dataclasses.replace(
        inputs, conditions=conditions, not_evaluated=commands, models=checks, model_records=read
    )
