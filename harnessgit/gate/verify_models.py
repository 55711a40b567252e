"""`verify`'s per-model part: do a merge's loss tests on other models hold up?

A gate record under ``[gate] models`` (or ``gate --model``) carries one loss test per
other model (`harnessgit.gate.models`): the gate refused the merge if any showed a
significant loss by Holm's step-down at alpha_k. `verify` recomputes the main decision
from the stored scores; this recomputes the per-model ones the same way, so a record
that claims "no loss on beta" is held to beta's scores. Findings:

- a model that ``[gate] models`` at the merge's base lists, but the record never tested;
- a tested model without stored scores for both sides on the whole selection split (a
  record naming a model nobody evaluated), or recorded with none and passed anyway;
- a test that does not recompute (another n, difference, p-value, Holm level or verdict);
- a passing record with a significant loss on some model.

Kept apart from `harnessgit.gate.verify`'s main check, which reads the scores through
the ``scores`` function it is handed, so both read the records the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from harnessgit.errors import ConfigError
from harnessgit.evaluation.context import Key
from harnessgit.evaluation.splits import ManifestError
from harnessgit.gate.settings import committed_settings
from harnessgit.records import GateRecord, ModelCheck
from harnessgit.render import listing, points
from harnessgit.stats.holm import ModelLoss, model_losses
from harnessgit.stats.pairing import PairedScores, Scored, pair_scores
from harnessgit.store import Objects

SELECTION = "selection"


def model_problems(objects: Objects, gate: GateRecord, scores: Callable[[Key], Scored]) -> list[str]:
    """What does not hold in ``gate``'s per-model loss tests. ``scores``: a key's
    stored scores as the gate saw them (instance -> (mean, cluster))."""
    try:
        settings = committed_settings(objects, gate.base, what=f"the base {gate.base[:12]}")
    except (ConfigError, ManifestError):
        return []  # the main check reports settings that cannot be read
    required = [m for m in dict.fromkeys(settings.config.gate.models) if m != gate.model]
    recorded = {check.model: check for check in gate.models or []}
    problems = []
    untested = [m for m in required if m not in recorded]
    if untested:
        problems.append(
            f"[gate] models at its base lists {listing(untested)}, but the gate record holds no "
            "loss test for " + ("it" if len(untested) == 1 else "them")
        )
    ids = set(settings.manifest.ids(SELECTION))
    paired: dict[str, PairedScores] = {}
    for check in recorded.values():
        found = _paired(gate, check.model, scores, ids)
        if isinstance(found, str):
            if check.n or gate.passed:
                problems.append(f"model {check.model}: {found}")
        elif not check.n:
            problems.append(
                f"model {check.model}: recorded as not evaluated, but {len(found.instances)} instances are"
            )
        else:
            paired[check.model] = found
    # With a member of Holm's family missing, its levels (and the p-values, tested at the
    # smallest level) cannot be recomputed; each model's n and difference still can.
    family = len(paired) == len([c for c in recorded.values() if c.n])
    losses = model_losses(paired, gate.alpha_k, method=gate.method, resamples=gate.resamples, seed=gate.seed)
    for loss in losses:
        problems += _differs(recorded[loss.model], loss, family)
        if loss.loss and gate.passed:
            problems.append(
                f"model {loss.model}: the gate record passed with a significant loss of "
                f"{points(loss.difference)} points (p = {loss.p_value:.2g} <= Holm's level {loss.level:.2g})"
            )
    return problems


def _paired(
    gate: GateRecord, model: str, scores: Callable[[Key], Scored], ids: set[str]
) -> PairedScores | str:
    """Both sides' scores for ``model`` on the whole selection split, paired with the
    candidate as base (a loss is > 0), as `harnessgit.gate.models.with_models` pairs
    them; or why they cannot be."""
    before = {
        i: row for i, row in scores(Key(gate.base_harness, gate.fingerprint, model)).items() if i in ids
    }
    after = {i: row for i, row in scores(Key(gate.harness, gate.fingerprint, model)).items() if i in ids}
    lacking = {
        side: len(ids - rows.keys())
        for side, rows in (("base", before), ("candidate", after))
        if ids - rows.keys()
    }
    found = pair_scores(after, before)
    if lacking or found is None:
        sides = " and ".join(f"the {side} on {n}" for side, n in lacking.items()) or "both sides on most"
        return f"no stored scores for {sides} of the {len(ids)} selection instances its loss test needs"
    return found


def _differs(check: ModelCheck, loss: ModelLoss, family: bool) -> list[str]:
    """The recorded test against its recomputation: one finding when any part differs
    (only n and the difference when Holm's ``family`` could not be rebuilt whole)."""
    recorded: tuple[float | None, ...] = (check.n, check.difference, check.p_value, check.level, check.loss)
    again: tuple[float | None, ...] = (loss.n, loss.difference, loss.p_value, loss.level, loss.loss)
    kept = len(recorded) if family else 2
    if all(_same(a, b) for a, b in zip(recorded[:kept], again[:kept], strict=True)):
        return []
    return [
        f"model {check.model}: the loss test does not recompute from the stored scores: recorded "
        f"n={check.n}, difference {points(check.difference)}, p = {_p(check.p_value)}, "
        f"{'loss' if check.loss else 'no loss'}; recomputed n={loss.n}, difference "
        f"{points(loss.difference)}, p = {loss.p_value:.2g}, {'loss' if loss.loss else 'no loss'}"
    ]


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}"
