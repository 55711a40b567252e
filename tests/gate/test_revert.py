"""`harnessgit revert`: the inverse of an accepted edit, gated or as a recorded override."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest
from harnessgit.gate.merge import merge
from harnessgit.gate.revert import revert
from harnessgit.gate.verify import verify
from harnessgit.records import OverrideRecord
from harnessgit.store import Store
from tests.conftest import git
from tests.gating_fixtures import skill

BATCHES = with_batches()  # the runner the gate takes from its caller


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_revert_proposes_the_inverse_and_no_gate_records_an_override(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(
            store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change
        ).merge
        assert landed
        proposal, none = revert(store, config, landed)
        assert none is None
        assert git(gate_repo, "show", f"{proposal.commit}:SKILL.md") == skill(10)
        with pytest.raises(HarnessgitError, match="needs --reason"):
            revert(store, config, landed, no_gate=True)
        _, forced = revert(store, config, landed, no_gate=True, reason="production incident 42")
        assert forced is not None and forced.merge
        records = store.notes.records_on(layout.NOTES_GATE, forced.merge)
        (override,) = [r for r in records if isinstance(r, OverrideRecord)]
        assert override.reason == "production incident 42" and override.action == "revert"
        report = verify(store, config)
    assert report.ok and len(report.overrides) == 1 and report.gated == 1


def test_revert_refuses_what_is_not_an_accepted_edit(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        with pytest.raises(HarnessgitError, match="not an accepted edit"):
            revert(store, config, cand.candidate)
