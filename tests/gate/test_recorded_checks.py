"""The checks' verdict judged when a candidate is proposed, read back by the gate
(harnessgit.candidates.checked): the same report as checking again, and checked again
whenever anything it depends on differs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harnessgit import layout
from harnessgit.candidates.checked import reuse
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.errors import GateRefused
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest, run_gate
from harnessgit.records import ProposalRecord
from harnessgit.store import Store
from tests.conftest import git
from tests.gating_fixtures import skill

BATCHES = with_batches()  # the runner the gate takes from its caller

pytestmark = pytest.mark.usefixtures("gate_repo")


def _proposal(store: Store, commit: str) -> ProposalRecord:
    (record,) = [
        r for r in store.notes.records_on(layout.NOTES_EVIDENCE, commit) if isinstance(r, ProposalRecord)
    ]
    return record


def _no_checking(*_args: Any, **_kwargs: Any) -> Any:
    raise AssertionError("the gate ran the checks again")


def test_the_gate_reads_the_verdict_the_proposal_kept(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        kept = _proposal(store, cand.commit).checks
        assert kept is not None and kept.base == cand.parent
        fresh = check_change(store, config, cand.parent, cand.commit)
        assert reuse(store, config, cand.parent, cand.commit) == fresh
        outcome = run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=_no_checking)
    assert outcome.passed and outcome.checks == fresh


def test_a_failing_verdict_on_record_refuses_as_checking_does(gate_repo: Path) -> None:
    grown = skill(30).replace("name: demo", "name: Not A Valid Name!")  # the format rule fails it
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": grown})
        assert check_change(store, config, cand.parent, cand.commit).failed
        with pytest.raises(GateRefused) as checked:
            run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
        with pytest.raises(GateRefused) as reused:
            run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=_no_checking)
    assert "the harness checks fail" in str(reused.value) and str(reused.value) == str(checked.value)


def test_the_gate_checks_again_when_what_the_verdict_depends_on_changed(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        assert reuse(store, config, cand.parent, cand.commit) is not None
        git(gate_repo, "update-ref", layout.LABELS + "production", cand.parent)  # growth may read labels
        assert reuse(store, config, cand.parent, cand.commit) is None
        assert reuse(store, config, cand.commit, cand.commit) is None  # another base


def test_a_proposal_off_the_base_tip_keeps_no_verdict(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        first = propose(store, config, {"SKILL.md": skill(20)})
        second = propose(store, config, {"SKILL.md": skill(30)}, parent=first.commit)
        assert _proposal(store, first.commit).checks is not None
        assert _proposal(store, second.commit).checks is None


def test_a_kept_report_that_does_not_read_back_is_not_trusted(
    gate_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        kept = _proposal(store, cand.commit)
        assert kept.checks is not None
        damaged = kept.model_copy(update={"checks": kept.checks.model_copy(update={"report": {"files": 1}})})
        monkeypatch.setattr(store.notes, "records_on", lambda _ref, _target: [damaged])
        assert reuse(store, config, cand.parent, cand.commit) is None
