"""Why a bad edit got onto the base branch: pure reasoning over its records.

Given what bisect measured (the first bad edit against the commit before it, and
the whole drop since good) and what the record holds (a gate record, an override,
or nothing), name the check it slipped through: no gate at all, a gate that
looked at another split, evaluator, model or selection set, a gate that judged
the mean while one instance broke, a gate allowed to accept losses, scores that
changed after the decision, or an effect under the gate's minimum detectable effect.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from harnessgit.bisect.judge import Criterion
from harnessgit.evaluation.scores import ScoreSummary
from harnessgit.records import GateRecord, OverrideRecord, view_of
from harnessgit.render import points
from harnessgit.stats.decision import compare
from harnessgit.stats.pairing import Scored, pair_scores

Kind = Literal["gated merge", "override", "merge without a gate record", "direct commit", "before harnessgit"]
_EPSILON = 1e-9


@dataclass(frozen=True)
class OwnEffect:
    """The first bad edit against the commit just before it, on the judged instances."""

    n: int
    before: float | None
    after: float | None
    difference: float | None  # after - before, averaged over instances
    se: float | None  # of the difference; None with fewer than two instances
    wins: int = 0
    losses: int = 0
    ties: int = 0
    regressed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Measured:
    """What the scores bisect judged were made with."""

    fingerprint: str
    model: str
    split_hash: str


def own_effect(before: ScoreSummary, after: ScoreSummary) -> OwnEffect:
    old, new = before.scored(), after.scored()
    paired = pair_scores(old, new)
    if paired is None:
        return _one_instance(old, new, before.mean, after.mean)
    c = compare(paired)
    # n, wins, losses, ties and regressed: the comparison's own
    return view_of(
        OwnEffect,
        c,
        before=c.base.mean,
        after=c.candidate.mean,
        difference=c.difference.mean,
        se=c.difference.se,
    )


def _one_instance(old: Scored, new: Scored, before: float | None, after: float | None) -> OwnEffect:
    """Fewer than two instances in common (bisect judging one --instance): there is
    no comparison to make, only that one instance's change, if there is one."""
    common = [instance for instance in sorted(old) if instance in new]
    if not common:
        return OwnEffect(n=0, before=before, after=after, difference=None, se=None)
    (instance,) = common  # pair_scores pairs any two or more
    change = new[instance][0] - old[instance][0]
    return OwnEffect(
        n=1,
        before=before,
        after=after,
        difference=change,
        se=None,
        wins=int(change > 0),
        losses=int(change < 0),
        ties=int(change == 0),
        regressed=[instance] if change < 0 else [],
    )


def accepted_on(gate: GateRecord) -> str:
    """The evidence the gate accepted the edit on, in one sentence."""
    verdict = "passed" if gate.passed else "rejected"
    text = (
        f"the gate {verdict} it at attempt {gate.attempt} (alpha_k {gate.alpha_k:.3g}) on {gate.n} "
        f"{gate.split} instances, model {gate.model}: {points(gate.base_mean, False)} -> "
        f"{points(gate.candidate_mean, False)} ({points(gate.difference)} points, 95% CI "
        f"[{points(gate.ci_low)}, {points(gate.ci_high)}]"
    )
    if gate.p_value is not None:
        text += f", p = {gate.p_value:.2g}"
    text += f"; wins/losses/ties {gate.wins}/{gate.losses}/{gate.ties})"
    if gate.mde is not None:
        text += f"; it could not see effects under {points(gate.min_effect + gate.mde, False)} points"
    return text


@dataclass(frozen=True)
class Landing:
    """How the edit reached the base branch: what its records hold about it."""

    kind: Kind
    gate: GateRecord | None = None
    override: OverrideRecord | None = None
    gate_instances: list[str] | None = None  # the instances the gate compared, when known
    # The edit changed files the evaluator depends on (its evaluator fingerprint differs
    # from the commit before it's), so its scores and the ones before it come from
    # different graders.
    grader_changed: bool = False
    # It changed them, but both sides were scored with one evaluator, so the drop is its
    # harness edit's.
    regrade: bool = False


def slipped_through(
    landing: Landing,
    criterion: Criterion,
    *,
    own: OwnEffect,
    cumulative: float | None,
    measured: Measured,
    failing: list[str] | None = None,
) -> list[str]:
    """The checks the edit got past, most decisive first; every sentence is about this edit."""
    kind, gate, override = landing.kind, landing.gate, landing.override
    grader_changed, regrade = landing.grader_changed, landing.regrade
    reasons = []
    if regrade and not grader_changed:
        reasons.append(
            "it also changed files the evaluator depends on (a regrade); both sides were scored with "
            "one evaluator, so the drop measured is its harness edit's"
        )
    if grader_changed:
        reasons.append(
            "it changed files the evaluator depends on (its evaluator fingerprint differs from the "
            "commit before it): the scores on either side come from different graders, so the drop "
            "may be the grader's, not the harness's"
        )
    reasons += _ungated(kind, override)
    if gate is not None:
        reasons += _gated(criterion, gate, own, measured, failing or [], landing.gate_instances)
    if not criterion.per_instance and own.difference is not None and cumulative is not None:
        earlier = cumulative - own.difference
        if earlier < -_EPSILON:
            reasons.append(
                f"its own effect, {points(own.difference)} points against the commit before it, is only "
                f"part of the {points(cumulative)} points lost since good: earlier edits lost "
                f"{points(earlier)}, each too little to cross the line on its own"
            )
    if gate is not None and not reasons:
        reasons.append(
            "its gate record does not explain the drop; `harnessgit verify` re-checks whether the decision "
            "recomputes from the stored scores"
        )
    return reasons


