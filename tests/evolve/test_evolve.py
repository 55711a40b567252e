from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.config import load_config
from harnessgit.evaluation.eval import Execution
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.state import Budget, EvolveRequest
from harnessgit.records import ProposalRecord, RetireRecord
from harnessgit.store import Store
from harnessgit.targets import candidate_tips
from tests.conftest import git
from tests.evolve.evolve_fixtures import records


@pytest.mark.slow
def test_evolve_records_every_iteration_and_resumes(triage: Path) -> None:
    with Store.discover(triage) as store:
        config = load_config(triage)
        seen: list[str] = []
        budget = Budget(max_proposals=4)
        first = evolve(
            store,
            config,
            EvolveRequest(budget=budget, seed=1),
            execution=Execution(jobs=2),
            on_iteration=lambda r: seen.append(r.id),
        )
        assert first.stopped == "max proposals (4)" and first.spend.proposals == 4
        done = records(store)
        assert [r.iteration for r in done] == list(range(len(done)))
        assert [r.id for r in first.iterations] == [r.id for r in done] == seen  # reported as written
        assert all(r.seed == 1 and r.run == first.run for r in done)
        # Every proposal drew a minibatch of one component; the end-of-run decision
        # (evolve's default gates once, at the end: harnessgit.evolve.adopt) is last, on
        # the frontier's best, and draws none.
        proposed = [r for r in done if r.move != "adopt"]
        assert [r.move for r in done[len(proposed) :]] in ([], ["adopt"])
        assert all(r.minibatch and r.component == "SKILL.md" for r in proposed)
        assert all(r.seconds is not None and r.evaluator_seconds is not None for r in done)
        assert sum(r.rollouts for r in done) <= first.spend.rollouts  # main's selection run is no iteration's
        # Candidates that lost their minibatch are archived as rejected, with a reason on record.
        tips = candidate_tips(store.refs)
        for record in done:
            if record.outcome == "not-better":
                assert record.candidate and tips[record.candidate][0] == "archived"
                retired = [
                    r
                    for r in store.notes.records_on(layout.NOTES_EVIDENCE, record.commit or "")
                    if isinstance(r, RetireRecord)
                ]
                assert retired and retired[0].reason == "rejected"
            if record.candidate:
                proposal = next(
                    r
                    for r in store.notes.records_on(layout.NOTES_EVIDENCE, record.commit or "")
                    if isinstance(r, ProposalRecord)
                )
                assert proposal.source == "evolve" and proposal.proposer == "command:python3 propose.py"
        rollouts = first.spend.rollouts
        assert rollouts > 0

        again = evolve(
            store, config, EvolveRequest(budget=Budget(max_proposals=2), seed=1), execution=Execution(jobs=2)
        )
        resumed = records(store)
        assert [r.iteration for r in resumed] == list(range(len(resumed)))  # the sequence continued
        assert again.spend.rollouts < rollouts  # main's selection scores were on record already


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_budgets_and_the_stop_file(triage: Path) -> None:
    with Store.discover(triage) as store:
        config = load_config(triage)
        stop = triage / "stop"
        stop.write_text("")
        stopped = evolve(store, config, EvolveRequest(budget=Budget(max_proposals=5), stop_file=stop))
        assert stopped.stopped.startswith("stop file") and stopped.spend.proposals == 0
        stop.unlink()
        small = evolve(store, config, EvolveRequest(budget=Budget(max_rollouts=125), seed=2))
        assert "max rollouts (125)" in small.stopped and small.spend.rollouts <= 125


INTERRUPTED = """
import sys
from harnessgit.cli import main
sys.exit(main(["-C", sys.argv[1], "evolve", "--max-proposals", "50", "--seed", "9"]))
"""


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_the_run_resumes(triage: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED, str(triage)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("evolve   1:"):
            break
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert git(triage, "fsck", "--no-dangling") == ""
    with Store.discover(triage) as store:
        seen = records(store)
        report = evolve(store, load_config(triage), EvolveRequest(budget=Budget(max_proposals=1), seed=9))
        assert records(store)[-1].iteration == seen[-1].iteration + len(report.iterations)
