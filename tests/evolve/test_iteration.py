from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import Config, load_config
from harnessgit.evaluation.eval import with_batches
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.iteration import check_failure
from harnessgit.evolve.record import Draw
from harnessgit.evolve.state import Budget, EvolveRequest
from harnessgit.gate.gate import GateRequest, run_gate
from harnessgit.proposers import ProposedEdit
from harnessgit.records import RetireRecord
from harnessgit.store import Store
from harnessgit.targets import candidate_tips, proposal_chain
from tests.conftest import CONFIG, git, write
from tests.evolve.evolve_fixtures import assert_on_record, records, two_file_repo
from tests.gating_fixtures import EVALUATOR, SPLITS, skill

BATCHES = with_batches()  # the runner the gate takes from its caller

REJECTING = """
import json, sys
request = json.load(sys.stdin)
print(json.dumps({"text": request["current_text"] + "\\n```python\\nunfinished", "rationale": "cut short"}))
"""

GROWING = """
import json, sys
request = json.load(sys.stdin)
print(json.dumps({"text": request["current_text"] * 3, "rationale": "say it three times"}))
"""


def use_proposer(repo: Path, script: str) -> None:
    write(repo, "proposer.py", script)
    config_text = (
        (repo / "harnessgit.toml")
        .read_text()
        .replace('command = ["python3", "propose.py"]', f'command = ["{sys.executable}", "proposer.py"]')
    )
    write(repo, "harnessgit.toml", config_text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "use another proposer")


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_bad_proposal_is_recorded_not_adopted(triage: Path) -> None:
    use_proposer(triage, REJECTING)
    before = set(candidate_tips(Store.discover(triage).refs))
    with Store.discover(triage) as store:
        report = evolve(store, load_config(triage), EvolveRequest(budget=Budget(max_proposals=2), seed=5))
        (first, *_) = records(store)
        assert first.outcome == "rejected-proposal" and "unclosed_fence" in first.reason
        assert first.candidate is None and first.proposer.endswith("proposer.py")
        evidence = [
            r for r in store.notes.records_on(layout.NOTES_EVIDENCE, first.parent) if r.kind == "evidence"
        ]
        assert any(getattr(r, "label", "") == "rejected-proposal" for r in evidence)
        assert set(candidate_tips(store.refs)) == before  # nothing was adopted
    assert report.spend.proposals == 2


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_an_edit_that_fails_the_checks_is_archived_with_the_reason(triage: Path) -> None:
    use_proposer(triage, GROWING)
    with Store.discover(triage) as store:
        evolve(store, load_config(triage), EvolveRequest(budget=Budget(max_proposals=1), seed=5))
        (last, *_) = reversed(records(store))
        assert last.outcome == "rejected-checks" and last.reason.startswith("growth: grew 3.00x")
        assert last.candidate and candidate_tips(store.refs)[last.candidate][0] == "archived"
        (retired,) = [
            r
            for r in store.notes.records_on(layout.NOTES_EVIDENCE, last.commit or "")
            if isinstance(r, RetireRecord)
        ]
        assert (retired.reason, retired.detail) == ("rejected", "checks: " + last.reason)
        assert last.candidate_score is None  # never evaluated


def draw(current: str) -> Draw:
    return Draw(
        number=0,
        tip="t" * 40,
        parent="p" * 40,
        parent_name="main",
        component="SKILL.md",
        batch=["a"],
        current=current,
        examples=[],
        parent_score=0.0,
    )


def test_the_checks_judge_the_edited_component() -> None:
    skill = "---\nname: s\ndescription: d\n---\n# Skill\n" + "".join(
        f"- rule {i}: route tickets that say so\n" for i in range(30)
    )
    grown = ProposedEdit(component="SKILL.md", new_text=skill * 3)
    assert check_failure(Config(), draw(skill), grown).startswith("growth: grew 3.00x")
    fine = ProposedEdit(component="SKILL.md", new_text=skill + "- one more rule\n")
    assert check_failure(Config(), draw(skill), fine) == ""


CLIMBING = """
import json, re, sys
request = json.load(sys.stdin)
text = request["current_text"]
level = int(re.search(r"LEVEL: (\\d+)", text).group(1))
failing = [e["instance"] for e in request["examples"] if (e.get("score") or 0) < 1]
text = text.replace(f"LEVEL: {level}", f"LEVEL: {level + 8}") + "".join(f"fix {i}\\n" for i in failing)
print(json.dumps({"text": text, "rationale": f"Raise the level to {level + 8}"}))
"""


