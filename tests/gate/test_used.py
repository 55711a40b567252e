"""A gate record names the eval records it decided with, and verify re-checks from those."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest, run_gate
from harnessgit.gate.merge import merge
from harnessgit.gate.used import evals_listing
from harnessgit.records import EvalRecord, GateRecord
from harnessgit.records.lines import dump_record
from harnessgit.store import Store, Transaction
from tests.cli.runner import run
from tests.conftest import git
from tests.gating_fixtures import skill

BATCHES = with_batches()  # the runner the gate takes from its caller


def eval_records(store: Store) -> list[EvalRecord]:
    return [
        r for rs in store.notes.records(layout.NOTES_EVALS).values() for r in rs if isinstance(r, EvalRecord)
    ]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_gate_record_names_every_eval_record_it_decided_with(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        record = run_gate(
            store,
            config,
            GateRequest(cand.candidate, models=["sim-2"]),
            execution=BATCHES,
            check=check_change,
        ).record
        assert record.evals is not None
        named = store.objects.read_blob(record.evals).decode().split("\n")[:-1]
        on_record = eval_records(store)
    # Both sides on the primary model and on the other model of the loss test: 2 batches each.
    assert sorted(named) == sorted(r.id for r in on_record) and len(named) == 8
    assert {r.model for r in on_record} == {"sim-1", "sim-2"}
    git(gate_repo, "gc", "-q", "--prune=now")
    git(gate_repo, "cat-file", "-e", record.evals)  # kept reachable, as the instance listing is


def landed_gate(repo: Path) -> tuple[str, GateRecord]:
    with Store.discover(repo) as store:
        config = load_config(repo)
        landed = merge(
            store,
            config,
            GateRequest(propose(store, config, {"SKILL.md": skill(30)}).candidate),
            execution=BATCHES,
            check=check_change,
        ).merge
        assert landed
        (record,) = [
            r for r in store.notes.records_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)
        ]
    return landed, record


def replace_gate(repo: Path, landed: str, record: GateRecord, **changes: object) -> GateRecord:
    """Supersede the merge's gate record by a copy with ``changes``."""
    copy = record.model_copy(update={**changes, "id": "e" * 32, "supersedes": record.id})
    with Store.discover(repo) as store:
        txn = Transaction("replace the gate record")
        txn.append(layout.NOTES_GATE, landed, [copy])
        store.refs.commit(txn)
    return copy


def test_a_gate_record_from_before_evals_were_named_still_verifies(gate_repo: Path) -> None:
    landed, record = landed_gate(gate_repo)
    old = replace_gate(gate_repo, landed, record, evals=None)
    assert b'"evals"' not in dump_record(old)  # the line an older harnessgit wrote
    result = run(gate_repo, "verify")
    assert result.exit_code == 0, result.output
    assert "1 gated merge" in result.output


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_named_eval_record_this_clone_lacks_is_a_verify_problem(gate_repo: Path) -> None:
    landed, record = landed_gate(gate_repo)
    assert record.evals is not None
    with Store.discover(gate_repo) as store:
        named = store.objects.read_blob(record.evals).decode().split("\n")[:-1]
        more = store.objects.write_blob(evals_listing([*named, "f" * 32]))
    replace_gate(gate_repo, landed, record, evals=more)
    result = run(gate_repo, "verify")
    assert result.exit_code == 1, result.output
    assert (
        "it names 1 eval record it decided with that this clone does not hold (ffffffffffff), "
        "so its decision cannot be re-checked" in result.output
    )
    assert "does not recompute" not in result.output  # not recomputed from other records


def test_a_gate_record_whose_list_of_eval_records_is_absent_is_a_verify_problem(gate_repo: Path) -> None:
    landed, record = landed_gate(gate_repo)
    replace_gate(gate_repo, landed, record, evals="0" * 40)
    result = run(gate_repo, "verify")
    assert result.exit_code == 1, result.output
    assert "the list of eval records it decided with (blob 000000000000) is not in this repository" in (
        result.output
    )


def test_a_gate_record_whose_instance_listing_is_absent_is_a_verify_problem_not_a_crash(
    gate_repo: Path,
) -> None:
    landed, record = landed_gate(gate_repo)
    replace_gate(gate_repo, landed, record, instances="0" * 40)
    result = run(gate_repo, "verify")
    assert result.exit_code == 1, result.output
    assert "the list of instances it compared (blob 000000000000) is not in this repository" in (
        result.output
    )
