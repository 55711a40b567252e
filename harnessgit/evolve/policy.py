"""Evolve's judgement calls, pure: which component to edit, and whether a candidate
is worth a gate attempt."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harnessgit.proposers import ReflectiveExample
from harnessgit.render import points
from harnessgit.stats.decision import GateRules, alpha_for_attempt, compare, minimum_detectable_effect
from harnessgit.stats.pairing import Scored, pair_scores


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


def worth_gating(
    rules: GateRules, base_branch: str, base: Scored, candidate: Scored, attempt: int
) -> tuple[bool, str]:
    """Gate a candidate only once its observed gain over ``base_branch`` could pass the
    gate (``rules``: the [gate] section).

    Every gated comparison spends part of the selection set's alpha, so evolve
    gates a candidate when its observed gain over the base reaches the minimum
    detectable effect at the next attempt's level; a smaller gain keeps evolving
    on the frontier. Skipping never raises the false-accept rate: the gate would
    pass only a gain that clears its bound anyway.
    """
    paired = pair_scores(base, candidate)
    if paired is None:
        return False, "fewer than two selection instances scored on both sides"
    comparison = compare(paired)
    gain = comparison.difference.mean
    if gain <= rules.min_effect:
        return False, f"selection gain {points(gain)} points over {base_branch}: nothing to gate"
    if comparison.sd > 0 and comparison.effective_n:
        mde = minimum_detectable_effect(
            comparison.sd, comparison.effective_n, alpha_for_attempt(rules.alpha, attempt)
        )
        if gain < rules.min_effect + mde:
            return False, (
                f"selection gain {points(gain)} points is below what the gate can detect at "
                f"attempt {attempt} ({points(rules.min_effect + mde, signed=False)} points)"
            )
    return True, ""


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
