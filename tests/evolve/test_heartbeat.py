"""A slow proposer (a CPU model takes minutes per reply) shows evolve is still waiting."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessgit.config import load_config
from harnessgit.evaluation.eval import Execution
from harnessgit.evolve import heartbeat
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.state import Budget, EvolveRequest
from harnessgit.store import Store
from tests.conftest import git


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def lines() -> Iterator[Lines]:
    handler = Lines()
    logger = logging.getLogger("harnessgit.evolve")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_heartbeat_says_how_long_it_has_waited_until_the_block_ends(lines: Lines) -> None:
    with heartbeat.heartbeat("the slow thing", every=0.05):
        time.sleep(0.3)
    count = len(lines.lines)
    assert count >= 2 and all(line.startswith("still waiting for the slow thing (") for line in lines.lines)
    time.sleep(0.2)
    assert len(lines.lines) == count  # nothing after the block


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_evolve_says_it_is_waiting_for_a_slow_proposer(
    triage: Path, lines: Lines, monkeypatch: pytest.MonkeyPatch
) -> None:
    (triage / "slow_propose.py").write_text(
        "import runpy, sys, time\ntime.sleep(1.0)\nsys.argv = ['propose.py']\n"
        "runpy.run_path('propose.py', run_name='__main__')\n"
    )
    config = (triage / "harnessgit.toml").read_text()
    (triage / "harnessgit.toml").write_text(config.replace('"propose.py"]', '"slow_propose.py"]'))
    git(triage, "add", "-A")
    git(triage, "commit", "-qm", "A proposer that takes a second")
    monkeypatch.setattr(heartbeat, "EVERY", 0.2)
    with Store.discover(triage) as store:
        report = evolve(
            store,
            load_config(triage),
            EvolveRequest(budget=Budget(max_proposals=1)),
            execution=Execution(jobs=2),
        )
    assert report.spend.proposals == 1
    waiting = [
        line for line in lines.lines if line.startswith("still waiting for the proposer's edit to SKILL.md")
    ]
    assert waiting, lines.lines
