from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from gepa.gepa_utils import find_dominator_programs, select_program_candidate_from_pareto_front

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.cli import cli
from harnessgit.cli._base import State
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import EvalRequest, evaluate
from harnessgit.gate.frontier import frontier_view, update_frontier
from harnessgit.stats.frontier import sample_parent
from harnessgit.store import Store
from harnessgit.targets import candidate_tips
from tests.conftest import CONFIG, git
from tests.gating_fixtures import EVALUATOR, SPLITS, skill
from tests.stats.test_frontier import gepa_state


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_frontier_keeps_leaders_and_retires_the_dominated(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        with pytest.raises(HarnessgitError, match="not evaluated"):
            frontier_view(store, config)
        evaluate(store, config, "main")
        wide = propose(store, config, {"SKILL.md": skill(30)})  # s-0..s-29
        narrow = propose(store, config, {"SKILL.md": skill(20)})  # dominated by wide
        special = propose(store, config, {"SKILL.md": skill(10, "fix s-39")}, parent=None)  # leads s-39
        pending = propose(store, config, {"SKILL.md": skill(5)})  # never evaluated
        for cand in (wide, narrow, special):
            evaluate(store, config, cand.candidate)
        view = frontier_view(store, config)
        assert set(view.frontier.members) == {wide.candidate, special.candidate}
        rows = {row.candidate: row for row in view.frontier.rows}
        # Ties are kept (GEPA): the instances nobody solves count for every survivor.
        assert rows[wide.candidate].instances_led == 39 and rows[special.candidate].instances_led == 20
        assert rows[wide.candidate].weight == 39 and rows[wide.candidate].parent == "main"
        assert set(view.frontier.dominated) >= {narrow.candidate}
        assert view.waiting == [pending.candidate]
        assert sample_parent(view.frontier, 7) == sample_parent(view.frontier, 7)

        updated = update_frontier(store, config, view)
        assert updated.retired == [narrow.candidate]  # the base is never retired
    refs = git(gate_repo, "for-each-ref", "--format=%(refname)").split()
    live = sorted(r.removeprefix(layout.CANDIDATES) for r in refs if r.startswith(layout.CANDIDATES))
    assert live == sorted([wide.candidate, special.candidate, pending.candidate])
    assert layout.archive_ref(narrow.candidate) in refs


def test_frontier_cli_json_and_sample(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        evaluate(store, config, "main")
        cand = propose(store, config, {"SKILL.md": skill(30)})
        evaluate(store, config, cand.candidate)

    def run(*args: str) -> str:
        result = CliRunner(catch_exceptions=False).invoke(cli, ["-C", str(gate_repo), *args], obj=State())
        assert result.exit_code == 0, result.output
        return result.stdout

    data = json.loads(run("frontier", "--json"))
    assert [row["candidate"] for row in data["rows"]] == [cand.candidate]
    assert data["rows"][0]["instances_led"] == 40  # main is dominated: every front it is in holds cand
    assert run("frontier", "--sample", "--seed", "3").strip() == cand.candidate
    assert "sampling weight" in run("frontier")


def test_candidates_scored_with_another_evaluator_are_not_compared(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        evaluate(store, config, cand.candidate)
        git(gate_repo, "commit", "-q", "--allow-empty", "-m", "nothing yet")
        (gate_repo / "eval.py").write_text((gate_repo / "eval.py").read_text() + "# a new grader\n")
        git(gate_repo, "commit", "-qam", "change the grader on main")
        evaluate(store, config, "main")
        view = frontier_view(store, config)
    assert view.incomparable == [cand.candidate] and view.waiting == []
    assert [row.candidate for row in view.frontier.rows] == ["main"]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_archiving_does_not_change_the_frontier_gepa_would_keep(make_repo: Callable[..., Path]) -> None:
    """Issue 13: archiving dominated candidates made the frontier depend on the path.
    Four candidates, each scored and the frontier updated as evolve does: c2 is
    dominated and archived after its turn, yet once c3 arrives gepa's rule over the
    whole history keeps c0 and c3. Before, the live-only pool answered c1 and c2.
    Compared with gepa's own state and functions: same frontier, same parent per seed."""
    splits = {**SPLITS, "selection": [f"s-{i}" for i in range(5)]}
    repo = make_repo(
        {"eval.py": EVALUATOR, "splits.json": json.dumps(splits), "SKILL.md": skill(0)},
        config=CONFIG + "batch_size = 20\n",
    )
    fixes = [[1, 2, 4], [0, 1, 4], [1, 2, 3], [0, 2, 3]]
    with Store.discover(repo) as store:
        config = load_config(repo)
        evaluate(store, config, "main", EvalRequest(split="selection"))
        names = ["main"]
        for fixed in fixes:
            cand = propose(store, config, {"SKILL.md": skill(0, *(f"fix s-{i}" for i in fixed))})
            evaluate(store, config, cand.candidate, EvalRequest(split="selection"))
            update_frontier(store, config, frontier_view(store, config))
            names.append(cand.candidate)
        view = frontier_view(store, config)
        rows = [[0.0] * 5] + [[1.0 if i in fixed else 0.0 for i in range(5)] for fixed in fixes]
        state = gepa_state(rows)
        fronts, means = state.get_pareto_front_mapping(), state.per_program_tracked_scores
        expected = sorted(names[i] for i in find_dominator_programs(fronts, means))
        assert sorted(view.frontier.members) == expected == sorted([names[1], names[4]])
        assert candidate_tips(store.refs)[names[3]][0] == "archived"  # storage only
        for seed in range(20):
            drawn = select_program_candidate_from_pareto_front(fronts, means, random.Random(seed))
            assert sample_parent(view.frontier, seed) == names[drawn]
