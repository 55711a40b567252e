"""Evolve's judgement calls, pure: which component to edit, whether a candidate goes
to the gate, and the gain to report for it."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from harnessgit.config import GateSection
from harnessgit.proposers import ReflectiveExample
from harnessgit.render import points
from harnessgit.stats.bootstrap import SMALLEST_ALPHA
from harnessgit.stats.decision import alpha_for_attempt, compare, decide
from harnessgit.stats.pairing import PairedScores, Scored, pair_scores
from harnessgit.stats.verdict import DEFAULT_PRIOR, Prior


def choose_component(
    components: list[str], iteration: int, rule: str, examples: list[ReflectiveExample]
) -> str:
    """The harness file to edit: round-robin, or the one the failures mention most.

    ``most-failures`` counts, over the minibatch's failed examples, how often each
    component's file name appears in the feedback and trajectory excerpt (evaluators
    commonly name the skill or tool a step used); with no mention at all it falls
    back to round-robin, and a tie goes round-robin among the leaders.
    """
    fallback = components[iteration % len(components)]
    if rule != "most-failures" or len(components) == 1:
        return fallback
    failed = [f"{e.feedback}\n{e.trajectory or ''}".lower() for e in examples if (e.score or 0.0) < 1.0]
    counts = {
        path: sum(text.count(path.rsplit("/", 1)[-1].lower()) for text in failed) for path in components
    }
    best = max(counts.values(), default=0)
    if best == 0:
        return fallback
    leaders = [path for path in components if counts[path] == best]
    return leaders[iteration % len(leaders)]


@dataclass(frozen=True)
class Look:
    """One candidate scored on the selection split: its gain over the base and the
    gain's standard error (points / 100)."""

    gain: float
    se: float


@dataclass
class Looks:
    """A run's looks at candidates against one base harness (they reset when the base
    moves, where the next gate attempt's level takes over)."""

    base: str = ""
    seen: list[Look] = field(default_factory=list)
    # Every look of the run, against whichever base was current: what the screened
    # prior is learned from (`harnessgit.stats.screen`).
    every: list[Look] = field(default_factory=list)

    def add(self, base: str, look: Look) -> int:
        """Record ``look`` against ``base``: its number among this base's looks."""
        if base != self.base:
            self.base, self.seen = base, []
        self.seen.append(look)
        self.every.append(look)
        return len(self.seen)


@dataclass(frozen=True)
class Verdict:
    gate: bool
    reason: str  # why not gated; on gating, what the look found
    level: float | None = None  # the level this look was tested at
    estimate: float | None = None  # the gain corrected for selection among the looks


