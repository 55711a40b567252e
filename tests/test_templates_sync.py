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
from harnessgit.records import EvalRecord, EvidenceRecord, RetireRecord
from harnessgit.store import Store, Transaction
from harnessgit.targets import retire
from tests.conftest import git
from tests.gating_fixtures import skill

SYNC = Path(__file__).parent.parent / "templates" / "sync" / "harnessgit-sync.sh"


def sync(repo: Path, machine: str) -> str:
    result = subprocess.run(
        ["bash", str(SYNC)],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HARNESSGIT_MACHINE": machine},
    )
    assert result.returncode == 0, result.stderr
    return result.stderr


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


def two_clones(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """``repo`` with a bare remote, and a second clone of it: two machines."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    return remote, other


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
    remote, other = two_clones(review_repo, tmp_path)
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


def candidates(repo: Path) -> tuple[set[str], set[str]]:
    """The live and the archived candidate ids of a clone (or of the bare remote)."""
    live = git(repo, "for-each-ref", "--format=%(refname:lstrip=4)", layout.CANDIDATES).split()
    archived = git(repo, "for-each-ref", "--format=%(refname:lstrip=3)", layout.ARCHIVE).split()
    return set(live), set(archived)


def retire_here(repo: Path, candidate: str, reason: str) -> None:
    with Store.discover(repo) as store:
        sha = store.resolve_commit(layout.candidate_ref(candidate))
        txn = Transaction(f"retire {candidate}")
        retire(store, txn, candidate, sha, reason)
        store.commit(txn)


def test_a_candidate_retired_on_one_machine_is_retired_everywhere(review_repo: Path, tmp_path: Path) -> None:
    # Issue 15, defect 14: the fetch brought a retired candidate's branch back from the
    # remote, and the push left it there: after a sync, retired candidates were both
    # live and archived in every clone.
    remote, other = two_clones(review_repo, tmp_path)
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        made = [propose(store, config, {"SKILL.md": skill(level)}).candidate for level in (20, 30, 40)]
    sync(review_repo, "laptop")
    sync(other, "ci-runner")
    assert candidates(other) == (set(made), set())
    retire_here(review_repo, made[0], "rejected")  # each machine retires one, unsynced
    retire_here(other, made[1], "dominated")
    sync(review_repo, "laptop")
    sync(other, "ci-runner")
    sync(review_repo, "laptop")
    expected = ({made[2]}, {made[0], made[1]})
    assert candidates(review_repo) == candidates(other) == candidates(remote) == expected
    # Never lose a record: both retire records everywhere, the retired commits still
    # reachable (archived and pinned) on the remote after gc.
    git(remote, "gc", "-q", "--prune=now")
    for repo in (review_repo, other):
        with Store.discover(repo) as store:
            retired = {
                r.candidate
                for rs in store.notes(layout.NOTES_EVIDENCE).values()
                for r in rs
                if isinstance(r, RetireRecord)
            }
        assert retired == {made[0], made[1]}
    for candidate in made[:2]:
        sha = git(review_repo, "rev-parse", layout.archive_ref(candidate)).strip()
        assert git(remote, "rev-parse", layout.archive_ref(candidate)).strip() == sha
        git(remote, "cat-file", "-e", sha)


def test_a_live_candidate_archived_at_another_commit_is_left_alone(review_repo: Path, tmp_path: Path) -> None:
    # Candidate ids are random and never reused, so this does not happen; if it did, the
    # sync deletes nothing it cannot prove archived (the same commit) and says so.
    remote, _other = two_clones(review_repo, tmp_path)
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        first, second = (propose(store, config, {"SKILL.md": skill(level)}) for level in (20, 30))
    git(review_repo, "update-ref", layout.archive_ref(first.candidate), second.commit)
    result = sync(review_repo, "laptop")
    assert f"{first.candidate}" in result and "not deleted" in result
    live, archived = candidates(remote)
    assert first.candidate in live and first.candidate in archived


def test_a_retired_candidate_checked_out_keeps_its_branch_there(review_repo: Path, tmp_path: Path) -> None:
    # Deleting the branch HEAD is on would leave HEAD on a branch that does not exist.
    remote, other = two_clones(review_repo, tmp_path)
    with Store.discover(review_repo) as store:
        made = propose(store, load_config(review_repo), {"SKILL.md": skill(20)}).candidate
    sync(review_repo, "laptop")
    sync(other, "ci-runner")
    git(other, "checkout", "-q", f"harnessgit/cand/{made}")
    retire_here(review_repo, made, "rejected")
    sync(review_repo, "laptop")
    assert candidates(remote) == (set(), {made})
    assert "archived but checked out: its branch is kept here" in sync(other, "ci-runner")
    assert candidates(other) == ({made}, {made})
    assert candidates(remote) == (set(), {made})  # not pushed back either
    git(other, "checkout", "-q", "main")
    sync(other, "ci-runner")
    assert candidates(other) == (set(), {made})
