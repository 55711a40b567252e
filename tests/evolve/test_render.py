from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone

from harnessgit.evolve.render import iteration_line, report_text
from harnessgit.evolve.state import EvolveReport, Spend
from harnessgit.records import IterationRecord
from harnessgit.render import to_json

TS = datetime(2026, 1, 1, tzinfo=timezone.utc)


def record(outcome: str, **fields: object) -> IterationRecord:
    base: dict[str, object] = {
        "ts": TS,
        "run": "r1",
        "seed": 0,
        "iteration": 7,
        "parent": "a" * 40,
        "parent_name": "main",
        "component": "SKILL.md",
        "minibatch": ["t1", "t2", "t3"],
        "parent_score": 1 / 3,
        "outcome": outcome,
    }
    return IterationRecord.model_validate({**base, **fields})


def test_an_iteration_line_says_scores_candidate_and_verdict() -> None:
    gated = record(
        "not-gated", candidate="c0ffee", candidate_score=2 / 3, selection_mean=0.4583, reason="gain too small"
    )
    assert iteration_line(gated) == (
        "evolve   7: parent main SKILL.md, minibatch 0.33 -> 0.67, candidate c0ffee, selection 0.458,"
        " kept on the frontier, not gated (gain too small)"
    )
    skipped = record("skipped-perfect", parent_score=None, reason="x" * 200)
    assert iteration_line(skipped) == (
        f"evolve   7: parent main SKILL.md, minibatch -, minibatch already solved: no proposal ({'x' * 160}…)"
    )
    merged = record("merged", candidate="c0ffee", reason="passed")  # a merge's reason is not repeated
    assert iteration_line(merged).endswith("candidate c0ffee, gate: PASS, merged")
    assert iteration_line(record("something-new")).endswith("minibatch 0.33, something-new")


def test_a_long_reason_is_cut_after_a_whole_clause_or_word_never_inside_a_number() -> None:
    clauses = "; ".join(f"selection gain +0.0{i}1 below min_effect +0.05 on 24 instances" for i in range(6))
    line = iteration_line(record("not-gated", reason=clauses))
    shown = line[line.index("(") + 1 : -1]
    assert shown.endswith("on 24 instances …") and len(shown) <= 162
    words = "gain " + " ".join(f"+0.{i:03d}" for i in range(60))
    shown = iteration_line(record("not-gated", reason=words)).rsplit("(", 1)[1][:-1]
    assert shown.endswith(" …") and shown[:-2].split()[-1] in words.split()


REPORT = EvolveReport(
    run="r1",
    seed=3,
    stopped="max proposals (2)",
    spend=Spend(rollouts=42, proposals=2, cost_usd=0.0),
    merged=[],
    iterations=[record("not-better"), record("not-better"), record("merged", candidate="c0ffee")],
)


def test_the_report_counts_outcomes_and_spending() -> None:
    assert report_text(REPORT) == (
        "evolve run r1 (seed 3): 3 iterations: 1 merged, 2 not-better\n"
        "  spent 42 evaluator rollouts, 2 proposals\n"
        "  stopped: max proposals (2)"
    )
    paid = replace(REPORT, spend=Spend(1, 1, 0.01234), merged=["c0ffee"], iterations=[])
    assert report_text(paid).splitlines()[1:] == [
        "  spent 1 evaluator rollouts, 1 proposals, $0.0123",
        "  stopped: max proposals (2)",
        "  merged: c0ffee",
    ]
    assert report_text(paid).startswith("evolve run r1 (seed 3): 0 iterations: no iterations")


def test_the_report_as_json_is_flat_with_the_records_as_stored() -> None:
    merged = record("merged", candidate="c0ffee")
    data = json.loads(to_json(replace(REPORT, merged=["c0ffee"], iterations=[record("not-better"), merged])))
    assert list(data) == [
        "run", "seed", "stopped", "rollouts", "proposals", "cost_usd", "merged", "iterations"
    ]  # fmt: skip
    assert (data["rollouts"], data["proposals"], data["cost_usd"], data["merged"]) == (42, 2, 0.0, ["c0ffee"])
    assert data["iterations"][1] == merged.model_dump(mode="json")
    assert data["iterations"][0]["kind"] == "evolve-iteration"
