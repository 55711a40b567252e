"""Three verdicts and the numbers every verdict states (`harnessgit.stats.verdict`)."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from statistics import NormalDist

from harnessgit.config import GateSection
from harnessgit.stats.decision import decide
from harnessgit.stats.pairing import PairedScores
from harnessgit.stats.verdict import (
    DEFAULT_PRIOR,
    Prior,
    chance_above,
    expected_loss,
    instances_needed,
    learn_prior,
    legacy_verdict,
    posterior,
)

FAST = GateSection(resamples=2000)


def binary(wins: int, losses: int, both: int, neither: int) -> PairedScores:
    base = [0.0] * wins + [1.0] * losses + [1.0] * both + [0.0] * neither
    cand = [1.0] * wins + [0.0] * losses + [1.0] * both + [0.0] * neither
    return PairedScores(instances=[f"i{k}" for k in range(len(base))], base=base, candidate=cand)


def test_three_verdicts_tell_harm_from_too_little_evidence() -> None:
    """A clear gain passes (exit 0), a clear loss fails, and a small gain on 36
    instances is inconclusive: before issue 25 the last two were both REJECT."""
    better = decide(binary(14, 0, 11, 11), FAST)
    worse = decide(binary(0, 14, 11, 11), FAST)
    unsure = decide(binary(3, 1, 16, 16), FAST)
    assert (better.verdict, worse.verdict, unsure.verdict) == ("pass", "fail", "inconclusive")
    assert better.passed and not worse.passed and not unsure.passed
    assert worse.upper_bound is not None and worse.upper_bound < 0
    assert worse.numbers is not None and worse.numbers.chance_better < 0.01
    assert unsure.numbers is not None and unsure.numbers.needed is not None and unsure.numbers.needed > 36
    assert any("does not clear min_effect" in reason for reason in unsure.reasons)


def test_what_would_decide_is_the_size_that_gives_80_percent_power() -> None:
    """The quoted n, simulated: a true effect of that size on that many instances
    clears the one-sided test about 80% of the time."""
    sd, effect, level = 0.5, 0.1, 0.01
    n = instances_needed(sd, effect, level)
    assert n is not None
    z = NormalDist().inv_cdf(1 - level)
    rng = random.Random(7)
    hits = 0
    for _ in range(4000):
        mean = sum(rng.gauss(effect, sd) for _ in range(n)) / n
        hits += mean / (sd / math.sqrt(n)) > z
    assert 0.77 < hits / 4000 < 0.83
    assert instances_needed(sd, 0.0, level) is None and instances_needed(0.0, effect, level) is None


def test_chance_and_expected_loss_match_their_definitions() -> None:
    post = posterior(Prior(0.0, 0.05, 0), 0.03, 0.04)  # normal: draws check the closed forms
    rng = random.Random(3)
    draws = [rng.gauss(post.mean, post.sd) for _ in range(200_000)]
    assert abs(chance_above(post) - sum(d > 0 for d in draws) / len(draws)) < 0.005
    assert abs(expected_loss(post) - sum(max(0.0, -d) for d in draws) / len(draws)) < 0.0005
    # The prior shrinks a noisy gain towards what edits usually gain.
    assert 0 < post.mean < 0.03 and post.sd < 0.04


def test_the_default_prior_is_sceptical_with_a_fat_tail() -> None:
    """Small gains are shrunk hard; a large one is believed (Azevedo et al. 2020)."""
    small, large = posterior(DEFAULT_PRIOR, 0.05, 0.05), posterior(DEFAULT_PRIOR, 0.4, 0.05)
    assert small.mean < 0.03 and large.mean > 0.3
    assert chance_above(large) > 0.99 and expected_loss(large) < 0.001


def test_the_prior_is_learned_from_recorded_gains() -> None:
    """Method of moments recovers the spread of true gains from noisy looks; too few
    looks leave the default prior."""
    rng = random.Random(11)
    looks = []
    for _ in range(4000):
        true = rng.gauss(-0.02, 0.05)
        looks.append((rng.gauss(true, 0.04), 0.04))
    prior = learn_prior(looks)
    assert abs(prior.mean + 0.02) < 0.005 and abs(prior.sd - 0.05) < 0.005 and prior.looks == 4000
    assert learn_prior(looks[:4], algorithm=2) == DEFAULT_PRIOR
    assert learn_prior([]).weights == DEFAULT_PRIOR.weights


def test_policy_bayes_passes_on_the_chance_of_a_gain() -> None:
    """With a prior that edits often help, 3 wins and 0 losses on 36 instances is a
    pass at q = 0.1, where strict cannot pass it; with a prior that they rarely do it is not."""
    scores = binary(5, 0, 16, 15)
    bayes = replace(FAST, policy="bayes", q=0.1)
    hopeful = decide(scores, bayes, prior=Prior(0.05, 0.05, 20))
    doubtful = decide(scores, bayes, prior=Prior(-0.05, 0.01, 20))
    strict = decide(scores, FAST, attempt=3)
    assert hopeful.verdict == "pass" and doubtful.verdict == "fail" and strict.verdict == "inconclusive"
    assert hopeful.q == 0.1 and strict.q is None and hopeful.upper_bound is None


def test_missing_scores_leave_it_inconclusive_and_failing_checks_fail() -> None:
    scores = binary(14, 0, 11, 11)
    assert decide(scores, FAST, unknowns=["not evaluated on model beta"]).verdict == "inconclusive"
    assert decide(scores, FAST, extra_failures=["the harness checks fail"]).verdict == "fail"
    assert decide(binary(14, 0, 3, 3), FAST).verdict == "inconclusive"  # 20 < min_instances 30


def test_records_from_before_three_verdicts_read_as_pass_or_fail() -> None:
    assert (legacy_verdict(True), legacy_verdict(False)) == ("pass", "fail")