def looks_allowed(
    max_rollouts: int | None, max_proposals: int | None, selection: int, minibatch: int
) -> int | None:
    """The most candidates a run can score on the selection split: each look costs a
    proposal and, new, at least its minibatch and the selection split in rollouts.
    None when neither budget is set."""
    bounds = [max_proposals] if max_proposals is not None else []
    if max_rollouts is not None:
        bounds.append(max_rollouts // (selection + minibatch))
    return max(1, min(bounds)) if bounds else None


def look_level(alpha_k: float, look: int, allowed: int | None) -> float:
    """The level look ``look`` against one base is tested at, out of the next gate
    attempt's ``alpha_k``: split evenly over the looks the budget allows, else
    alpha_k * 6 / (pi^2 j^2). The levels of one base's looks add up to at most alpha_k,
    whichever look is gated, so the gate's family-wise rate holds although evolve
    chooses what to gate from the same selection scores; 0 past the allowance."""
    if allowed is None:
        return alpha_k * 6 / (math.pi**2 * look**2)
    return alpha_k / allowed if look <= allowed else 0.0


def corrected_gain(seen: Sequence[Look], look: Look) -> float:
    """The gain of ``look`` shrunk towards the mean of the looks against its base by
    the share of their spread that noise explains (empirical Bayes, method of
    moments): evolve gates the luckiest draws, and their observed gain overstates the
    true one. With fewer than three looks the spread is unknown: no shrinkage."""
    if len(seen) < 3:
        return look.gain
    gains = [x.gain for x in seen]
    centre = statistics.fmean(gains)
    noise = statistics.fmean(x.se**2 for x in seen)
    signal = max(0.0, statistics.variance(gains) - noise)
    weight = signal / (signal + look.se**2) if signal + look.se**2 > 0 else 0.0
    return centre + weight * (look.gain - centre)


@dataclass(frozen=True)
class LookRequest:
    """What `judge` weighs about one candidate just scored on the selection split:
    ``rules`` (the [gate] section), the base branch's name, both sides' scores, the gate
    attempt it would be, the base's harness tree, how many looks the budget allows, and
    for the policies other than strict their ``prior`` and ``passed_before``."""

    rules: GateSection
    base_branch: str
    base: Scored
    candidate: Scored
    attempt: int
    base_harness: str
    allowed: int | None
    prior: Prior = DEFAULT_PRIOR
    passed_before: int = 0


def judge(request: LookRequest, looks: Looks) -> Verdict:
    """Whether to gate the candidate of ``request``, just scored on the selection split;
    ``looks``: the run's looks so far, which this one joins.

    Every candidate scored on the selection split is a look, and choosing which to
    gate from those scores is itself a test: gating whatever would pass at alpha_k
    let a null candidate through in 26% of simulated runs of 15 looks on 36
    instances (docs/evolve.md). So each look is tested at its own share of alpha_k
    (`look_level`), with the gate's own bound; the gate then passes it at alpha_k,
    which is looser. The reason always quotes the numbers the decision compared.
    Under the policies bayes and elond (docs/gate.md, "Policies") a candidate is gated
    when the gate would pass it with the same ``prior`` and ``passed_before``.
    """
    rules, base_branch, allowed = request.rules, request.base_branch, request.allowed
    paired = pair_scores(request.base, request.candidate)
    if paired is None:
        return Verdict(False, "fewer than two selection instances scored on both sides")
    comparison = compare(paired)
    look = Look(comparison.difference.mean, comparison.difference.se)
    number = looks.add(request.base_harness, look)
    estimate = corrected_gain(looks.seen, look)
    gain = points(look.gain)
    if look.gain <= rules.min_effect:
        return Verdict(False, f"selection gain {gain} points over {base_branch}: nothing to gate")
    if rules.policy != "strict":
        return _by_policy(paired, request)
    level = look_level(alpha_for_attempt(rules.alpha, request.attempt), number, allowed)
    of = f" of at most {allowed}" if allowed is not None else ""
    where = f"look {number}{of} against this base, level {level:.2g}"
    if level < SMALLEST_ALPHA:
        return Verdict(False, f"selection gain {gain} points, but {where}: this run's error budget is spent")
    # Attempt 1 of rules whose alpha makes alpha_1 this look's level: the gate's own test.
    decision = decide(paired, replace(rules, alpha=level * math.pi**2 / 6))
    bound = points(decision.bound.lower_bound)
    if decision.bound.passed and not decision.passed:  # too few instances: the gate would refuse
        return Verdict(False, "; ".join(decision.reasons), level, estimate)
    if not decision.passed:
        return Verdict(
            False,
            f"selection gain {gain} points: its lower bound at {where} is {bound} points, not above "
            f"min_effect {points(rules.min_effect)}",
            level,
            estimate,
        )
    return Verdict(
        True,
        f"selection gain {gain} points ({points(estimate)} corrected for selection among {number} "
        f"looks); lower bound {bound} points at {where}",
        level,
        estimate,
    )


def _by_policy(paired: PairedScores, request: LookRequest) -> Verdict:
    """Gate when the gate's own policy would pass the candidate on these scores."""
    rules = request.rules
    decision = decide(
        paired, rules, attempt=request.attempt, prior=request.prior, passed_before=request.passed_before
    )
    said = decision.numbers
    corrected = said.corrected if said else None
    if not decision.passed:
        return Verdict(False, f"policy {rules.policy}: " + "; ".join(decision.reasons), None, corrected)
    chance = f"chance better {said.chance_better:.0%}, " if said else ""
    return Verdict(
        True,
        f"selection gain {points(decision.comparison.difference.mean)} points ({chance}"
        f"{points(corrected)} corrected for selection); policy {rules.policy}",
        None,
        corrected,
    )


def passed_before(chain: Sequence[str], passed: Mapping[str, str]) -> str:
    """Why a candidate is not gated when an earlier edit of its chain (``chain``: the
    commits linked by proposal parents from the base tip to it, oldest first) passed
    the gate against the base tip ("" when none did); ``passed``: commit -> candidate id.

    Without ``--auto-merge`` nothing merges, so each passing descendant of one chain
    was gated too, every one spending an attempt although at most one of them can
    merge: in one run attempts 3, 4 and 5 were one chain's, which raised the
    detectable effect from 9.4 to 20 points (issue 12).
    """
    earlier = [passed[commit] for commit in chain[:-1] if commit in passed]
    if not earlier:
        return ""
    return (
        f"it builds on {earlier[-1]}, which passed the gate against this base: "
        "only one of the two can merge as it is"
    )
