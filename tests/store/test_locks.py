"""A lock file left by a killed git: named at once, with its age and the fix (issue 15).

Before: a write under a stale lock retried 200 times for ~40 s, then said "the refs are
too busy" and swallowed git's "File exists". A lock a live writer holds (milliseconds)
is still waited for, as before.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.errors import ConcurrentUpdate, HarnessgitError
from harnessgit.store import Store, Transaction
from harnessgit.store import refs as store_refs
from tests.conftest import git
from tests.store.kill_fixtures import left_lock
from tests.store.store_fixtures import record


def append(store: Store, n: int = 0) -> None:
    txn = Transaction("test")
    txn.append(layout.NOTES_EVALS, store.refs.resolve("HEAD"), [record(n)])
    store.refs.commit(txn)


def test_a_write_under_a_stale_lock_fails_at_once_naming_it_and_the_fix(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Few attempts: without the stale-lock check this would give up as "too busy" at once.
    monkeypatch.setattr(store_refs, "MAX_ATTEMPTS", 3)
    with Store.discover(repo) as store:
        left = left_lock(repo, "refs/notes/harnessgit/evals.lock", 10)
        with pytest.raises(HarnessgitError) as caught:
            append(store)
    message = str(caught.value)
    assert "\n" not in message
    assert re.search(r"\.git/refs/notes/harnessgit/evals\.lock \(10\.\d s old\)", message)
    assert "`harnessgit doctor --fix`" in message
    assert left.exists()  # a write never removes a lock it did not take


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_lock_that_is_never_released_is_reported_once_it_is_stale(repo: Path) -> None:
    with Store.discover(repo) as store:
        left_lock(repo, "refs/notes/harnessgit/evals.lock", 0)
        with pytest.raises(HarnessgitError, match=r"evals\.lock \(1\.\d s old\).*doctor --fix"):
            append(store)


def test_a_lock_held_by_a_live_writer_is_waited_for(repo: Path) -> None:
    with Store.discover(repo) as store:
        held = left_lock(repo, "refs/notes/harnessgit/evals.lock", 0)
        release = threading.Timer(0.3, held.unlink)
        release.start()
        append(store)
        release.join()
        assert len(store.notes.records_on(layout.NOTES_EVALS, store.refs.resolve("HEAD"))) == 1


def test_opening_the_store_refuses_a_stale_lock_before_any_work(repo: Path) -> None:
    left_lock(repo, "refs/heads/main.lock", 125)
    left_lock(repo, "packed-refs.lock", 7200)
    with pytest.raises(HarnessgitError) as caught:
        Store.discover(repo)
    message = str(caught.value)
    assert "2 stale locks" in message and "`harnessgit doctor --fix`" in message
    assert ".git/packed-refs.lock (2.0 h old)" in message
    assert ".git/refs/heads/main.lock (2 min old)" in message


def test_a_fresh_lock_does_not_stop_a_command_from_starting(repo: Path) -> None:
    left_lock(repo, "refs/heads/main.lock", 0)  # a live writer, a few milliseconds in
    Store.discover(repo).close()


def test_a_leftover_packed_refs_scratch_file_is_named_as_a_stale_lock(repo: Path) -> None:
    git(repo, "branch", "gone")
    git(repo, "pack-refs", "--all")
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        left_lock(repo, "packed-refs.new", 30)  # a git killed while rewriting packed-refs
        txn = Transaction("test")
        txn.delete("refs/heads/gone", head)
        with pytest.raises(HarnessgitError, match=r"\.git/packed-refs\.new \(30\.\d s old\).*doctor --fix"):
            store.refs.commit(txn)


def test_giving_up_on_busy_refs_says_what_git_said(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_refs, "MAX_ATTEMPTS", 2)
    with Store.discover(repo) as store:
        left_lock(repo, "refs/notes/harnessgit/evals.lock", 0)
        with pytest.raises(ConcurrentUpdate, match=r"cannot lock ref 'refs/notes/harnessgit/evals'"):
            append(store)
