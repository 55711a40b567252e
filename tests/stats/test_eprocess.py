"""The paired betting e-process and e-LOND (`harnessgit.stats.eprocess`), and policy elond."""

from __future__ import annotations

import random
from dataclasses import replace

from harnessgit.config import GateSection
from harnessgit.stats.decision import decide
from harnessgit.stats.eprocess import canonical_order, elond_level, evidence, stopping_point, wealth
from harnessgit.stats.pairing import PairedScores


def paired_binary(rng: random.Random, n: int, gain: float) -> list[float]:
    """Paired 0/1 differences: discordant on about a quarter of instances, won with
    chance 1/2 + gain * 2 there (a mean difference of about ``gain``)."""
    out = []
    for _ in range(n):
        if rng.random() < 0.25:
            out.append(1.0 if rng.random() < 0.5 + 2 * gain else -1.0)
        else:
            out.append(0.0)
    return out


def test_under_no_gain_the_wealth_rarely_ever_reaches_1_over_alpha() -> None:
    """Ville's inequality, simulated: looking after every instance, a null edit's
    wealth reaches 20 at some point in at most about 5% of runs."""
    rng = random.Random(5)
    runs, hits = 3000, 0
    for _ in range(runs):
        hits += max(wealth(paired_binary(rng, 200, 0.0), 0.0)) >= 20
    assert hits / runs <= 0.05 + 0.012  # three Monte Carlo standard errors


def test_a_real_gain_builds_wealth_and_stops_early() -> None:
    rng = random.Random(9)
    diffs = paired_binary(rng, 400, 0.1)
    found = evidence(diffs, 0.0)
    assert found.gain > 100 and found.no_gain < 1
    verdict, read = stopping_point(diffs, 0.0, pass_level=0.05, fail_level=0.05, batch=20)
    assert verdict == "pass" and read < 400 and read % 20 == 0
    worse = [-d for d in diffs]
    assert stopping_point(worse, 0.0, pass_level=0.05, fail_level=0.05, batch=20)[0] == "fail"
    assert stopping_point([0.0] * 50, 0.0, pass_level=0.05, fail_level=0.05, batch=20) == ("inconclusive", 50)


def test_elond_levels_grow_with_passes_and_shrink_with_attempts() -> None:
    assert elond_level(0.1, 1, 0) == 0.05
    assert elond_level(0.1, 4, 0) == 0.1 / 20
    assert elond_level(0.1, 4, 2) == 3 * 0.1 / 20


def test_the_reading_order_depends_on_the_seed_and_the_names_only() -> None:
    names = [f"s-{i}" for i in range(30)]
    order = canonical_order(names, 0)
    assert sorted(order) == list(range(30)) and order != list(range(30))
    backwards = list(reversed(names))
    assert [backwards[i] for i in canonical_order(backwards, 0)] == [names[i] for i in order]
    assert canonical_order(names, 1) != order


def test_policy_elond_passes_a_strong_gain_and_records_its_evidence() -> None:
    n = 120
    base = [0.0] * 40 + [1.0] * 40 + [0.0] * 40
    cand = [1.0] * 40 + [1.0] * 40 + [0.0] * 40
    scores = PairedScores(instances=[f"i{k}" for k in range(n)], base=base, candidate=cand)
    rules = replace(GateSection(resamples=2000), policy="elond", q=0.1)
    first = decide(scores, rules, attempt=1)
    assert first.verdict == "pass" and first.e_value is not None and first.e_value >= 1 / 0.05
    worse = decide(PairedScores(instances=scores.instances, base=cand, candidate=base), rules, attempt=2)
    assert worse.verdict == "fail" and worse.e_fail is not None and worse.e_fail >= 20
    assert worse.level == 0.1 / 6 and worse.passed_before == 0
