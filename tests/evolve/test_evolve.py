from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from harnessgit import layout
from harnessgit.candidates.targets import candidate_tips
from harnessgit.cli import cli
from harnessgit.cli._base import State
from harnessgit.config import load_config
from harnessgit.demo import prepare
from harnessgit.evolve import Budget, evolve
from harnessgit.evolve.minibatch import minibatch
from harnessgit.records import IterationRecord, ProposalRecord, RetireRecord
from harnessgit.store import Store
from tests.conftest import git, write


def test_minibatches_cover_each_epoch_and_resume_identically() -> None:
    train = [f"t{i}" for i in range(10)]
    first_epoch = [minibatch(train, 3, i, 3) for i in range(3)]
    assert all(len(batch) == 3 for batch in first_epoch)
    assert len({x for batch in first_epoch for x in batch}) == 9  # no repeats within an epoch
    assert minibatch(train, 3, 4, 3) == minibatch(list(reversed(train)), 3, 4, 3)  # order-free
    assert minibatch(train, 3, 0, 3) != minibatch(train, 4, 0, 3)
    assert minibatch(train, 3, 3, 3) != first_epoch[0]  # a new epoch reshuffles


@pytest.fixture
def triage(tmp_path: Path) -> Path:
    repo = tmp_path / "triage"
    prepare(repo, lambda _line: None)
    return repo


def records(store: Store) -> list[IterationRecord]:
    found = [
        r for rs in store.notes(layout.NOTES_EVIDENCE).values() for r in rs if isinstance(r, IterationRecord)
    ]
    return sorted(found, key=lambda r: r.iteration)


def test_evolve_records_every_iteration_and_resumes(triage: Path) -> None:
    with Store.discover(triage) as store:
        config = load_config(triage)
        first = evolve(store, config, budget=Budget(max_proposals=4), seed=1, jobs=2)
        assert first.stopped == "max proposals (4)" and first.spend.proposals == 4
        done = records(store)
        assert [r.iteration for r in done] == list(range(len(done)))
        assert all(r.seed == 1 and r.minibatch and r.component == "SKILL.md" for r in done)
        assert all(r.seconds is not None and r.evaluator_seconds is not None for r in done)
        # Candidates that lost their minibatch are archived as rejected, with a reason on record.
        tips = candidate_tips(store)
        for record in done:
            if record.outcome == "not-better":
                assert record.candidate and tips[record.candidate][0] == "archived"
                retired = [
                    r
                    for r in store.notes_on(layout.NOTES_EVIDENCE, record.commit or "")
                    if isinstance(r, RetireRecord)
                ]
                assert retired and retired[0].reason == "rejected"
            if record.candidate:
                proposal = next(
                    r
                    for r in store.notes_on(layout.NOTES_EVIDENCE, record.commit or "")
                    if isinstance(r, ProposalRecord)
                )
                assert proposal.source == "evolve" and proposal.proposer == "command:python3 propose.py"
        rollouts = first.spend.rollouts
        assert rollouts > 0

        again = evolve(store, config, budget=Budget(max_proposals=2), seed=1, jobs=2)
        resumed = records(store)
        assert [r.iteration for r in resumed] == list(range(len(resumed)))  # the sequence continued
        assert again.spend.rollouts < rollouts  # main's selection scores were on record already


def test_budgets_and_the_stop_file(triage: Path) -> None:
    with Store.discover(triage) as store:
        config = load_config(triage)
        stop = triage / "stop"
        stop.write_text("")
        stopped = evolve(store, config, budget=Budget(max_proposals=5), stop_file=stop)
        assert stopped.stopped.startswith("stop file") and stopped.spend.proposals == 0
        stop.unlink()
        small = evolve(store, config, budget=Budget(max_rollouts=125), seed=2)
        assert "max rollouts (125)" in small.stopped and small.spend.rollouts <= 125


REJECTING = """
import json, sys
request = json.load(sys.stdin)
print(json.dumps({"text": request["current_text"] + "\\n```python\\nunfinished", "rationale": "cut short"}))
"""


