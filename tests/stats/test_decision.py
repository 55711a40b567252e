"""The gate's statistics: paired comparison, alpha spending, MDE and `decide`."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from dataclasses import replace
from statistics import NormalDist

import pytest

from harnessgit.config import GateSection
from harnessgit.render import to_json
from harnessgit.stats.decision import (
    alpha_for_attempt,
    alpha_spent,
    compare,
    decide,
    detectable_sentence,
    minimum_detectable_effect,
)
from harnessgit.stats.pairing import PairedScores
from harnessgit.stats.signtest import sign_test_p

FAST = GateSection(resamples=2000)


def paired(base: list[float], candidate: list[float], clusters: list[str] | None = None) -> PairedScores:
    return PairedScores(
        instances=[f"i{k}" for k in range(len(base))], base=base, candidate=candidate, clusters=clusters
    )


def binary(wins: int, losses: int, both: int, neither: int) -> PairedScores:
    """0/1 scores: `wins` instances only the candidate solves, `losses` only the base."""
    base = [0.0] * wins + [1.0] * losses + [1.0] * both + [0.0] * neither
    cand = [1.0] * wins + [0.0] * losses + [1.0] * both + [0.0] * neither
    return paired(base, cand)


# --- PairedScores ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"instances": ["a", "b"], "base": [0.1], "candidate": [0.2, 0.3]}, "one score per instance"),
        ({"instances": ["a", "a"], "base": [0.1, 0.2], "candidate": [0.2, 0.3]}, "unique"),
        ({"instances": ["a", "b"], "base": [0.1, 1.2], "candidate": [0.2, 0.3]}, "between 0 and 1"),
        ({"instances": ["a", "b"], "base": [0.1, float("nan")], "candidate": [0.2, 0.3]}, "finite"),
        ({"instances": ["a"], "base": [0.1], "candidate": [0.2]}, "two independent units"),
        (
            {"instances": ["a", "b"], "base": [0.1, 0.2], "candidate": [0.2, 0.3], "clusters": ["x", "x"]},
            "two independent units",
        ),
        (
            {"instances": ["a", "b"], "base": [0.1, 0.2], "candidate": [0.2, 0.3], "clusters": ["x"]},
            "one entry per instance",
        ),
    ],
)
def test_paired_scores_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PairedScores(**kwargs)


# --- compare --------------------------------------------------------------------------


def test_compare_by_hand() -> None:
    comparison = compare(paired([0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0]))  # diffs 1, 0, -1, 1
    assert (comparison.wins, comparison.losses, comparison.ties) == (2, 1, 1)
    assert comparison.regressed == ["i2"]
    assert comparison.binary and comparison.clusters is None
    assert comparison.difference.mean == pytest.approx(0.25)
    assert comparison.sd == pytest.approx(math.sqrt(2.75 / 3))
    assert comparison.difference.se == pytest.approx(math.sqrt(2.75 / 3) / 2)
    assert comparison.base.mean == 0.5 and comparison.base.se == pytest.approx(math.sqrt(1 / 3) / 2)
    assert comparison.candidate.mean == 0.75 and comparison.candidate.se == pytest.approx(0.25)
    assert comparison.effective_n == 4


def test_cluster_robust_standard_error_by_hand() -> None:
    # Clusters a: +1, +1; b: -1, -1; c: 0, 0. Mean 0; cluster sums 2, -2, 0.
    scores = paired([0, 0, 1, 1, 0, 0], [1, 1, 0, 0, 0, 0], clusters=["a", "a", "b", "b", "c", "c"])
    comparison = compare(scores)
    assert comparison.clusters == 3
    assert comparison.difference.se == pytest.approx(math.sqrt(3 / 2 * 8) / 6)  # CR1
    # naive se^2 = (4/5)/6; clustered se^2 = 1/3: design effect 2.5, effective n 2.4
    assert comparison.effective_n == pytest.approx(2.4)


# --- alpha spending -------------------------------------------------------------------


def test_alpha_for_attempt_formula() -> None:
    assert alpha_for_attempt(0.05, 1) == pytest.approx(0.05 * 6 / math.pi**2)  # 0.0304
    assert alpha_for_attempt(0.05, 3) == pytest.approx(0.05 * 6 / (math.pi**2 * 9))
    assert alpha_for_attempt(0.05, 2) / alpha_for_attempt(0.05, 4) == pytest.approx(4)
    with pytest.raises(ValueError):
        alpha_for_attempt(0.05, 0)


def test_alpha_spent_stays_below_alpha_forever() -> None:
    assert alpha_spent(0.05, 0) == 0.0
    assert alpha_spent(0.05, 1) == alpha_for_attempt(0.05, 1)
    spent = alpha_spent(0.05, 10_000)
    assert spent < 0.05
    assert spent > 0.05 * (1 - 1e-4)  # the tail beyond k is ~ 6 / (pi^2 k)
    assert alpha_spent(0.05, 30) < alpha_spent(0.05, 31) < 0.05


# --- minimum detectable effect ----------------------------------------------------------


def test_mde_formula() -> None:
    z = NormalDist().inv_cdf
    by_hand = (z(0.95) + z(0.8)) * 0.5 / math.sqrt(35)  # (1.645 + 0.842) * 0.5 / 5.92 = 0.210
    assert minimum_detectable_effect(0.5, 35, 0.05) == pytest.approx(by_hand)
    assert by_hand == pytest.approx(0.2102, abs=1e-4)
    assert minimum_detectable_effect(0.5, 35, 0.05, power=0.9) > minimum_detectable_effect(0.5, 35, 0.05)
    quadruple_n = minimum_detectable_effect(0.4, 140, 0.05)
    assert quadruple_n == pytest.approx(minimum_detectable_effect(0.4, 35, 0.05) / 2)


def test_decide_reports_the_mde_at_alpha_k_with_the_effective_n() -> None:
    rng = random.Random(8)
    base = [float(rng.random() < 0.7) for _ in range(60)]
    cand = [float(rng.random() < 0.75) for _ in range(60)]
    clusters = [f"g{k // 6}" for k in range(60)]
    for scores in (paired(base, cand), paired(base, cand, clusters)):
        decision = decide(scores, FAST, attempt=3)
        c = decision.comparison
        assert c.effective_n is not None
        expected = minimum_detectable_effect(c.sd, c.effective_n, alpha_for_attempt(0.05, 3))
        assert decision.mde == pytest.approx(expected)
        # sd / sqrt(effective n) is the cluster-robust standard error
        assert c.sd / math.sqrt(c.effective_n) == pytest.approx(c.difference.se)


def test_detectable_sentence() -> None:
    comparison = compare(binary(10, 4, 15, 6))
    sentence = detectable_sentence(comparison, 0.17)
    assert sentence == "on 35 instances this gate cannot see effects under 17 points"
    assert detectable_sentence(comparison, 0.043).endswith("under 4.3 points")
    assert detectable_sentence(comparison, 0.1, min_effect=0.02).endswith("under 12 points")
    assert "did not vary" in detectable_sentence(comparison, None)
    clustered = compare(paired([0, 0, 1, 1, 0, 1], [1, 1, 0, 0, 0, 1], clusters=list("aabbcc")))
    assert detectable_sentence(clustered, 0.3).startswith("on 6 instances in 3 clusters (effective n ")


# --- decide ---------------------------------------------------------------------------


def test_clear_improvement_passes() -> None:
    decision = decide(binary(14, 1, 15, 5), FAST)
    assert decision.passed and decision.reasons == []
    assert decision.attempt == 1 and decision.alpha_k == pytest.approx(alpha_for_attempt(0.05, 1))
    assert decision.bound.lower_bound > 0
    assert decision.comparison.wins == 14
    assert decision.detectable.startswith("on 35 instances this gate cannot see effects under")


def test_rejects_too_few_instances_unless_allowed() -> None:
    scores = binary(14, 0, 4, 2)  # 20 instances, overwhelming
    decision = decide(scores, FAST)
    assert not decision.passed
    assert decision.reasons == [
        "only 20 instances on the selection split; the gate needs at least 30 (min_instances),"
        " or --allow-small"
    ]
    assert decide(scores, FAST, allow_small=True).passed


def test_rejects_when_the_lower_bound_does_not_clear_min_effect() -> None:
    scores = binary(8, 4, 18, 5)  # +11 points observed on 35: noise at this n
    decision = decide(scores, FAST)
    assert not decision.passed and decision.bound.lower_bound <= 0
    [reason] = decision.reasons
    assert reason.startswith("the 96.96% lower bound of the difference, ")
    assert "does not clear min_effect +0.0 points" in reason and "attempt 1" in reason
    # A positive min_effect turns a pass into a rejection.
    strong = binary(14, 1, 15, 5)
    assert decide(strong, FAST).passed
    assert not decide(strong, replace(FAST, min_effect=0.3)).passed


def test_later_attempts_need_stronger_evidence() -> None:
    scores = binary(12, 2, 16, 5)
    assert decide(scores, FAST, attempt=1).passed
    late = decide(scores, FAST, attempt=20)
    assert not late.passed
    assert late.alpha_k == pytest.approx(0.05 * 6 / (math.pi**2 * 400))
    assert late.alpha_spent == pytest.approx(alpha_spent(0.05, 20))
    assert "attempt 20" in late.reasons[0]


def test_extra_failures_from_the_caller_reject() -> None:
    decision = decide(binary(14, 1, 15, 5), FAST, extra_failures=["CAND does not descend from main"])
    assert not decision.passed
    assert decision.reasons == ["CAND does not descend from main"]


def test_sign_method_is_mcnemar_on_binary_scores() -> None:
    decision = decide(binary(9, 1, 20, 5), replace(FAST, method="sign"))
    assert decision.method == "sign" and decision.bound.method == "sign"
    assert decision.bound.test == "mcnemar"
    assert decision.bound.p_value == pytest.approx(sign_test_p(9, 1))  # 11/1024
    assert decision.passed


def test_sign_method_refuses_partial_credit_and_clusters() -> None:
    sign = replace(FAST, method="sign")
    partial = paired([0.5] * 40, [0.55] * 36 + [0.05] * 4)  # wins 36 of 40, mean change 0
    decision = decide(partial, sign)
    assert not decision.passed
    assert any("needs 0/1 scores" in reason for reason in decision.reasons)
    clustered = decide(paired([0.0] * 40, [1.0] * 40, clusters=[str(k % 8) for k in range(40)]), sign)
    assert any("clusters" in reason for reason in clustered.reasons)
    assert not clustered.passed


def test_clusters_make_the_gate_see_less() -> None:
    # Ten clusters of ten: within a cluster the candidate either helps or hurts.
    rng = random.Random(3)
    base, cand, clusters = [], [], []
    for g, helps in enumerate([True] * 7 + [False] * 3):
        for _ in range(10):
            b = float(rng.random() < 0.5)
            base.append(b)
            cand.append(1.0 if helps else 0.0)
            clusters.append(f"family{g}")
    independent = decide(paired(base, cand), FAST)
    grouped = decide(paired(base, cand, clusters), FAST)
    assert independent.passed and not grouped.passed
    assert grouped.bound.units == 10 and grouped.bound.clustered
    width = grouped.bound.ci_high - grouped.bound.ci_low
    assert width > 2 * (independent.bound.ci_high - independent.bound.ci_low)
    assert grouped.mde is not None and independent.mde is not None and grouped.mde > 2 * independent.mde


def test_decide_is_deterministic_and_order_free() -> None:
    rng = random.Random(6)
    base = [rng.random() for _ in range(50)]
    cand = [min(1.0, max(0.0, b + rng.uniform(-0.1, 0.2))) for b in base]
    decision = decide(paired(base, cand), FAST)
    assert decide(paired(base, cand), FAST) == decision
    order = list(range(50))
    rng.shuffle(order)
    shuffled = PairedScores(
        instances=[f"i{k}" for k in order], base=[base[k] for k in order], candidate=[cand[k] for k in order]
    )
    assert decide(shuffled, FAST).bound == decision.bound


def test_decision_serialises_to_json() -> None:
    for method in ("bootstrap", "sign"):
        decision = decide(binary(9, 1, 20, 5), replace(FAST, method=method))
        data = json.loads(to_json(decision))
        assert data["bound"]["method"] == method and data["passed"] == decision.passed
        assert data["comparison"]["difference"]["mean"] == decision.comparison.difference.mean


def test_importing_stats_does_not_import_numpy() -> None:
    # The CLI's --help must stay fast: numpy loads only when a bootstrap runs.
    code = "import sys, harnessgit.stats.decision, harnessgit.stats.frontier; print('numpy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_an_evolve_loop_thousandth_attempt_is_refused_quickly() -> None:
    # alpha_1000 ~ 3e-8 would need ~600 million resamples; the gate says why not.
    decision = decide(binary(30, 0, 5, 0), FAST, attempt=1000)
    assert not decision.passed
    assert decision.bound.lower_bound == -1.0
    assert any("refresh the selection set" in reason for reason in decision.reasons)
    assert decision.bound.method == "bootstrap" and decision.bound.resamples_used == 2000
