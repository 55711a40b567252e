from __future__ import annotations

from harnessgit.evolve.state import Budget, Progress, Spend


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


def test_the_stoppers_say_why_the_run_stops() -> None:
    spent = Spend()
    assert Budget(max_seconds=60).reached(spent) == ""  # no progress yet: nothing to judge
    assert Budget(max_seconds=60).reached(spent, Progress(seconds=59.9)) == ""
    assert Budget(max_seconds=60).reached(spent, Progress(seconds=60.0)) == "max time (60 s)"
    assert Budget(target=0.8).reached(spent, Progress(best=0.79)) == ""
    assert Budget(target=0.8).reached(spent, Progress(best=0.8)) == (
        "target reached: best selection mean 0.800 >= 0.8"
    )
    assert Budget(target=0.8).reached(spent, Progress()) == ""
    assert Budget(no_improvement=3).reached(spent, Progress(best=0.5, stale=2)) == ""
    assert Budget(no_improvement=3).reached(spent, Progress(best=0.5, stale=3)) == (
        "no improvement in 3 iterations (best selection mean 0.500)"
    )


def test_progress_counts_iterations_that_did_not_raise_the_best_mean() -> None:
    # As gepa's NoImprovementStopper: the first iteration sets the best, ties do not raise it.
    progress = Progress().after(0.5, 1.0)
    assert progress == Progress(seconds=1.0, best=0.5, stale=0)
    progress = progress.after(0.5, 2.0).after(None, 3.0)
    assert progress == Progress(seconds=3.0, best=0.5, stale=2)
    assert progress.after(0.6, 4.0) == Progress(seconds=4.0, best=0.6, stale=0)