def test_a_bad_proposal_is_recorded_not_adopted(triage: Path) -> None:
    write(triage, "bad_proposer.py", REJECTING)
    config_text = (
        (triage / "harnessgit.toml")
        .read_text()
        .replace('command = ["python3", "propose.py"]', f'command = ["{sys.executable}", "bad_proposer.py"]')
    )
    write(triage, "harnessgit.toml", config_text)
    git(triage, "commit", "-qam", "use a proposer that truncates")
    before = set(candidate_tips(Store.discover(triage)))
    with Store.discover(triage) as store:
        report = evolve(store, load_config(triage), budget=Budget(max_proposals=2), seed=5)
        (first, *_) = records(store)
        assert first.outcome == "rejected-proposal" and "unclosed_fence" in first.reason
        evidence = [r for r in store.notes_on(layout.NOTES_EVIDENCE, first.parent) if r.kind == "evidence"]
        assert any(getattr(r, "label", "") == "rejected-proposal" for r in evidence)
        assert set(candidate_tips(store)) == before  # nothing was adopted
    assert report.spend.proposals == 2


def test_evolve_cli_needs_a_budget_and_prints_one_line_per_iteration(triage: Path) -> None:
    runner = CliRunner(catch_exceptions=False)
    assert runner.invoke(cli, ["-C", str(triage), "evolve"], obj=State()).exit_code == 2
    result = runner.invoke(
        cli, ["-C", str(triage), "evolve", "--max-proposals", "2", "--seed", "3", "--json"], obj=State()
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("evolve ")]
    report = json.loads(result.stdout[result.stdout.index("{") :])
    assert len(lines) == len(report["iterations"]) and report["proposals"] == 2


INTERRUPTED = """
import sys
from harnessgit.cli import main
sys.exit(main(["-C", sys.argv[1], "evolve", "--max-proposals", "50", "--seed", "9"]))
"""


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
        report = evolve(store, load_config(triage), budget=Budget(max_proposals=1), seed=9)
        assert records(store)[-1].iteration == seen[-1].iteration + len(report.iterations)


def test_choose_component_round_robin_or_by_failures() -> None:
    from harnessgit.evolve.policy import choose_component
    from harnessgit.proposers import ReflectiveExample

    files = ["prompts/system.md", "skills/search/SKILL.md", "tools/search.json"]
    failing = [
        ReflectiveExample(instance="a", feedback="tools/search.json: the query was missing", score=0.0),
        ReflectiveExample(
            instance="b", trajectory='{"steps": ["call search.json"]}', feedback="no", score=0.0
        ),
        ReflectiveExample(instance="c", feedback="SKILL.md was fine; tools/search.json again", score=1.0),
    ]
    assert [choose_component(files, i, "round-robin", failing) for i in range(4)] == [*files, files[0]]
    assert choose_component(files, 0, "most-failures", failing) == "tools/search.json"
    quiet = [ReflectiveExample(instance="a", feedback="wrong answer", score=0.0)]
    assert choose_component(files, 1, "most-failures", quiet) == files[1]  # no mention: round-robin


def test_worth_gating_waits_for_a_gain_the_gate_can_see() -> None:
    from harnessgit.config import Config
    from harnessgit.evolve.policy import worth_gating

    base = {f"s{i}": (0.0, None) for i in range(120)}
    small = {**base, **{f"s{i}": (1.0, None) for i in range(3)}}
    large = {**base, **{f"s{i}": (1.0, None) for i in range(40)}}
    worse = {**base, "s0": (0.0, None)}
    assert worth_gating(Config(), base, worse, 1) == (
        False,
        "selection gain +0.0 points over main: nothing to gate",
    )
    ok, why = worth_gating(Config(), base, small, 1)
    assert not ok and "below what the gate can detect at attempt 1" in why
    assert worth_gating(Config(), base, large, 1) == (True, "")
    # The same gain is too small at a late attempt, where alpha_k is tiny.
    medium = {**base, **{f"s{i}": (1.0, None) for i in range(12)}}
    assert worth_gating(Config(), base, medium, 1)[0] and not worth_gating(Config(), base, medium, 40)[0]
