"""A kill anywhere in a ref transaction leaves all of it or none of it for the next command.

Real kills (SIGKILL to the whole process group, tests/store/kill_fixtures.py) inside a
real `git update-ref --stdin` applying a merge-shaped transaction; "the next command"
is the next `Store.discover`, which every harnessgit command does first. Before the
journal (issue 15), the same kills left the candidate both live and archived, or
nothing moved but 11 lock files that blocked every later write to those refs.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.errors import HarnessgitError
from harnessgit.store import Store
from tests.conftest import git
from tests.store.kill_fixtures import candidate_repo, kill_at, state

KILLED = -signal.SIGKILL


def next_command(repo: Path) -> None:
    Store.discover(repo).close()


@pytest.mark.parametrize(
    ("point", "left"),
    [
        ("before-update", "untouched"),  # the journal written, git not started
        ("after-prepare", "untouched"),  # git holds all 11 locks, nothing renamed yet
        ("after-commit", "merged"),  # git done, the store never saw its answer
        ("cut", "untouched"),  # git read 3 lines of the input and hit its end
    ],
)
@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_kill_in_a_transaction_leaves_all_of_it_to_the_next_command(
    repo: Path, tmp_path: Path, point: str, left: str
) -> None:
    candidate_repo(repo)
    assert kill_at(repo, point, tmp_path) == KILLED
    killed = state(repo)
    assert getattr(killed, left), killed
    if point == "after-prepare":
        assert len(killed.locks) == 11 and "packed-refs.lock" in killed.locks and "HEAD.lock" in killed.locks
    next_command(repo)
    after = state(repo)
    assert after.merged and after.locks == [] and after.journals == [], after


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_kill_midway_through_gits_renames_is_finished_by_the_next_command(
    repo: Path, tmp_path: Path
) -> None:
    candidate_repo(repo)
    assert kill_at(repo, "after-prepare", tmp_path) == KILLED
    # git commits a prepared transaction by renaming each <ref>.lock over its ref in
    # turn; these two renames are where a kill in that loop stops it (the state the
    # audit found: archived, and its gate note written, yet still a live candidate).
    dot_git = repo / ".git"
    for ref in ("refs/harnessgit/archive/c1", "refs/notes/harnessgit/gate"):
        os.replace(dot_git / f"{ref}.lock", dot_git / ref)
    halfway = state(repo)
    assert "refs/harnessgit/archive/c1" in halfway.refs and "refs/heads/harnessgit/cand/c1" in halfway.refs
    next_command(repo)
    after = state(repo)
    assert after.merged and after.locks == [] and after.journals == []


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_git_failing_midway_through_its_commit_is_finished_by_the_same_command(
    repo: Path, tmp_path: Path
) -> None:
    candidate_repo(repo)
    assert kill_at(repo, "commit-fails", tmp_path) == 0  # the store finished it and went on
    after = state(repo)
    assert after.merged and after.locks == [] and after.journals == []


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_notes_written_on_top_of_a_landed_update_count_as_landed(repo: Path, tmp_path: Path) -> None:
    candidate_repo(repo)
    first = git(repo, "rev-parse", "main").strip()
    assert kill_at(repo, "after-prepare", tmp_path) == KILLED
    dot_git = repo / ".git"
    os.replace(dot_git / "refs/notes/harnessgit/gate.lock", dot_git / "refs/notes/harnessgit/gate")
    # Another writer appends to the gate notes before any command recovers: the ref is
    # at neither the old nor the new value, but it descends from the new one.
    git(repo, "notes", "--ref=refs/notes/harnessgit/gate", "append", "-m", "another writer", first)
    next_command(repo)
    after = state(repo)
    assert after.merged and after.locks == [] and after.journals == []
    assert git(repo, "notes", "--ref=refs/notes/harnessgit/gate", "show", first) == "another writer\n"


def test_a_transaction_that_never_landed_and_whose_ref_moved_on_is_dropped(
    repo: Path, tmp_path: Path
) -> None:
    candidate_repo(repo)
    assert kill_at(repo, "before-update", tmp_path) == KILLED
    git(repo, "notes", "--ref=refs/notes/harnessgit/gate", "add", "-m", "another writer", "HEAD")
    next_command(repo)
    after = state(repo)
    assert after.journals == [] and after.locks == []
    assert "refs/heads/harnessgit/cand/c1" in after.refs and "refs/harnessgit/archive/c1" not in after.refs


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_transaction_that_cannot_be_finished_without_guessing_stops_every_command(
    repo: Path, tmp_path: Path
) -> None:
    candidate_repo(repo)
    first = git(repo, "rev-parse", "main").strip()
    assert kill_at(repo, "after-prepare", tmp_path) == KILLED
    dot_git = repo / ".git"
    os.replace(dot_git / "refs/heads/main.lock", dot_git / "refs/heads/main")  # main landed
    # ... and someone put the archive ref, still to be created, somewhere else by hand.
    (dot_git / "refs/harnessgit/archive/c1.lock").unlink()
    git(repo, "update-ref", "refs/harnessgit/archive/c1", first)
    before = state(repo)
    for _ in range(2):  # the same answer every time: nothing guessed, nothing dropped
        with pytest.raises(HarnessgitError, match=r"refs/harnessgit/archive/c1 is at .*`harnessgit doctor`"):
            next_command(repo)
        assert state(repo) == before


def test_the_journal_of_a_live_writer_is_left_alone(repo: Path, tmp_path: Path) -> None:
    candidate_repo(repo)
    assert kill_at(repo, "before-update", tmp_path) == KILLED
    (journal,) = (repo / ".git" / "harnessgit" / "journal").iterdir()
    # The same journal, now owned by a process that runs (this one): in flight.
    from harnessgit.store.journal import this_process

    txid = journal.name.split("~")[0]
    journal.rename(journal.with_name(f"{txid}~{this_process().token}.json"))
    before = state(repo)
    next_command(repo)
    assert state(repo) == before


def test_a_reused_pid_is_not_taken_for_the_writer() -> None:
    from harnessgit.store.journal import Owner, this_process

    me = this_process()
    assert me.alive() is True
    if me.start != "0":  # Linux: the start time tells a reused pid apart
        assert Owner(me.host, me.pid, str(int(me.start) + 1)).alive() is False
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert Owner(me.host, gone.pid, "0").alive() is False
    assert Owner("another-host", me.pid, me.start).alive() is None


def test_only_one_process_takes_a_journal_over(repo: Path, tmp_path: Path) -> None:
    from harnessgit.store.journal import Owner, entries, this_process

    candidate_repo(repo)
    assert kill_at(repo, "before-update", tmp_path) == KILLED
    (entry,) = entries(repo / ".git" / "harnessgit" / "journal")
    assert entry.interrupted()
    taken = entry.claim(this_process())
    assert taken is not None and taken.path.exists() and not entry.path.exists()
    assert entry.claim(Owner("elsewhere", 1, "0")) is None


@pytest.mark.slow
def test_kills_at_random_moments_leave_all_or_nothing(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    for trial in range(6):
        repo = candidate_repo(make_repo())
        delay = random.uniform(0.0, 0.012)
        assert kill_at(repo, f"delay:{delay:.4f}", tmp_path) == KILLED, trial
        next_command(repo)
        after = state(repo)
        assert after.merged or after.untouched, (delay, after)
        assert after.locks == [] and after.journals == [], (delay, after)


def test_a_journal_it_cannot_read_stops_every_command_with_one_line(repo: Path) -> None:
    from harnessgit.store.journal import this_process

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    me = this_process()
    journal_dir = repo / ".git" / "harnessgit" / "journal"
    journal_dir.mkdir(parents=True)
    (journal_dir / f"ab12~{me.host}~{gone.pid}~0.json").write_text('{"v": 2, "updates": []}\n')
    with pytest.raises(HarnessgitError, match=r"cannot read the transaction journal .*version 2.*doctor"):
        next_command(repo)
