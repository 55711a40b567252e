"""`harnessgit verify`: an ungated commit, a forged record, a decision that does not recompute."""

from __future__ import annotations

from pathlib import Path

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.gate.merge import merge
from harnessgit.gate.verify import verify
from harnessgit.records import GateRecord
from harnessgit.store import Store, Transaction
from tests.conftest import git, write
from tests.gating_fixtures import skill


def test_verify_finds_a_commit_that_skipped_the_gate(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        assert merge(store, config, cand.candidate).merge
        assert verify(store, config).ok
        write(gate_repo, "SKILL.md", skill(35))
        git(gate_repo, "commit", "-qam", "sneaky direct edit")
        report = verify(store, config)
    assert not report.ok and "without the gate" in report.findings[0].problem


def test_verify_finds_a_forged_gate_record(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(store, config, cand.candidate).merge
        assert landed
        (real,) = [r for r in store.notes_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)]
        # A merge by hand of another edit, with a copy of the real gate record pasted on it.
        write(gate_repo, "SKILL.md", skill(5))
        git(gate_repo, "commit", "-qam", "worse edit")
        forged = git(gate_repo, "rev-parse", "HEAD").strip()
        txn = Transaction("forge")
        txn.append(layout.NOTES_GATE, forged, [real.model_copy(update={"merge": forged, "id": "f" * 32})])
        store.commit(txn)
        report = verify(store, config)
    problems = " ".join(f.problem for f in report.findings)
    assert "merged tree" in problems and "parents" in problems


def test_verify_finds_a_decision_that_does_not_recompute(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(store, config, cand.candidate).merge
        assert landed
        (real,) = [r for r in store.notes_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)]
        txn = Transaction("tamper")
        tampered = real.model_copy(update={"lower_bound": 0.9, "id": "e" * 32, "supersedes": real.id})
        txn.append(layout.NOTES_GATE, landed, [tampered])
        store.commit(txn)
        report = verify(store, config)
    assert any("does not recompute" in f.problem for f in report.findings)
