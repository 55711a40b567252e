from __future__ import annotations

import sys
from pathlib import Path

from harnessgit import layout
from harnessgit.config import Config, load_config
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.iteration import Draw, check_failure
from harnessgit.evolve.state import Budget
from harnessgit.proposers import ProposedEdit
from harnessgit.records import RetireRecord
from harnessgit.store import Store
from harnessgit.targets import candidate_tips
from tests.conftest import git, write
from tests.evolve.evolve_fixtures import records

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


def test_a_bad_proposal_is_recorded_not_adopted(triage: Path) -> None:
    use_proposer(triage, REJECTING)
    before = set(candidate_tips(Store.discover(triage)))
    with Store.discover(triage) as store:
        report = evolve(store, load_config(triage), budget=Budget(max_proposals=2), seed=5)
        (first, *_) = records(store)
        assert first.outcome == "rejected-proposal" and "unclosed_fence" in first.reason
        assert first.candidate is None and first.proposer.endswith("proposer.py")
        evidence = [r for r in store.notes_on(layout.NOTES_EVIDENCE, first.parent) if r.kind == "evidence"]
        assert any(getattr(r, "label", "") == "rejected-proposal" for r in evidence)
        assert set(candidate_tips(store)) == before  # nothing was adopted
    assert report.spend.proposals == 2


def test_an_edit_that_fails_the_checks_is_archived_with_the_reason(triage: Path) -> None:
    use_proposer(triage, GROWING)
    with Store.discover(triage) as store:
        evolve(store, load_config(triage), budget=Budget(max_proposals=1), seed=5)
        (last, *_) = reversed(records(store))
        assert last.outcome == "rejected-checks" and last.reason.startswith("growth: grew 3.00x")
        assert last.candidate and candidate_tips(store)[last.candidate][0] == "archived"
        (retired,) = [
            r for r in store.notes_on(layout.NOTES_EVIDENCE, last.commit or "") if isinstance(r, RetireRecord)
        ]
        assert (retired.reason, retired.detail) == ("rejected", "checks: " + last.reason)
        assert last.candidate_score is None  # never evaluated


def draw(current: str) -> Draw:
    return Draw(0, "t" * 40, "p" * 40, "main", "SKILL.md", ["a"], current, [], 0.0)


def test_the_checks_judge_the_edited_component() -> None:
    skill = "---\nname: s\ndescription: d\n---\n# Skill\n" + "".join(
        f"- rule {i}: route tickets that say so\n" for i in range(30)
    )
    grown = ProposedEdit(component="SKILL.md", new_text=skill * 3)
    assert check_failure(Config(), draw(skill), grown).startswith("growth: grew 3.00x")
    fine = ProposedEdit(component="SKILL.md", new_text=skill + "- one more rule\n")
    assert check_failure(Config(), draw(skill), fine) == ""
