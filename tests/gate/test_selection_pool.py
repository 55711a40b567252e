"""A selection pool larger than one gate's sample (issue 25, item 2): an inconclusive
verdict on the sample reads the pool on and decides on the e-process; verify re-checks
where it stopped; a bad sample is one line, exit 3, nothing written."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.cli import cli
from harnessgit.cli._base import State
from harnessgit.config import load_config
from harnessgit.config.sections import GateSection
from harnessgit.errors import ConfigError
from harnessgit.evaluation.eval import with_batches
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.gate.gate import GateRequest, preview_gate, run_gate
from harnessgit.gate.merge import merge
from harnessgit.gate.selection_pool import check_sample, extension_ends, read_in_order, settle
from harnessgit.gate.sequential import reading_order
from harnessgit.gate.verify import verify
from harnessgit.records import GateRecord
from harnessgit.stats.decision import alpha_for_attempt
from harnessgit.stats.pairing import PairedScores
from harnessgit.store import Store, Transaction
from tests.conftest import CONFIG, snapshot
from tests.gating_fixtures import EVALUATOR, SPLITS, skill

BATCHES = with_batches()  # the runner the gate takes from its caller

POOLED = CONFIG + "batch_size = 20\n\n[gate]\nsample = 10\nbatch = 10\nmin_instances = 10\n"
ORDER = reading_order(SPLITS["selection"], 0)  # the pool's reading order at seed 0
SOLVED = {f"s-{i}" for i in range(10)}  # what the base (LEVEL 10) solves


def pooled_repo(make_repo: Callable[..., Path], config: str = POOLED) -> Path:
    return make_repo(
        {"eval.py": EVALUATOR, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(10)}, config=config
    )


def fixes(names: list[str]) -> list[str]:
    return [f"fix {name}" for name in names]


def test_extension_ends_start_past_the_sample_and_end_at_the_pool() -> None:
    assert extension_ends(36, 150, 36, 30) == [72, 108, 144, 150]
    assert extension_ends(10, 40, 10, 25) == [30, 40]  # never before min_instances
    assert extension_ends(40, 40, 10, 10) == []  # no pool left


def test_settle_stops_at_the_first_end_that_settles() -> None:
    names = [f"i{k}" for k in range(60)]
    paired = PairedScores(names, [0.0] * 60, [1.0] * 60)  # every instance a win
    found = settle(paired, [20, 40, 60], null=0.0, seed=0, level=alpha_for_attempt(0.05, 1), alpha=0.05)
    assert found.verdict == "pass" and found.read == 20 and found.e_value >= 1 / found.level
    ties = PairedScores(names, [1.0] * 60, [1.0] * 60)
    found = settle(ties, [20, 40, 60], null=0.0, seed=0, level=0.03, alpha=0.05)
    assert found.verdict == "inconclusive" and found.read == 60 and found.e_value == 1.0


def test_a_sample_larger_than_the_pool_is_a_setting_error() -> None:
    check_sample(None, 5)
    check_sample(5, 5)
    with pytest.raises(ConfigError, match=r"gate\.sample: 6 is more than the 5 instances"):
        check_sample(6, 5)
    assert GateSection().sample is None


def test_an_inconclusive_sample_reads_the_pool_on_and_verify_rechecks_it(
    make_repo: Callable[..., Path],
) -> None:
    repo = pooled_repo(make_repo)
    # One win in the sample (too little), then a win on every instance the base fails.
    wins = [ORDER[0], *[name for name in ORDER[10:] if name not in SOLVED]]
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(store, config, {"SKILL.md": skill(10, *fixes(wins))})
        landed = merge(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
        record = landed.outcome.record if landed.outcome else None
        assert landed.merge and record is not None and record.verdict == "pass", record
        assert record.sample == 10 and record.sample_verdict == "inconclusive"
        assert record.pool_batch == 10 and record.selection_size == 40 and 10 < record.n < 40
        assert record.pool_e_value is not None and record.pool_level is not None
        assert record.pool_e_value >= 1 / record.pool_level and record.batch is None
        # Only the instances read were evaluated: the first n of the pool's reading order.
        book = ScoreBook.load(store)
        key = landed.outcome.candidate.key if landed.outcome else None
        assert key is not None
        assert {row.instance for row in book.rows(key).values()} == set(ORDER[: record.n])
        assert verify(store, config).ok
        # A record that claims a batch with which the e-process settles elsewhere is found.
        merged = landed.merge
        (real,) = [r for r in store.notes.records_on(layout.NOTES_GATE, merged) if isinstance(r, GateRecord)]
        txn = Transaction("tamper")
        txn.append(
            layout.NOTES_GATE,
            merged,
            [real.model_copy(update={"id": "e" * 32, "supersedes": real.id, "pool_batch": 30})],
        )
        store.refs.commit(txn)
        problems = [f.problem for f in verify(store, config).findings]
        assert any("but the e-process settles after" in p for p in problems), problems


def test_a_sample_that_settles_reads_no_further(make_repo: Callable[..., Path]) -> None:
    repo = pooled_repo(make_repo)
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(store, config, {"SKILL.md": skill(40)})  # wins on 8 of the sample's 10
        outcome = run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
        r = outcome.record
        assert r.verdict == "pass" and r.sample_verdict == "pass" and r.n == 10 and r.pool_batch is None


def test_a_spent_pool_says_so_in_the_output_and_json(make_repo: Callable[..., Path]) -> None:
    repo = pooled_repo(make_repo)
    with Store.discover(repo) as store:
        cand = propose(store, load_config(repo), {"SKILL.md": skill(10, *fixes([ORDER[0], ORDER[12]]))})
    result = CliRunner().invoke(cli, ["-C", str(repo), "gate", cand.candidate], obj=State())
    assert result.exit_code == 4, result.output
    assert "extended: inconclusive on the sample of 10" in result.stdout
    assert "40 of 40 selection instances read" in result.stdout and "the pool is spent" in result.stdout
    result = CliRunner().invoke(cli, ["-C", str(repo), "gate", cand.candidate, "--json"], obj=State())
    data = json.loads(result.stdout)
    assert data["verdict"] == "inconclusive" and data["sample"] == 10 and data["n"] == 40
    assert data["sample_verdict"] == "inconclusive" and data["pool_batch"] == 10


def test_a_loss_found_in_the_pool_fails(make_repo: Callable[..., Path]) -> None:
    repo = pooled_repo(make_repo)
    breaks = [f"break s-{i}" for i in range(10)]  # every instance the base solves, lost
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(store, config, {"SKILL.md": skill(10, *breaks)})
        r = run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change).record
        assert r.sample_verdict == "inconclusive" and r.verdict == "fail" and not r.passed
        assert r.pool_e_fail is not None and r.pool_e_fail >= 1 / r.alpha
        assert any("the e-value against a gain reached" in reason for reason in r.reasons)
        # review's preview decides the same way from the scores on record, evaluating nothing.
        seen = preview_gate(store, config, cand.candidate, check=check_change).record
        assert (seen.verdict, seen.n, seen.sample_verdict) == ("fail", r.n, "inconclusive")


def test_read_in_order_finds_instances_not_from_the_reading_order() -> None:
    pool = SPLITS["selection"]
    assert read_in_order(pool, 0, sorted(ORDER[:12])) == ""
    assert "not the first 12" in read_in_order(pool, 0, [*ORDER[:11], ORDER[20]])


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("sample = 41", "gate.sample: 41 is more than the 40 instances of the selection split"),
        ("sample = 0", "gate.sample: must be at least 1, not 0"),
        ('sample = "ten"', "gate.sample: must be an integer, not 'ten'"),
        ("sample = 1.5", "gate.sample: must be an integer, not 1.5"),
    ],
)
def test_a_bad_sample_is_one_line_exit_3_and_writes_nothing(
    make_repo: Callable[..., Path], setting: str, message: str
) -> None:
    repo = pooled_repo(make_repo, CONFIG + "batch_size = 20\n")
    with Store.discover(repo) as store:
        cand = propose(store, load_config(repo), {"SKILL.md": skill(30)}).candidate
    # Committed on the base: the gate decides with the base's committed settings.
    toml = repo / "harnessgit.toml"
    toml.write_text(toml.read_text() + f"\n[gate]\n{setting}\n")
    subprocess.run(["git", "-C", str(repo), "commit", "-qam", "gate sample"], check=True)
    before = snapshot(repo)
    for command in (["gate", cand], ["merge", cand]):
        result = CliRunner().invoke(cli, ["-C", str(repo), *command], obj=State())
        assert result.exit_code == 3 and message in result.stderr, result.output
        assert len(result.stderr.strip().splitlines()) == 1 and snapshot(repo) == before


def test_an_inconclusive_sample_with_no_pool_left_says_so(make_repo: Callable[..., Path]) -> None:
    repo = pooled_repo(make_repo, CONFIG + "batch_size = 20\n\n[gate]\nsample = 40\nmin_instances = 10\n")
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(store, config, {"SKILL.md": skill(10, *fixes([ORDER[0], ORDER[12]]))})
        r = run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change).record
        assert r.verdict == "inconclusive" and r.n == 40 and r.sample == 40 and r.pool_batch is None
        assert any(reason.startswith("no pool left") for reason in r.reasons), r.reasons


def test_elond_reads_the_pool_as_one_e_process_and_verify_rechecks_it(make_repo: Callable[..., Path]) -> None:
    repo = pooled_repo(make_repo, POOLED.replace("[gate]\n", '[gate]\npolicy = "elond"\n'))
    wins = [ORDER[0], *[name for name in ORDER[10:] if name not in SOLVED]]
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(store, config, {"SKILL.md": skill(10, *fixes(wins))})
        landed = merge(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
        r = landed.outcome.record if landed.outcome else None
        assert landed.merge and r is not None and r.policy == "elond" and r.verdict == "pass"
        # The pool is tested at elond's own level, alpha_t, not at strict's alpha_k.
        assert r.sample_verdict == "inconclusive" and r.pool_level == r.level and r.n < 40
        assert verify(store, config).ok
