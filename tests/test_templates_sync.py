"""templates/sync/harnessgit-sync.sh: two machines write records, both end with all of them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.records import EvalRecord, EvidenceRecord
from harnessgit.store import Store
from tests.conftest import git
from tests.gating_fixtures import skill

SYNC = Path(__file__).parent.parent / "templates" / "sync" / "harnessgit-sync.sh"


def sync(repo: Path, machine: str) -> None:
    result = subprocess.run(
        ["bash", str(SYNC)],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HARNESSGIT_MACHINE": machine},
    )
    assert result.returncode == 0, result.stderr


def work(repo: Path, level: int, rationale: str) -> str:
    """A candidate with evidence, evaluated on this machine; returns its commit."""
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(
            store,
            config,
            {"SKILL.md": skill(level)},
            rationale=rationale,
            evidence=[{"kind": "critique", "text": rationale}],
        )
        evaluate(store, config, cand.candidate)
        evaluate(store, config, "main", split="train")
    return cand.commit


def records(repo: Path) -> tuple[set[str], set[str]]:
    with Store.discover(repo) as store:
        evals = {r.id for r in ScoreBook.load(store).records.values() if isinstance(r, EvalRecord)}
        blobs = {
            r.blob
            for rs in store.notes(layout.NOTES_EVIDENCE).values()
            for r in rs
            if isinstance(r, EvidenceRecord)
        }
    return evals, blobs


def test_two_machines_share_every_record(review_repo: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(review_repo, "remote", "add", "origin", str(remote))
    git(review_repo, "push", "-q", "origin", "main")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    # Both write to the same notes refs before either syncs: their notes histories diverge.
    mine, theirs = work(review_repo, 20, "mine"), work(other, 30, "theirs")
    sync(review_repo, "laptop")
    sync(other, "ci-runner")  # a non-fast-forward for every notes ref: merged, not lost
    sync(review_repo, "laptop")
    assert records(review_repo) == records(other)
    evals, blobs = records(review_repo)
    assert len(blobs) == 2 and len(evals) >= 4
    for commit in (mine, theirs):
        assert git(other, "rev-parse", f"refs/harnessgit/pins/{commit}").strip() == commit
    # On the remote, after gc, every evidence blob is still there: each machine's
    # evidence store is pushed under its own name and keeps its blobs reachable.
    git(remote, "gc", "-q", "--prune=now")
    assert set(
        git(remote, "for-each-ref", "--format=%(refname)", "refs/harnessgit/evidence-stores").split()
    ) == {
        "refs/harnessgit/evidence-stores/laptop",
        "refs/harnessgit/evidence-stores/ci-runner",
    }
    for blob in blobs:
        git(remote, "cat-file", "-e", blob)
