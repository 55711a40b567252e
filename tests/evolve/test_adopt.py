"""Evolve's own default policy and its one gate at the end of a run (issue 25, item 6)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from harnessgit import layout
from harnessgit.cli import cli
from harnessgit.cli._base import State
from harnessgit.config import parse_config
from harnessgit.errors import ConfigError
from harnessgit.evolve.adopt import EVOLVE_Q, best_on_frontier, evolve_rules
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.gating import DEFERRED
from harnessgit.evolve.state import Budget, EvolveRequest
from harnessgit.gate.frontier import FrontierView, Member
from harnessgit.gate.verify import verify
from harnessgit.records import GateRecord
from harnessgit.stats.frontier_types import Frontier, FrontierRow
from harnessgit.store import Store
from tests.conftest import CONFIG, snapshot
from tests.gating_fixtures import EVALUATOR, SPLITS, skill


def rules_of(toml: str):  # type: ignore[no-untyped-def]
    return evolve_rules(parse_config((CONFIG + toml).encode()))


def test_without_a_gate_policy_evolve_decides_with_its_own_default() -> None:
    rules = rules_of("")
    assert (rules.config.gate.policy, rules.config.gate.q) == ("bayes", EVOLVE_Q)
    assert rules.at_end and rules.override == ("bayes", EVOLVE_Q)
    assert rules.source == "evolve's default ([gate] policy not set)"
    # [gate] q alone keeps the default policy at that q; the gate command's default stays strict
    only_q = rules_of("\n[gate]\nq = 0.2\n")
    assert (only_q.config.gate.policy, only_q.config.gate.q) == ("bayes", 0.2)
    assert only_q.override == ("bayes", 0.2)
    assert parse_config(CONFIG.encode()).gate.policy == "strict"


@pytest.mark.parametrize(
    ("toml", "policy", "at_end"),
    [
        ('\n[gate]\npolicy = "strict"\n', "strict", False),
        ('\n[gate]\npolicy = "elond"\n', "elond", False),
        ('\n[gate]\npolicy = "bayes"\n', "bayes", True),
        ('\n[gate]\npolicy = "bayes"\n[evolve]\nadopt = "each"\n', "bayes", False),
        ('\n[evolve]\nadopt = "each"\n', "bayes", False),
    ],
)
def test_an_explicit_gate_policy_wins_over_evolves_default(toml: str, policy: str, at_end: bool) -> None:
    rules = rules_of(toml)
    assert rules.config.gate.policy == policy and rules.at_end is at_end
    explicit = "policy =" in toml
    assert rules.override == (None if explicit else ("bayes", EVOLVE_Q))
    assert rules.source == ("[gate] policy" if explicit else "evolve's default ([gate] policy not set)")
    if explicit:
        assert rules.config.gate.q == 0.1  # the gate's own default q, as the gate command reads it


def test_gating_at_the_end_under_a_policy_that_does_not_correct_for_selection_is_refused() -> None:
    for policy in ("strict", "elond"):
        with pytest.raises(ConfigError) as caught:
            rules_of(f'\n[gate]\npolicy = "{policy}"\n[evolve]\nadopt = "end"\n')
        assert "\n" not in str(caught.value)
        said = str(caught.value)
        assert said.startswith('harnessgit.toml: evolve.adopt: "end" needs [gate] policy "bayes"')


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('\n[gate]\npolicy = "strict"\n[evolve]\nadopt = "end"\n', 'evolve.adopt: "end" needs [gate] policy'),
        ('\n[evolve]\nadopt = "later"\n', "evolve.adopt"),
    ],
)
def test_a_bad_adopt_setting_is_one_line_exit_3_and_nothing_written(
    make_repo: Callable[..., Path], toml: str, message: str
) -> None:
    repo = make_repo(
        {"eval.py": EVALUATOR, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(30)}, config=CONFIG + toml
    )
    before = snapshot(repo)
    result = CliRunner().invoke(cli, ["-C", str(repo), "evolve", "--max-proposals", "1"], obj=State())
    assert result.exit_code == 3, result.output
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert snapshot(repo) == before


# Each call fixes the parent's failing minibatch instances (so it wins its minibatch)
# and two more selection instances than its parent fixed: a lineage of small edits,
# +5 points each on 40 selection instances.
LINEAGE = """
import json, re, sys
request = json.load(sys.stdin)
text = request["current_text"]
failing = [e["instance"] for e in request["examples"] if (e.get("score") or 0) < 1]
done = len(re.findall(r"fix s-", text))
more = [f"fix s-{30 + done + i}" for i in range(2) if 30 + done + i < 40]
print(json.dumps({"text": text + "".join(f"{line}\\n" for line in more + [f"fix {i}" for i in failing]),
                  "rationale": "two more"}))
