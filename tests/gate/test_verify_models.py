"""`verify` re-checks a merge's loss tests on other models (issue 19, `[gate] models`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest
from harnessgit.gate.merge import merge
from harnessgit.gate.verify import verify
from harnessgit.records import GateRecord, ModelCheck
from harnessgit.store import Store, Transaction
from tests.cli.runner import run
from tests.coevolution.fixtures import models_repo, skill
from tests.conftest import git

BATCHES = with_batches()  # the runner the gate takes from its caller

__all__ = ["models_repo"]


def gate_over_beta(repo: Path) -> None:
    toml = repo / "harnessgit.toml"
    toml.write_text(toml.read_text() + '\n[gate]\nmodels = ["beta"]\n')
    git(repo, "commit", "-qam", "Require no loss on beta")
    assert run(repo, "override", "main", "--reason", "gate over beta too").exit_code == 0


def merged(repo: Path, level: int, *extra: str) -> str:
    """Merge an edit to LEVEL ``level`` through the gate; the merge commit."""
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(store, config, {"SKILL.md": skill(level, *extra)}, rationale="Edit").candidate
        landed = merge(store, config, GateRequest(cand), execution=BATCHES, check=check_change).merge
    assert landed
    return landed


def tampered(repo: Path, landed: str, **changes: object) -> list[str]:
    """Supersede the merge's gate record by a copy with ``changes`` (as anyone who can
    write notes could), and say what verify finds."""
    with Store.discover(repo) as store:
        (real,) = [r for r in store.notes.records_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)]
        txn = Transaction("tamper")
        copy = real.model_copy(update={**changes, "id": "e" * 32, "supersedes": real.id})
        txn.append(layout.NOTES_GATE, landed, [copy])
        store.refs.commit(txn)
        return [finding.problem for finding in verify(store, load_config(repo)).findings]


def recorded_models(repo: Path, landed: str) -> list[ModelCheck]:
    with Store.discover(repo) as store:
        (real,) = [r for r in store.notes.records_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)]
    return list(real.models or [])


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_verify_recomputes_the_loss_test_of_each_model(models_repo: Path) -> None:
    gate_over_beta(models_repo)
    landed = merged(models_repo, 35)  # helps both alpha and beta
    with Store.discover(models_repo) as store:
        assert verify(store, load_config(models_repo)).ok
    (beta,) = recorded_models(models_repo, landed)
    assert beta.model == "beta" and beta.n == 40 and not beta.loss
    claimed = [
        beta.model_copy(update={"difference": 0.9}),
        ModelCheck(model="gamma", n=40, difference=0.1, p_value=0.9, level=0.03),
    ]
    problems = tampered(models_repo, landed, models=claimed)
    assert any(
        "model beta: the loss test does not recompute" in p and "difference +90.0" in p and "+37.5" in p
        for p in problems
    ), problems
    # gamma was never evaluated: the record claims a test it has no scores for.
    assert any(p.startswith("model gamma: no stored scores for the base on 40") for p in problems), problems


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_verify_finds_a_model_the_base_lists_but_the_record_skipped(models_repo: Path) -> None:
    gate_over_beta(models_repo)
    landed = merged(models_repo, 35)
    problems = tampered(models_repo, landed, models=None)
    assert any("[gate] models at its base lists beta" in p for p in problems), problems


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_verify_finds_a_merge_that_passed_with_a_loss_on_a_model(models_repo: Path) -> None:
    # The gate refuses the STRICT PLAN edit for its loss on beta; merged by hand with a
    # copy of that gate record turned into a pass, every number in it recomputes, and
    # the verdict does not follow from them.
    with Store.discover(models_repo) as store:
        cand = propose(
            store, load_config(models_repo), {"SKILL.md": skill(20, "STRICT PLAN")}, rationale="Plan"
        )
    assert run(models_repo, "gate", cand.candidate, "--model", "beta").exit_code == 1
    git(models_repo, "merge", "-q", "--no-ff", "-m", "merged by hand", cand.commit)
    landed = git(models_repo, "rev-parse", "HEAD").strip()
    with Store.discover(models_repo) as store:
        (refused,) = [
            r for r in store.notes.records_on(layout.NOTES_GATE, cand.commit) if isinstance(r, GateRecord)
        ]
        assert refused.models and refused.models[0].loss and not refused.passed
        txn = Transaction("forge")
        forged = refused.model_copy(update={"passed": True, "reasons": [], "merge": landed, "id": "f" * 32})
        txn.append(layout.NOTES_GATE, landed, [forged])
        store.refs.commit(txn)
        problems = [finding.problem for finding in verify(store, load_config(models_repo)).findings]
    passed_with_loss = "model beta: the gate record passed with a significant loss of -37.5"
    assert any(passed_with_loss in p for p in problems), problems
    assert not any("does not recompute" in p for p in problems), problems
