"""The prior learned from every look an optimiser screened (issue 25, item 6).

Simulated looks with known true gains: the screened prior must recover how often
proposals help, and the posterior under it must stay calibrated on the looks a policy
then selects by their scores (the winner's curse), where a prior learned only from
the selected looks is overconfident.
"""

from __future__ import annotations

import random
import statistics

import pytest

from harnessgit.stats.verdict import chance_above, learn_prior, posterior, screened_prior

SE = 0.07  # a look on 36 instances with 0/1 scores: about 7 points
REGIMES = {  # (share of proposals that help, their gain, the others' gain), points / 100
    "mostly-help": (0.6, 0.06, -0.02),
    "mostly-hurt": (0.2, 0.05, -0.05),
}


def looks(rng: random.Random, regime: str, n: int) -> list[tuple[float, float]]:
    """(true gain, observed gain) of ``n`` proposals of ``regime``."""
    share, good, bad = REGIMES[regime]
    out = []
    for _ in range(n):
        true = good if rng.random() < share else bad
        out.append((true, true + rng.gauss(0.0, SE)))
    return out


@pytest.mark.parametrize("regime", sorted(REGIMES))
def test_the_screened_prior_recovers_what_proposals_gain_on_average(regime: str) -> None:
    share, good, bad = REGIMES[regime]
    drawn = looks(random.Random(1), regime, 400)
    prior = screened_prior([(observed, SE) for _, observed in drawn])
    assert prior.looks == 400
    assert prior.mean == pytest.approx(share * good + (1 - share) * bad, abs=0.012)
    # The spread of true gains, not of the observed ones (noise deconvolved).
    true_sd = statistics.pstdev([true for true, _ in drawn])
    assert prior.sd == pytest.approx(true_sd, abs=0.015)
    assert statistics.pstdev([observed for _, observed in drawn]) > prior.sd + 0.02


def selected_outcomes(
    regime: str, *, learn_from_selected: bool, runs: int = 60
) -> tuple[float, float, float, float]:
    """Over ``runs`` runs of 40 screened looks each, the looks a policy passes (stated
    chance of a gain >= 0.7): (mean stated chance, share truly better, mean corrected
    gain, mean true gain) over them."""
    rng = random.Random(7)
    stated, better, corrected, true_gains = [], [], [], []
    for _ in range(runs):
        drawn = looks(rng, regime, 40)
        gains = [(observed, SE) for _, observed in drawn]
        prior = screened_prior(gains, algorithm=2)
        if learn_from_selected:  # the old way: only the looks that were gated
            chosen = [g for g in gains if chance_above(posterior(prior, g[0], SE)) >= 0.7]
            prior = learn_prior(chosen, pseudo_looks=5)
        for true, observed in drawn:
            post = posterior(prior, observed, SE)
            chance = chance_above(post)
            if chance >= 0.7:
                stated.append(chance)
                better.append(float(true > 0))
                corrected.append(post.mean)
                true_gains.append(true)
    assert len(stated) >= 30
    return (
        statistics.fmean(stated),
        statistics.fmean(better),
        statistics.fmean(corrected),
        statistics.fmean(true_gains),
    )


@pytest.mark.slow  # a few seconds: the fast tier leaves it out
def test_the_corrected_gain_of_the_selected_looks_is_their_true_gain() -> None:
    """Where proposals mostly help, the posterior mean of the looks a policy passes is
    within a point of their true mean gain, though it chose them by their scores."""
    _, _, corrected, true = selected_outcomes("mostly-help", learn_from_selected=False)
    assert corrected == pytest.approx(true, abs=0.01)


@pytest.mark.slow  # a few seconds: the fast tier leaves it out
def test_the_screened_prior_overstates_far_less_than_one_from_the_selected_looks() -> None:
    """Where proposals mostly hurt, a prior learned from the looks that were gated (what
    the gate records gave evolve before) describes good edits: the chances it states
    and the gains it corrects to are far too high. The prior from every screened look
    is much closer (200 runs: the prior of algorithm 2 passes few looks here)."""
    stated, better, corrected, true = selected_outcomes("mostly-hurt", learn_from_selected=False, runs=200)
    old_stated, old_better, _, _ = selected_outcomes("mostly-hurt", learn_from_selected=True, runs=200)
    assert (stated - better) < (old_stated - old_better) - 0.1
    # The gain corrected for selection is not better here under algorithm 2: its few
    # passes are corrected to +8.3 points against +4.6 true (from the selected looks:
    # +4.7 against +1.6); docs/benchmarks.md, "calib". It still removes most of the
    # winner's curse: it stays within 5 points of the true gain.
    assert corrected - true < 0.05


def stated_and_true(regime: str, runs: int) -> tuple[list[tuple[float, bool]], list[tuple[float, bool]]]:
    """(stated chance the look is better, truly better) of every look of ``runs`` runs
    of 40, under the prior learned from the run's looks, and of the looks a policy with
    q = 0.3 passes (stated >= 0.7)."""
    rng = random.Random(11)
    every = []
    for _ in range(runs):
        drawn = looks(rng, regime, 40)
        prior = screened_prior([(observed, SE) for _, observed in drawn], algorithm=2)
        every += [(chance_above(posterior(prior, observed, SE)), true > 0) for true, observed in drawn]
    return every, [(chance, better) for chance, better in every if chance >= 0.7]


def mean_gap(pairs: list[tuple[float, bool]]) -> float:
    """Mean stated chance minus the share truly better."""
    return statistics.fmean(c for c, _ in pairs) - statistics.fmean(float(b) for _, b in pairs)


def test_the_stated_chances_are_calibrated_where_proposals_mostly_help() -> None:
    """Issue 25 item 3's promise on a known answer (60% of proposals gain 6 points, the
    others lose 2; 7 points of noise a look): every decile of stated chances with 200
    looks or more, and the looks a policy passes, are within 5 points of the share truly
    better. Algorithm 1's prior stated 90% for these passes, of which 69% were better."""
    every, passed = stated_and_true("mostly-help", runs=150)
    for decile in range(10):
        found = [pair for pair in every if min(9, int(pair[0] * 10)) == decile]
        if len(found) >= 200:  # a share of 200 has a sampling sd of 3.5 points
            assert abs(mean_gap(found)) <= 0.05, (decile, len(found), mean_gap(found))
    assert len(passed) >= 300
    assert abs(mean_gap(passed)) <= 0.05


@pytest.mark.slow  # about 5 s: the fast tier leaves it out
def test_the_chance_stated_for_a_pass_is_not_too_high_where_proposals_mostly_hurt() -> None:
    """Where 80% of proposals lose 5 points and 20% gain 5, algorithm 1 stated 83% for
    the looks it passed, of which 70% were better: 13 points too sure where a reviewer
    reads the number. Algorithm 2 is at most 5 points too high there (it is too low:
    two point masses 10 points apart under 7 points of noise are not in its family)."""
    _, passed = stated_and_true("mostly-hurt", runs=150)
    assert len(passed) >= 20
    assert mean_gap(passed) <= 0.05
