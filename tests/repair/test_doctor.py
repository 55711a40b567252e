"""`diagnose`: what a killed harnessgit or git left behind, found without changing
anything, and repaired with ``fix`` only where that takes no guess."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from harnessgit.render import short
from harnessgit.repair.doctor import CHECKS, Check, Finding, diagnose, shown
from harnessgit.store import Store
from tests.conftest import git, snapshot
from tests.store.kill_fixtures import candidate_repo, kill_at, left_lock, state

pytestmark = pytest.mark.usefixtures("own_temp_dir")


def doctor(repo: Path, *, fix: bool = False, checks: tuple[Check, ...] | None = None) -> list[Finding]:
    with Store.discover(repo, preflight=False) as store:
        report = diagnose(store, fix=fix, checks=checks)
    assert report.healthy == all(finding.fixed for finding in report.findings)
    return list(report.findings)


def test_a_healthy_repository_has_no_findings(repo: Path) -> None:
    with Store.discover(repo, preflight=False) as store:
        report = diagnose(store)
    assert report.findings == () and report.healthy
    assert report.checks == ("transactions", "locks", "checkout", "programs", "scratch", "index")


def test_a_stale_lock_is_found_with_its_age_and_removed_by_fix(repo: Path) -> None:
    left = left_lock(repo, "refs/heads/main.lock", 300)
    # A writer milliseconds in: not a finding. Dated 30 s ahead, so that a loaded machine
    # taking over a second to reach the check does not age it past the 1 s threshold.
    live = left_lock(repo, "refs/heads/other.lock", -30)
    before = snapshot(repo)
    (finding,) = doctor(repo)
    assert finding.check == "locks" and finding.subject == ".git/refs/heads/main.lock"
    assert "5 min old" in finding.problem and finding.fixable and not finding.fixed
    assert left.exists() and snapshot(repo) == before  # looking changes nothing
    (fixed,) = doctor(repo, fix=True)
    assert fixed.fixed and fixed.outcome == "removed .git/refs/heads/main.lock"
    assert not left.exists() and live.exists()
    assert doctor(repo) == []


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_an_interrupted_transaction_is_explained_then_rolled_forward(repo: Path, tmp_path: Path) -> None:
    candidate_repo(repo)
    first = git(repo, "rev-parse", "main").strip()
    assert kill_at(repo, "after-prepare", tmp_path) == -signal.SIGKILL
    merge = (repo / ".git/refs/heads/main.lock").read_text().strip()  # the value git was to write
    killed = state(repo)
    (finding,) = doctor(repo)  # its 11 locks belong to it: listed there, not apart
    assert finding.check == "transactions" and finding.fixable
    assert "'merge c1 into main'" in finding.problem and "0 of 8 ref updates had landed" in finding.problem
    main = f"refs/heads/main: {short(first)} -> {short(merge)}, now {short(first)}: pending"
    assert main in finding.details
    assert sum(line.startswith("lock ") for line in finding.details) == 11
    assert finding.fix.startswith("roll it forward: apply the 8 pending updates")
    assert state(repo) == killed
    (fixed,) = doctor(repo, fix=True)
    assert fixed.fixed and fixed.outcome == "applied 8 pending updates, removed its journal"
    after = state(repo)
    assert after.merged and after.locks == [] and after.journals == []


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_transaction_it_cannot_finish_is_left_for_a_person(repo: Path, tmp_path: Path) -> None:
    candidate_repo(repo)
    first = git(repo, "rev-parse", "main").strip()
    assert kill_at(repo, "after-prepare", tmp_path) == -signal.SIGKILL
    dot_git = repo / ".git"
    os.replace(dot_git / "refs/heads/main.lock", dot_git / "refs/heads/main")  # main landed
    (dot_git / "refs/harnessgit/archive/c1.lock").unlink()
    git(repo, "update-ref", "refs/harnessgit/archive/c1", first)  # and this went elsewhere
    for fix in (False, True):
        (finding,) = [f for f in doctor(repo, fix=fix) if f.check == "transactions"]
        assert not finding.fixable and not finding.fixed
        assert "refs/harnessgit/archive/c1 is at" in finding.problem
        assert finding.fix.startswith("none without guessing: check the refs above, then delete .git/")
        assert any(line.startswith("refs/heads/main: ") for line in finding.details)
        assert [line.rsplit(": ", 1)[1] for line in finding.details if not line.startswith("lock ")] == [
            "done",  # main
            "pending",  # the candidate branch, still to delete
            "moved",  # the archive ref
            *["pending"] * 5,  # two notes refs, the evidence store, two pins
        ]
        assert len(state(repo).journals) == 1


def test_a_check_added_to_the_list_runs_and_fixes_like_the_others(repo: Path) -> None:
    leftover = repo / ".git" / "harnessgit-tmp-123"
    leftover.mkdir()

    def find(store: Store) -> list[Finding]:
        paths = sorted(store.git_dir.glob("harnessgit-tmp-*"))
        return [Finding("temp", shown(store, path), "left over", "remove it", True) for path in paths]

    def fix(store: Store, finding: Finding) -> str:
        (store.root / finding.subject).rmdir()
        return "removed"

    checks = (*CHECKS, Check("temp", "temporary directories left over", find, fix))
    (found,) = doctor(repo, checks=checks)
    assert found.check == "temp" and not found.fixed
    (fixed,) = doctor(repo, fix=True, checks=checks)
    assert fixed.fixed and fixed.outcome == "removed" and not leftover.exists()
