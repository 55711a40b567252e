from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.cli import cli
from harnessgit.cli._base import State
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import evaluate
from harnessgit.gate.frontier import frontier_view, update_frontier
from harnessgit.stats.frontier import sample_parent
from harnessgit.store import Store
from tests.conftest import git
from tests.gating_fixtures import skill


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
