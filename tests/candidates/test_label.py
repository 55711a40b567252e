"""Labels: audited, compare-and-swap pointers such as production."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit.candidates.label import list_labels, move_label
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest
from harnessgit.gate.merge import merge
from harnessgit.store import Store
from harnessgit.targets import label_moves
from tests.cli.runner import run
from tests.conftest import git, snapshot
from tests.gating_fixtures import skill

BATCHES = with_batches()  # the runner the gate takes from its caller


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_labels_move_with_an_audit_trail(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        first = git(gate_repo, "rev-parse", "main").strip()
        move_label(store, "production", "main", reason="first release")
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(
            store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change
        ).merge
        assert landed
        record = move_label(store, "production", "main", reason="ship the level change")
        assert (
            record.previous == first and record.gate is not None and record.author.startswith("Test Author")
        )
        with pytest.raises(HarnessgitError, match="already points"):
            move_label(store, "production", "main")
        with pytest.raises(HarnessgitError, match="invalid label name"):
            move_label(store, "a..b", "main")
        (label,) = list_labels(store).labels
        assert label.name == "production" and label.commit == landed
        assert [m.reason for m in label_moves(store.notes, "production")] == [
            "first release",
            "ship the level change",
        ]
    assert git(gate_repo, "rev-parse", "refs/harnessgit/labels/production").strip() == landed


def test_pointing_a_label_where_it_points_is_a_no_op_that_exits_0(gate_repo: Path) -> None:
    # A deploy script runs `label production main` on every deploy; a rerun after a kill
    # that had landed the move runs it twice. Before: exit 3 ("already points at").
    assert run(gate_repo, "label", "production", "main").exit_code == 0
    before = snapshot(gate_repo)
    again = run(gate_repo, "label", "production", "main", "--json")
    assert again.exit_code == 0 and again.stdout == ""
    assert "already points at" in again.stderr and "nothing recorded" in again.stderr
    assert snapshot(gate_repo) == before
