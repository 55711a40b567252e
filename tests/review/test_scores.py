from __future__ import annotations

import pytest

from harnessgit.config import GateSection
from harnessgit.evaluation.scores import InstanceScore, ScoreSummary
from harnessgit.review.scores import UNCLASSIFIED, excerpt, failure_shift, flipped, score_row


def summary(scores: dict[str, float], classes: dict[str, str] | None = None) -> ScoreSummary:
    values = list(scores.values())
    classes = classes or {}
    return ScoreSummary(
        split="selection",
        harness="h",
        fingerprint="f" * 64,
        model="m",
        n=len(values),
        missing=[],
        mean=sum(values) / len(values) if values else None,
        stderr=None,
        instances=[
            InstanceScore(instance=i, mean=v, scores=[v], failure_class=classes.get(i))
            for i, v in scores.items()
        ],
        records=[],
        commits=[],
    )


def test_flipped_orders_by_size_of_change_then_name() -> None:
    base = summary({"a": 0.0, "b": 0.5, "c": 1.0, "d": 1.0, "e": 0.2})
    head = summary({"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.8, "e": 0.2, "new": 1.0})
    assert flipped(base, head) == (["a", "b"], ["c", "d"])


def test_failure_shift_counts_shares_of_failures() -> None:
    base = summary({"a": 0.0, "b": 0.0, "c": 1.0, "d": 0.0}, {"a": "tool", "b": "tool", "d": "planning"})
    head = summary({"a": 0.0, "b": 1.0, "c": 0.0, "d": 0.0}, {"a": "planning", "c": "planning"})
    shift = failure_shift("selection", base, head)
    assert shift is not None and (shift.base_failures, shift.head_failures) == (3, 3)
    shares = {c.failure_class: c for c in shift.classes}
    assert shares["tool"].base_share == pytest.approx(2 / 3) and shares["tool"].head_count == 0
    assert shares["planning"].head_share == pytest.approx(2 / 3)
    assert shares[UNCLASSIFIED].head_count == 1  # d failed without a class on the head
    # The classes that moved most come first.
    assert [c.failure_class for c in shift.classes] == ["tool", UNCLASSIFIED, "planning"]
    assert failure_shift("selection", summary({"a": 0.0}), summary({"a": 1.0})) is None


def test_no_failure_shift_when_no_instance_both_sides_scored_failed() -> None:
    # The demo's train split: the classified failure is on an instance only the base scored.
    base = summary({"a": 1.0, "b": 0.0}, {"b": "tool"})
    head = summary({"a": 1.0})
    assert failure_shift("train", base, head) is None


def test_excerpt_shows_the_last_steps() -> None:
    steps = {"steps": ["read", "search", {"tool": "grep", "args": ["x"]}, "gave up"]}
    assert excerpt(steps) == '[1 earlier steps] search | {"args":["x"],"tool":"grep"} | gave up'
    assert excerpt(["only"]) == "only"
    assert excerpt({"answer": 42}) == '{"answer":42}'
    assert excerpt("x" * 1000, limit=20) == "x" * 19 + "…"
    assert excerpt(None) is None


def test_score_row_compares_the_paired_instances() -> None:
    base = summary({f"s-{i}": float(i < 10) for i in range(40)})
    head = summary({f"s-{i}": float(i < 30) for i in range(40)})
    row = score_row("selection", base, head, GateSection(), split_size=40, current=True, held_out=False)
    assert (
        row.n == 40
        and row.difference == pytest.approx(0.5)
        and (row.wins, row.losses, row.ties) == (20, 0, 20)
    )
    assert row.ci_low is not None and row.ci_low > 0 and row.p_value is not None and row.p_value < 0.01
    assert not row.decides and row.alpha == pytest.approx(0.0304, abs=1e-4)  # attempt 1: it spends nothing
    same = score_row("train", base, base, GateSection(), split_size=40, current=True, held_out=False)
    assert same.difference == 0 and same.mde is None  # no variation: no detectable effect to quote
    lonely = score_row(
        "selection",
        summary({"a": 1.0}),
        summary({}),
        GateSection(),
        split_size=1,
        current=True,
        held_out=False,
    )
    assert lonely.n == 0 and lonely.difference is None and lonely.base_mean is None
    assert (lonely.base_n, lonely.head_n) == (1, 0)


def test_score_row_compares_only_the_instances_both_sides_have() -> None:
    """Issue 12, finding 8: the base scored on the whole train split, the head on a
    3-instance minibatch. Means over different instances are not comparable: the row
    compares the shared instances, or nothing, and keeps each side's coverage."""
    base = summary({f"t-{i}": float(i % 2) for i in range(60)})  # 50.0 over all 60
    minibatch = summary({"t-1": 1.0, "t-3": 1.0, "t-4": 1.0})
    row = score_row("train", base, minibatch, GateSection(), split_size=60, current=True, held_out=False)
    assert (row.n, row.base_n, row.head_n) == (3, 60, 3)
    assert row.base_mean == pytest.approx(2 / 3) and row.head_mean == 1.0  # both over t-1, t-3, t-4
    elsewhere = summary({"t-100": 1.0, "t-1": 0.0})  # one instance shared: no comparison
    row = score_row("train", base, elsewhere, GateSection(), split_size=60, current=True, held_out=False)
    assert (row.n, row.base_n, row.head_n) == (1, 60, 2)
    assert row.base_mean is None and row.head_mean is None and row.difference is None
