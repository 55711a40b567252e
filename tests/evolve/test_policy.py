from __future__ import annotations

from dataclasses import replace

from harnessgit.config import Config
from harnessgit.evolve.policy import choose_component, passed_before, worth_gating
from harnessgit.proposers import ReflectiveExample
from harnessgit.stats.pairing import Scored


def test_choose_component_round_robin_or_by_failures() -> None:
    files = ["prompts/system.md", "skills/search/SKILL.md", "tools/search.json"]
    failing = [
        ReflectiveExample(instance="a", feedback="tools/search.json: the query was missing", score=0.0),
        ReflectiveExample(
            instance="b", trajectory='{"steps": ["call search.json"]}', feedback="no", score=0.0
        ),
        ReflectiveExample(instance="c", feedback="SKILL.md was fine; tools/search.json again", score=1.0),
    ]
    assert [choose_component(files, i, "round-robin", failing) for i in range(4)] == [*files, files[0]]
    assert choose_component(files, 0, "most-failures", failing) == "tools/search.json"
    quiet = [ReflectiveExample(instance="a", feedback="wrong answer", score=0.0)]
    assert choose_component(files, 1, "most-failures", quiet) == files[1]  # no mention: round-robin


BASE: Scored = {f"s{i}": (0.0, None) for i in range(120)}


def gains(wins: int) -> Scored:
    """The base's scores with the first ``wins`` instances solved."""
    return {**BASE, **{f"s{i}": (1.0, None) for i in range(wins)}}


def test_worth_gating_waits_for_a_gain_the_gate_can_see() -> None:
    rules = Config().gate
    assert worth_gating(rules, "main", BASE, {**BASE, "s0": (0.0, None)}, 1) == (
        False,
        "selection gain +0.0 points over main: nothing to gate",
    )
    ok, why = worth_gating(rules, "main", BASE, gains(3), 1)
    assert not ok and "below what the gate can detect at attempt 1" in why
    assert worth_gating(rules, "main", BASE, gains(40), 1) == (True, "")
    # The same gain is too small at a late attempt, where alpha_k is tiny.
    assert (
        worth_gating(rules, "main", BASE, gains(12), 1)[0]
        and not worth_gating(rules, "main", BASE, gains(12), 40)[0]
    )


def test_worth_gating_reads_the_gate_rules_and_names_the_base_branch() -> None:
    # A 10-point gain clears the default rules but not min_effect 0.1, nor alpha 0.001.
    assert worth_gating(Config().gate, "main", BASE, gains(12), 1)[0]
    strict = replace(Config().gate, min_effect=0.1)
    assert worth_gating(strict, "release", BASE, gains(12), 1) == (
        False,
        "selection gain +10.0 points over release: nothing to gate",
    )
    assert not worth_gating(replace(Config().gate, alpha=0.001), "main", BASE, gains(12), 1)[0]
    few: Scored = {"s0": (0.0, None)}
    assert worth_gating(Config().gate, "main", few, few, 1) == (
        False,
        "fewer than two selection instances scored on both sides",
    )


def test_a_chain_that_passed_the_gate_once_is_not_gated_again() -> None:
    passed = {"b" * 40: "cand-b"}
    assert passed_before(["a" * 40, "b" * 40, "c" * 40], passed).startswith(
        "it builds on cand-b, which passed the gate against this base"
    )
    assert passed_before(["a" * 40, "b" * 40], passed) == ""  # the passed candidate itself
    assert passed_before(["a" * 40, "c" * 40], passed) == ""  # another chain
    assert passed_before(["c" * 40], {}) == ""
