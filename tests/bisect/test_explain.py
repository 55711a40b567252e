from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from harnessgit.bisect.explain import Landing, Measured, OwnEffect, accepted_on, own_effect, slipped_through
from harnessgit.bisect.judge import Criterion
from harnessgit.records import GateRecord, OverrideRecord
from tests.bisect.test_judge import summary

NOW = Measured(fingerprint="f" * 64, model="sim-1", split_hash="s" * 64)
MEAN = Criterion.build("selection", None, 0.05, None)
TS = datetime(2026, 1, 1, tzinfo=timezone.utc)


def gate(**changes: Any) -> GateRecord:
    fields: dict[str, Any] = dict(
        ts=TS,
        candidate="c" * 12,
        commit="1" * 40,
        tree="2" * 40,
        base="3" * 40,
        base_branch="main",
        harness="4" * 40,
        base_harness="5" * 40,
        fingerprint=NOW.fingerprint,
        model=NOW.model,
        split="selection",
        split_hash=NOW.split_hash,
        passed=True,
        reasons=[],
        method="bootstrap",
        attempt=3,
        alpha=0.05,
        alpha_k=0.0034,
        alpha_spent=0.0414,
        min_effect=0.0,
        min_instances=30,
        allow_small=False,
        seed=0,
        resamples=10_000,
        n=40,
        base_mean=0.5,
        candidate_mean=0.6,
        difference=0.1,
        ci_low=0.02,
        ci_high=0.18,
        lower_bound=0.03,
        p_value=0.004,
        mde=0.19,
        wins=5,
        losses=1,
        ties=34,
        regressed=["s-9"],
        regressed_count=1,
        merge="6" * 40,
    )
    fields.update(changes)
    return GateRecord(**fields)


SMALL = OwnEffect(n=40, before=0.5, after=0.425, difference=-0.075, se=0.04, losses=3, regressed=["s-1"])


def test_own_effect_pairs_the_instances() -> None:
    effect = own_effect(summary({"a": 1.0, "b": 1.0, "c": 0.0}), summary({"a": 0.0, "b": 1.0, "c": 1.0}))
    assert effect.n == 3 and effect.difference == pytest.approx(0.0)
    assert (effect.wins, effect.losses, effect.ties, effect.regressed) == (1, 1, 1, ["a"])
    assert effect.se is not None and effect.before == effect.after == pytest.approx(2 / 3)


def test_own_effect_with_fewer_than_two_instances_in_common() -> None:
    single = own_effect(summary({"a": 1.0}), summary({"a": 0.0}))
    assert single.n == 1 and single.difference == -1.0 and single.se is None and single.regressed == ["a"]
    assert (single.wins, single.losses, single.ties) == (0, 1, 0)
    none = own_effect(summary({"a": 1.0}), summary({"b": 0.0}))
    assert none.n == 0 and none.difference is None and (none.wins, none.losses, none.ties) == (0, 0, 0)


def test_the_evidence_it_was_accepted_on() -> None:
    text = accepted_on(gate())
    assert "passed it at attempt 3 (alpha_k 0.0034) on 40 selection instances" in text
    assert "50.0 -> 60.0 (+10.0 points, 95% CI [+2.0, +18.0]" in text and "under 19.0 points" in text


def test_ungated_edits_say_so() -> None:
    override = OverrideRecord(
        ts=TS, commit="6" * 40, candidate=None, action="revert", reason="outage", author="A <a@b>"
    )
    assert (
        "ungated override (revert) by A <a@b>: “outage”"
        in slipped_through(
            Landing("override", override=override), MEAN, own=SMALL, cumulative=-0.075, measured=NOW
        )[0]
    )
    assert (
        "before harnessgit"
        in slipped_through(Landing("before harnessgit"), MEAN, own=SMALL, cumulative=None, measured=NOW)[0]
    )
    assert (
        "straight to the base branch"
        in slipped_through(Landing("direct commit"), MEAN, own=SMALL, cumulative=None, measured=NOW)[0]
    )
    assert (
        "merge made outside harnessgit"
        in slipped_through(
            Landing("merge without a gate record"), MEAN, own=SMALL, cumulative=None, measured=NOW
        )[0]
    )


def test_a_regression_on_another_split_was_never_seen() -> None:
    train = Criterion.build("train", None, 0.05, None)
    (reason,) = slipped_through(
        Landing("gated merge", gate()), train, own=SMALL, cumulative=-0.075, measured=NOW
    )
    assert "on the train split, which the gate never looks at" in reason and "+10.0 points" in reason


def test_an_effect_under_the_mde_and_a_cumulative_drop() -> None:
    reasons = slipped_through(
        Landing("gated merge", gate()), MEAN, own=SMALL, cumulative=-0.125, measured=NOW
    )
    text = " ".join(reasons)
    assert "measured +10.0 points, but the scores on record now give -7.5" in text
    assert "under the gate's minimum detectable effect, 19.0 points on 40 instances" in text
    assert "earlier edits lost -5.0" in text


def test_a_gate_that_looked_elsewhere() -> None:
    other = gate(fingerprint="e" * 64, model="sim-0", split_hash="t" * 64, min_effect=-0.1, allow_small=True)
    text = " ".join(
        slipped_through(Landing("gated merge", other), MEAN, own=SMALL, cumulative=-0.075, measured=NOW)
    )
    assert "another evaluator" in text and "model sim-0" in text and "selection set changed" in text
    assert "accept a loss of up to 10.0 points" in text and "--allow-small" in text
    # Scores from another evaluator do not count as "evaluated again".
    assert "evaluated again" not in text


def test_one_broken_instance_behind_a_net_gain() -> None:
    one = Criterion.build("selection", ["s-9"], None, None)
    effect = OwnEffect(n=1, before=1.0, after=0.0, difference=-1.0, se=None, losses=1, regressed=["s-9"])
    (reason,) = slipped_through(
        Landing("gated merge", gate()), one, own=effect, cumulative=None, measured=NOW, failing=["s-9"]
    )
    assert "saw instance s-9 regress (1 losses against 5 wins)" in reason and "net +10.0 points" in reason
    (unseen,) = slipped_through(
        Landing("gated merge", gate(), gate_instances=["s-1", "s-2"]),
        one,
        own=effect,
        cumulative=None,
        measured=NOW,
        failing=["s-9"],
    )
    assert "s-9 was not among the 40 instances the gate compared" in unseen
