from __future__ import annotations

from harnessgit.evolve.state import Budget, Spend


def test_a_budget_stops_proposals_at_its_count_or_its_cost() -> None:
    spent = Spend(rollouts=500, proposals=2, cost_usd=0.5)
    assert Budget(max_rollouts=10).reached(spent) == ""  # rollouts are checked before each evaluation
    assert Budget(max_proposals=3).reached(spent) == ""
    assert Budget(max_proposals=2).reached(spent) == "max proposals (2)"
    assert Budget(max_cost=0.75).reached(spent) == ""
    assert Budget(max_cost=0.5).reached(spent) == "max cost ($0.5)"
    assert Budget(max_proposals=2, max_cost=0.5).reached(spent) == "max proposals (2)"


def test_spending_adds_up_without_changing_what_was_spent() -> None:
    before = Spend()
    after = before.add(rollouts=3).add(proposals=1, cost_usd=0.25).add(cost_usd=0.5)
    assert before == Spend(0, 0, 0.0)
    assert after == Spend(rollouts=3, proposals=1, cost_usd=0.75)