"""


@pytest.mark.slow  # an evolve run of eight proposals with command evaluator and proposer
def test_evolve_by_default_merges_the_best_lineage_once_at_the_end(make_repo: Callable[..., Path]) -> None:
    """No look is gated as it comes; when the budget ends the run, the frontier's best
    member (the lineage tip, several edits together) is merged through one gate under
    bayes at evolve's q, whose record `verify` recomputes from the gains it lists."""
    splits = {**SPLITS, "train": [f"t-{100 + i}" for i in range(30)]}
    proposer = f'\n[proposer]\ncommand = ["{sys.executable}", "proposer.py"]\n'
    config = CONFIG.replace('"prompts/*.md", ', "") + "batch_size = 50\n" + proposer
    files = {"eval.py": EVALUATOR, "splits.json": json.dumps(splits), "SKILL.md": skill(30)}
    repo = make_repo({**files, "proposer.py": LINEAGE}, config=config)
    with Store.discover(repo) as store:
        request = EvolveRequest(budget=Budget(max_proposals=8), seed=0, auto_merge=True)
        report = evolve(store, parse_config((repo / "harnessgit.toml").read_bytes()), request)
        *looks, last = report.iterations
        assert last.move == "adopt" and last.outcome == "merged", last.reason
        assert last.reason.startswith("end of the run: ")
        assert "evolve's default ([gate] policy not set)" in last.reason
        assert report.merged == [last.candidate]
        assert all(r.outcome != "merged" for r in looks)
        gated_later = [r for r in looks if r.outcome == "not-gated" and r.reason.endswith(DEFERRED)]
        assert gated_later, [r.reason for r in looks]
        (record,) = [
            r
            for records in store.notes.records(layout.NOTES_GATE).values()
            for r in records
            if isinstance(r, GateRecord) and r.merge is None
        ]
        assert (record.policy, record.q, record.verdict) == ("bayes", EVOLVE_Q, "pass")
        screened = [r for r in looks if r.selection_mean is not None]
        assert record.prior_gains is not None and len(record.prior_gains) == len(screened)
        checked = verify(store, parse_config((repo / "harnessgit.toml").read_bytes()))
        assert checked.ok and checked.gated == 1, checked.findings


def test_a_budget_too_small_to_score_the_base_gates_nothing_at_the_end(
    make_repo: Callable[..., Path],
) -> None:
    """The end gate reads no rollout: when the budget could not even score the base on
    the selection split, the run ends as before, with nothing gated and no record."""
    proposer = f'\n[proposer]\ncommand = ["{sys.executable}", "proposer.py"]\n'
    files = {"eval.py": EVALUATOR, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(30)}
    repo = make_repo({**files, "proposer.py": LINEAGE}, config=CONFIG + proposer)
    with Store.discover(repo) as store:
        request = EvolveRequest(budget=Budget(max_rollouts=5), seed=0, auto_merge=True)
        report = evolve(store, parse_config((repo / "harnessgit.toml").read_bytes()), request)
        assert report.iterations == [] and report.merged == []
        assert report.stopped.startswith("max rollouts (5)")


@pytest.mark.slow  # an evolve run of six proposals with command evaluator and proposer
def test_a_best_the_posterior_does_not_pass_is_on_record_as_not_gated(make_repo: Callable[..., Path]) -> None:
    """Each proposal fixes its minibatch and the same one selection instance: the best is
    +2.5 points on 40 instances, too little for the chance q = 0.05 asks, so the run ends
    with a record of the end decision and no gate attempt: `not-gated`, with the chance."""
    same = 'f"fix s-{30 + done + i}" for i in range(2) if 30 + done + i < 40'
    breaking = LINEAGE.replace(same, '"fix s-35"')
    splits = {**SPLITS, "train": [f"t-{100 + i}" for i in range(30)]}
    proposer = f'\n[proposer]\ncommand = ["{sys.executable}", "proposer.py"]\n'
    config = CONFIG.replace('"prompts/*.md", ', "") + "batch_size = 50\n" + proposer + "\n[gate]\nq = 0.05\n"
    files = {"eval.py": EVALUATOR, "splits.json": json.dumps(splits), "SKILL.md": skill(30)}
    repo = make_repo({**files, "proposer.py": breaking}, config=config)
    with Store.discover(repo) as store:
        request = EvolveRequest(budget=Budget(max_proposals=6), seed=0, auto_merge=True)
        report = evolve(store, parse_config((repo / "harnessgit.toml").read_bytes()), request)
        last = report.iterations[-1]
        assert last.move == "adopt" and last.outcome == "not-gated", last.reason
        assert "the chance that the edit gains more than min_effect" in last.reason
        assert report.merged == [] and not store.notes.records(layout.NOTES_GATE)


def test_the_best_of_equal_means_is_the_first_proposed_not_the_smallest_id() -> None:
    """Candidate ids are random: breaking a tie between equal selection means by id made
    one seed adopt different candidates from run to run (seen on tests/bench/bench_vs_gepa.py:
    8 of 160 runs, one of them -11.45 points against -2.15). The first proposed wins, as
    GEPA's best is the first program with the best mean."""
    created = ["f0", "c9", "a1", "e5"]  # creation order; ids sort otherwise
    members = {"main": Member("main", "0" * 40, None, "base")}
    members |= {cid: Member(cid, str(i + 1) * 40, "main") for i, cid in enumerate(created)}
    rows = [
        FrontierRow(candidate=cid, parent="main", mean=mean, instances_led=1, weight=1)
        for cid, mean in [("a1", 0.6), ("e5", 0.6), ("c9", 0.6), ("f0", 0.5), ("main", 0.7)]
    ]
    frontier = Frontier(rows=rows, fronts=[], dominated=[], never_best=[])
    view = FrontierView("main", frontier, [], [], members=members)
    assert best_on_frontier(view) == (0.6, "c9")
    only_base = FrontierView(
        "main", Frontier(rows=rows[-1:], fronts=[], dominated=[], never_best=[]), [], [], members=members
    )
    assert best_on_frontier(only_base) is None
