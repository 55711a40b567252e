"""Shared by the evolve tests: the demo's triage repository, and its iteration records."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.demo import prepare
from harnessgit.evolve.state import EvolveReport
from harnessgit.records import IterationRecord
from harnessgit.store import Store
from tests.conftest import CONFIG
from tests.gating_fixtures import SPLITS, skill


@pytest.fixture
def triage(tmp_path: Path) -> Path:
    """The demo's harness repository: a simulated agent and proposer, no LLM."""
    repo = tmp_path / "triage"
    prepare(repo, lambda _line: None)
    return repo


def records(store: Store) -> list[IterationRecord]:
    """Every evolve-iteration record on record, by iteration number."""
    found = [
        r
        for rs in store.notes.records(layout.NOTES_EVIDENCE).values()
        for r in rs
        if isinstance(r, IterationRecord)
    ]
    return sorted(found, key=lambda r: r.iteration)


def assert_on_record(store: Store, report: EvolveReport) -> None:
    """The run's summary is the sum of its records."""
    mine = [r for r in records(store) if r.run == report.run]
    assert [r.id for r in mine] == [r.id for r in report.iterations]
    assert sum(r.rollouts for r in mine) == report.spend.rollouts
    assert sum(r.proposer_calls for r in mine) == report.spend.proposals
    cost = sum((r.cost_usd or 0.0) + (r.evaluator_cost_usd or 0.0) for r in mine)
    assert cost == pytest.approx(report.spend.cost_usd)


# Scores follow the text of both harness files: s-N passes when N < LEVEL (in
# SKILL.md) or when either file says "fix s-N".
TWO_FILES = """\
import json, re, sys
from pathlib import Path
text = Path("SKILL.md").read_text() + Path("prompts/system.md").read_text()
level = int(re.search(r"LEVEL: (\\d+)", text).group(1))
fixed = set(re.findall(r"fix (\\S+)", text))
for line in sys.stdin:
    instance = line.strip()
    good = int(instance.split("-")[1]) < level or instance in fixed
    print(json.dumps({"instance": instance, "score": 1.0 if good else 0.0, "feedback": "ok"}))
"""

PROMPT = "You are a careful assistant.\n"


def two_file_repo(make_repo: Callable[..., Path], proposer: str) -> Path:
    """SKILL.md and prompts/system.md, both scored (`TWO_FILES`), with ``proposer``."""
    splits = {**SPLITS, "train": [f"t-{100 + i}" for i in range(9)]}
    config = CONFIG + "batch_size = 40\n" + f'\n[proposer]\ncommand = ["{sys.executable}", "proposer.py"]\n'
    return make_repo(
        {
            "eval.py": TWO_FILES,
            "splits.json": json.dumps(splits),
            "SKILL.md": skill(0),
            "prompts/system.md": PROMPT,
            "proposer.py": proposer,
        },
        config=config,
    )
