"""Sequential evaluation (issue 25): with policy elond and [gate] batch, the gate
evaluates batch by batch, stops once the e-values settle, and verify re-checks it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.evaluation.eval import with_batches
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.gate.gate import GateRequest, run_gate
from harnessgit.gate.merge import merge
from harnessgit.gate.verify import verify
from harnessgit.records import GateRecord
from harnessgit.store import Store, Transaction
from tests.conftest import CONFIG
from tests.gating_fixtures import EVALUATOR, SPLITS, skill

BATCHES = with_batches()  # the runner the gate takes from its caller

SEQUENTIAL = CONFIG + 'batch_size = 20\n\n[gate]\npolicy = "elond"\nbatch = 10\nmin_instances = 10\n'


def sequential_repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(
        {"eval.py": EVALUATOR, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(10)}, config=SEQUENTIAL
    )


def test_a_clear_gain_stops_early_and_verify_rechecks_the_stopping_point(
    make_repo: Callable[..., Path],
) -> None:
    repo = sequential_repo(make_repo)
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(store, config, {"SKILL.md": skill(40)})
        landed = merge(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
        record = landed.outcome.record if landed.outcome else None
        assert landed.merge and record is not None and record.verdict == "pass"
        assert record.batch == 10 and record.selection_size == 40 and record.n < 40
        assert record.e_value is not None and record.level is not None and record.e_value >= 1 / record.level
        # Only the instances read were evaluated: the rollouts saved are real.
        book = ScoreBook.load(store)
        key = landed.outcome.candidate.key if landed.outcome else None
        assert key is not None and len({row.instance for row in book.rows(key).values()}) == record.n
        assert verify(store, config).ok
        # A record that claims to have stopped later than the evidence settled is found.
        txn = Transaction("tamper")
        merged = landed.merge
        (real,) = [r for r in store.notes.records_on(layout.NOTES_GATE, merged) if isinstance(r, GateRecord)]
        txn.append(
            layout.NOTES_GATE,
            merged,
            [real.model_copy(update={"id": "e" * 32, "supersedes": real.id, "batch": 5})],
        )
        store.refs.commit(txn)
        problems = [f.problem for f in verify(store, config).findings]
        assert any("but the evidence settles after" in p for p in problems), problems


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_no_clear_evidence_reads_the_whole_split(make_repo: Callable[..., Path]) -> None:
    repo = sequential_repo(make_repo)
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(store, config, {"SKILL.md": skill(10, "fix s-30")})
        outcome = run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
        assert outcome.verdict == "inconclusive" and outcome.record.n == 40
