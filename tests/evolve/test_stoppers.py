"""GEPA's other stoppers on real runs: wall time, no improvement, a target mean."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.config import load_config
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.state import Budget, EvolveRequest
from harnessgit.store import Store
from tests.cli.runner import run
from tests.evolve.evolve_fixtures import assert_on_record
from tests.evolve.test_iteration import REJECTING, climbing_repo


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_target_mean_stops_the_run_once_a_candidate_reaches_it(make_repo: Callable[..., Path]) -> None:
    # Each climbing edit raises the selection mean by 0.2 (LEVEL + 8 of 40 instances).
    repo = climbing_repo(make_repo)
    with Store.discover(repo) as store:
        report = evolve(
            store, load_config(repo), EvolveRequest(budget=Budget(max_proposals=10, target=0.3), seed=0)
        )
        means = [r.selection_mean for r in report.iterations]
        assert report.stopped == "target reached: best selection mean 0.400 >= 0.3"
        assert means[-1] == 0.4 and all(m is None or m < 0.3 for m in means[:-1])
        assert_on_record(store, report)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_wall_time_stops_before_the_next_iteration(make_repo: Callable[..., Path]) -> None:
    repo = climbing_repo(make_repo)
    with Store.discover(repo) as store:
        report = evolve(
            store, load_config(repo), EvolveRequest(budget=Budget(max_proposals=10, max_seconds=0.01), seed=0)
        )
        assert report.stopped == "max time (0.01 s)" and len(report.iterations) == 1


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_no_improvement_stops_the_run_from_the_cli(make_repo: Callable[..., Path]) -> None:
    """Every proposal is refused, so nothing raises the best mean after the first
    iteration sets it: --no-improvement 2 stops after three iterations."""
    repo = climbing_repo(make_repo)
    (repo / "proposer.py").write_text(REJECTING)
    result = run(repo, "evolve", "--no-improvement", "2", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{") :])
    assert report["stopped"] == "no improvement in 2 iterations (best selection mean 0.000)"
    assert [r["outcome"] for r in report["iterations"]] == ["rejected-proposal"] * 3
    assert run(repo, "evolve", "--target", "0.5").exit_code == 2  # a target alone may never stop
