"""An evolve iteration is one ref transaction (issue 13): its proposal, scores,
frontier moves and record land together, so a kill leaves all of it or none."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.config import load_config
from harnessgit.evolve import iteration
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.state import Budget, EvolveRequest
from harnessgit.records import IterationRecord, ProposalRecord
from harnessgit.store import Store
from harnessgit.targets import candidate_tips
from tests.conftest import git
from tests.evolve.evolve_fixtures import records
from tests.evolve.test_iteration import climbing_repo
from tests.gating_fixtures import EVALUATOR

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_an_iteration_that_is_not_gated_is_one_transaction(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: its proposal, each evaluation, the frontier update and the record were
    a notes commit each."""
    monkeypatch.setattr(iteration, "STAGE_FOR", 3600.0)  # however slow this machine is
    repo = climbing_repo(make_repo)
    with Store.discover(repo) as store:
        report = evolve(store, load_config(repo), EvolveRequest(budget=Budget(max_proposals=4), seed=0))
    quiet = [r for r in report.iterations if not r.outcome.startswith("gate-")]
    assert quiet
    for ref in (layout.NOTES_EVIDENCE, layout.NOTES_EVALS):
        subjects = git(repo, "log", "--format=%s", ref).splitlines()
        for record in quiet:
            mine = [s for s in subjects if s.startswith(f"harnessgit: evolve iteration {record.iteration}:")]
            assert len(mine) <= 1
        proposed = [s for s in subjects if s.startswith("harnessgit: propose ")]
        assert not any(record.candidate and record.candidate in s for s in proposed for record in quiet)


# Kills harnessgit (its parent) when it first evaluates a third harness: the base, the
# first candidate, then the second candidate, on its minibatch.
KILLING = EVALUATOR.replace(
    "for line in sys.stdin:",
    "import os, signal\n"
    "commit = os.environ['HARNESSGIT_COMMIT']\n"
    "with open(SEEN, 'a') as handle:\n"  # one short append: batches running beside it agree
    "    handle.write(commit + '\\n')\n"
    "seen = list(dict.fromkeys(open(SEEN).read().split()))\n"
    "if seen.index(commit) == 2:\n"
    "    os.kill(os.getppid(), signal.SIGKILL)\n"
    "    raise SystemExit(1)\n"
    "for line in sys.stdin:",
)

# The iteration's writes wait for its record however slow this machine is.
RUN = (
    "import harnessgit.evolve.iteration as iteration\n"
    "iteration.STAGE_FOR = 3600.0\n"
    "from harnessgit.cli import main\n"
    "raise SystemExit(main(['evolve', '--max-proposals', '5']))\n"
)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_kill_mid_iteration_leaves_none_of_it(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    """SIGKILL while the second candidate is evaluated on its minibatch. Before: that
    candidate's branch and proposal were on record with no iteration record (an
    orphan, live on the frontier's pool). Now: nothing of the killed iteration."""
    repo = climbing_repo(make_repo, KILLING.replace("SEEN", repr(str(tmp_path / "seen"))))
    git(repo, "config", "core.logAllRefUpdates", "true")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", RUN], cwd=repo, env=env, capture_output=True, check=False)
    assert done.returncode == -9, done.stderr
    killed = list(dict.fromkeys((tmp_path / "seen").read_text().split()))[2]
    with Store.discover(repo) as store:
        on_record = {r.commit for r in records(store) if r.commit}
        tips = candidate_tips(store.refs)
        assert tips and all(sha in on_record for _state, sha in tips.values())
        assert killed not in {sha for _state, sha in tips.values()}
        assert store.notes.records_on(layout.NOTES_EVIDENCE, killed) == []
        assert store.notes.records_on(layout.NOTES_EVALS, killed) == []
        proposals = [r for rs in store.notes.records(layout.NOTES_EVIDENCE).values() for r in rs]
        assert all(
            r.candidate in tips for r in proposals if isinstance(r, ProposalRecord)
        )  # every proposal on record is a candidate with its iteration record
        assert [r.iteration for r in records(store) if isinstance(r, IterationRecord)] == [0]
    assert git(repo, "fsck", "--no-dangling") == ""
