"""How the frontier looks as text (`harnessgit.gate.render.frontier_text`)."""

from __future__ import annotations

from harnessgit.gate.frontier import FrontierView, Member
from harnessgit.gate.render import frontier_text
from harnessgit.stats.frontier import compute_frontier
from harnessgit.stats.frontier_types import PoolCandidate, ScorePool


def view(scores: dict[str, list[float]]) -> FrontierView:
    """The frontier of a pool whose first entry is the base branch ``main``."""
    pool = [PoolCandidate(cid, None if cid == "main" else "main", row) for cid, row in scores.items()]
    frontier = compute_frontier(ScorePool([f"s-{i}" for i in range(3)], pool))
    members = {cid: Member(cid, cid * 5, None) for cid in scores}
    return FrontierView("main", frontier, waiting=[], incomparable=[], members=members)


def test_the_base_branch_is_never_listed_as_off_the_frontier() -> None:
    # c1 ties main everywhere main leads: main is dominated. c2 is below both.
    tied = view({"main": [1.0, 0.0, 0.0], "c1": [1.0, 1.0, 0.0], "c2": [0.0, 0.0, 0.0]})
    assert tied.frontier.dominated == ["main", "c2"]
    text = frontier_text(tied)
    assert "not on the frontier: c2" in text.splitlines()
    assert "main (the base) ties or trails a frontier candidate on every instance" in text
    beaten = frontier_text(view({"main": [0.0, 0.0, 0.0], "c1": [1.0, 1.0, 1.0]}))
    assert "not on the frontier" not in beaten and "main (the base) ties or trails" in beaten
    leading = frontier_text(view({"main": [1.0, 1.0, 0.0], "c1": [0.0, 0.0, 1.0]}))
    assert "the base" not in leading and "not on the frontier" not in leading


def test_archived_members_count_but_are_not_listed_as_off_the_frontier() -> None:
    scores = {"main": [0.0, 0.0, 0.0], "c1": [1.0, 1.0, 0.0], "c2": [0.0, 0.0, 0.0], "c3": [0.0, 1.0, 1.0]}
    tied = view(scores)
    members = {**tied.members, "c2": Member("c2", "c2" * 5, "main", "archived")}
    text = frontier_text(FrontierView("main", tied.frontier, [], [], members=members))
    assert "not on the frontier" not in text  # c2 is archived already: nothing to retire