def climbing_repo(
    make_repo: Callable[..., Path], evaluator: str = EVALUATOR, proposer_script: str | None = None
) -> Path:
    """The gate tests' harness at LEVEL 0 with a proposer whose every edit fixes its
    minibatch and 8 more selection instances: every descendant beats its parent
    (``evaluator`` and ``proposer_script`` replace the gate tests' and that proposer)."""
    splits = {**SPLITS, "train": [f"t-{100 + i}" for i in range(9)]}  # no LEVEL reaches them
    proposer = f'\n[proposer]\ncommand = ["{sys.executable}", "proposer.py"]\n'
    config = CONFIG.replace('"prompts/*.md", ', "") + "batch_size = 20\njobs = 2\n" + proposer
    config += '\n[gate]\npolicy = "strict"\n'  # each look as it comes (evolve's own default gates at the end)
    return make_repo(
        {
            "eval.py": evaluator,
            "splits.json": json.dumps(splits),
            "SKILL.md": skill(0),
            "proposer.py": proposer_script or CLIMBING,
        },
        config=config,
    )


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_one_chain_is_gated_once_without_auto_merge(make_repo: Callable[..., Path]) -> None:
    """Issue 12, finding 6: without --auto-merge nothing merges, so a candidate that
    builds on one that passed the gate against this base is not gated (only one of the two
    could merge); it stays on the frontier with the reason on its record."""
    repo = climbing_repo(make_repo)
    with Store.discover(repo) as store:
        report = evolve(store, load_config(repo), EvolveRequest(budget=Budget(max_proposals=6), seed=0))
        passed = {r.commit: r.candidate for r in report.iterations if r.outcome == "gate-passed"}
        gated = [r for r in report.iterations if r.outcome.startswith("gate-")]
        assert passed and report.merged == []
        for record in gated:
            chain = [origin.commit for origin in proposal_chain(store, record.commit or "", "main")]
            assert not set(chain[:-1]) & set(passed), f"{record.candidate} builds on a passed candidate"
        blocked = [r for r in report.iterations if "which passed the gate against this base" in r.reason]
        assert blocked and all(r.outcome == "not-gated" for r in blocked)
        (first,) = [r for r in gated if r.outcome == "gate-passed"]  # one chain: one attempt
        assert blocked[0].reason.startswith(f"it builds on {first.candidate}, which passed the gate")


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_chain_gated_by_hand_is_not_gated_again_by_evolve(make_repo: Callable[..., Path]) -> None:
    """The passes on the record count too (a resumed run, a `harnessgit gate` by hand),
    not only the ones this run made."""
    repo = climbing_repo(make_repo)
    with Store.discover(repo) as store:
        config = load_config(repo)
        mine = propose(store, config, {"SKILL.md": skill(12)}, rationale="by hand: raise the level")
        assert run_gate(
            store, config, GateRequest(mine.candidate), execution=BATCHES, check=check_change
        ).passed
        report = evolve(store, config, EvolveRequest(budget=Budget(max_proposals=3), seed=0))
        for record in (r for r in report.iterations if r.outcome.startswith("gate-")):
            chain = [origin.commit for origin in proposal_chain(store, record.commit or "", "main")]
            assert mine.commit not in chain[:-1], f"{record.candidate} builds on {mine.candidate}"
        blocked = [r for r in report.iterations if r.reason.startswith(f"it builds on {mine.candidate}")]
        assert blocked and all(r.outcome == "not-gated" for r in blocked)


# Appends a rule naming each failing example to whatever component it is asked about.
APPENDING = """
import json, sys
request = json.load(sys.stdin)
failing = [e["instance"] for e in request["examples"] if (e.get("score") or 0) < 1]
text = request["current_text"] + "".join(f"fix {i} ({request['component']})\\n" for i in failing)
usage = {"cost_usd": 0.02}
print(json.dumps({"text": text, "rationale": f"Rules in {request['component']}", "usage": usage}))
"""


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_one_proposal_can_edit_several_components(make_repo: Callable[..., Path]) -> None:
    """[evolve] components = 2: one proposer call per component, one candidate holding
    both edits, and the record counting both calls and their cost."""
    repo = two_file_repo(make_repo, APPENDING)
    config_path = repo / "harnessgit.toml"
    config_path.write_text(config_path.read_text() + "\n[evolve]\ncomponents = 2\n")
    with Store.discover(repo) as store:
        report = evolve(store, load_config(repo), EvolveRequest(budget=Budget(max_proposals=2), seed=0))
        (first,) = report.iterations
        assert first.component == "SKILL.md, prompts/system.md" and first.proposals == 2
        assert first.cost_usd == 0.04 and report.spend.proposals == 2
        changed = store.history.changed_paths(
            store.objects.commit_info(first.parent).tree, store.objects.commit_info(first.commit or "").tree
        )
        assert sorted(changed) == ["SKILL.md", "prompts/system.md"]
        assert_on_record(store, report)