def _ungated(kind: Kind, override: OverrideRecord | None) -> list[str]:
    if kind == "override" and override is not None:
        return [
            f"it landed as an ungated override ({override.action}) by {override.author}: "
            f"“{override.reason}”; no gate measured it"
        ]
    if kind == "before harnessgit":
        return [
            "it was committed before harnessgit was set up (no harnessgit.toml before it): "
            "no gate measured it"
        ]
    if kind == "direct commit":
        return [
            "it was committed straight to the base branch, with no gate record or override: "
            "no gate measured it (`harnessgit verify` reports such commits)"
        ]
    if kind == "merge without a gate record":
        return [
            "it is a merge made outside harnessgit, with no gate record or override on it: "
            "no gate measured it (`harnessgit verify` reports such commits)"
        ]
    return []


def _gated(
    criterion: Criterion,
    gate: GateRecord,
    own: OwnEffect,
    measured: Measured,
    failing: list[str],
    gate_instances: list[str] | None,
) -> list[str]:
    reasons = []
    if not gate.passed:
        reasons.append(
            "its gate record says the gate rejected it, yet it was merged (`harnessgit verify` flags this)"
        )
    if criterion.split != gate.split:
        return [
            *reasons,
            f"the regression is on the {criterion.split} split, which the gate never looks at: it "
            f"decides on the {gate.split} split alone, where it measured {points(gate.difference)} points",
        ]
    elsewhere = _measured_elsewhere(gate, measured)
    reasons += elsewhere
    if criterion.per_instance:
        reasons += _instances(gate, failing, gate_instances, same=not elsewhere)
    elif own.difference is not None and own.difference < 0:
        reasons += _mean_loss(gate, own.difference, same=not elsewhere)
    if gate.allow_small:
        reasons.append(
            f"the gate ran with --allow-small on {gate.n} instances, fewer than min_instances "
            f"{gate.min_instances}"
        )
    return reasons


def _measured_elsewhere(gate: GateRecord, measured: Measured) -> list[str]:
    """How the gate's scores differ in origin from the ones bisect judged: none when
    they came from the same evaluator, model and selection set."""
    reasons = []
    if gate.fingerprint != measured.fingerprint:
        reasons.append(
            f"the gate's scores came from another evaluator (fingerprint {gate.fingerprint[:12]}; the scores "
            f"judged now, {measured.fingerprint[:12]}): the evaluator changed after the gate decided"
        )
    if gate.model != measured.model:
        reasons.append(
            f"the gate measured model {gate.model}; the regression shows on model {measured.model}"
        )
    if gate.split_hash != measured.split_hash:
        reasons.append(
            "the selection set changed after the gate decided: the instances it compared are not "
            "the ones judged now"
        )
    return reasons


def _mean_loss(gate: GateRecord, difference: float, same: bool) -> list[str]:
    """Why a gate that judges the mean let this loss of the mean (``difference`` < 0)
    through; ``same``: its scores came from the evaluator, model and selection set judged now."""
    reasons = []
    if gate.min_effect < 0:
        reasons.append(
            f"the gate was allowed to accept a loss of up to {points(-gate.min_effect, False)} points "
            f"(min_effect {gate.min_effect:g})"
        )
    if same and gate.difference is not None and gate.difference >= 0:
        reasons.append(
            f"the gate measured {points(gate.difference)} points, but the scores on record now give "
            f"{points(difference)} for the same edit: they were evaluated again after the decision "
            "(a --no-cache run or more repeats), and the gate had seen a luckier draw"
        )
    if gate.mde is not None and abs(difference) < gate.mde:
        reasons.append(
            f"an effect of {points(difference)} points is under the gate's minimum detectable effect, "
            f"{points(gate.mde, False)} points on {gate.n} instances: the gate could not tell it from noise"
        )
    return reasons


def _instances(gate: GateRecord, failing: list[str], compared: list[str] | None, same: bool) -> list[str]:
    reasons = []
    for instance in failing:
        if compared is not None and instance not in compared:
            reasons.append(f"instance {instance} was not among the {gate.n} instances the gate compared")
        elif instance in gate.regressed:
            reasons.append(
                f"the gate saw instance {instance} regress ({gate.losses} losses against {gate.wins} "
                f"wins) and passed the edit on its net {points(gate.difference)} points: it judges the "
                "mean, not single instances"
            )
        elif gate.regressed_count > len(gate.regressed):
            reasons.append(
                f"the gate counted {gate.regressed_count} regressed instances (it names the first "
                f"{len(gate.regressed)}; {instance} may be among the rest) and passed the edit on its net "
                f"{points(gate.difference)} points: it judges the mean, not single instances"
            )
        elif same:
            reasons.append(
                f"the gate's scores did not show instance {instance} regress: its scores on record "
                "changed after the decision (a --no-cache run or more repeats)"
            )
    return reasons
