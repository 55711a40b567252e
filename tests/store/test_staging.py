"""Staged transactions (`Refs.staging`): land as one, read back before they land."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.records import ProposalRecord, Record
from harnessgit.store import Store, Transaction
from tests.conftest import git
from tests.store.store_fixtures import record

CAND = layout.candidate_ref("c1")
ARCHIVED = layout.archive_ref("c1")


def _propose(store: Store, head: str, n: int) -> None:
    txn = Transaction(f"propose c{n}")
    txn.create(layout.candidate_ref(f"c{n}"), head)
    txn.append(layout.NOTES_EVIDENCE, head, [record(n)])
    txn.keep(store.objects.write_blob(f"evidence {n}".encode()))
    store.refs.commit(txn)


def _candidates(records: list[Record]) -> list[str]:
    return [r.candidate for r in records if isinstance(r, ProposalRecord)]


def _commits(repo: Path, ref: str) -> list[str]:
    return git(repo, "log", "--format=%s", ref).splitlines()


def test_staged_writes_land_as_one_transaction_and_read_back_before(repo: Path) -> None:
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        with store.refs.staging("evolve iteration 0", max_age=3600):
            _propose(store, head, 1)
            txn = Transaction("eval")
            txn.append(layout.NOTES_EVALS, head, [record(2)])
            store.refs.commit(txn)
            # Nothing on disk yet, everything readable through the store.
            assert git(repo, "for-each-ref", "refs/heads/harnessgit", "refs/notes") == ""
            assert store.refs.value(CAND) == head
            assert store.refs.listing(layout.CANDIDATES.rstrip("/")) == {CAND: head}
            assert _candidates(store.notes.records_on(layout.NOTES_EVIDENCE, head)) == ["c1"]
            assert list(store.notes.records(layout.NOTES_EVALS)) == [head]
        assert _commits(repo, layout.NOTES_EVIDENCE) == ["harnessgit: evolve iteration 0: propose c1; eval"]
        assert len(_commits(repo, layout.NOTES_EVALS)) == 1
        assert git(repo, "rev-parse", CAND).strip() == head
        assert len(store.notes.records_on(layout.NOTES_EVIDENCE, head)) == 1
        assert git(repo, "fsck", "--no-dangling") == ""


def test_a_ref_created_and_archived_while_staged_is_only_archived(repo: Path) -> None:
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        with store.refs.staging("evolve iteration 0", max_age=3600):
            _propose(store, head, 1)
            txn = Transaction("retire c1")
            txn.delete(CAND, head)
            txn.create(ARCHIVED, head)
            store.refs.commit(txn)
            assert store.refs.value(CAND) is None
            assert store.refs.listing(layout.CANDIDATES.rstrip("/"), layout.ARCHIVE.rstrip("/")) == {
                ARCHIVED: head
            }
        refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/harnessgit/archive")
        assert sorted(refs.split()) == sorted(["refs/heads/main", ARCHIVED])


def test_notes_read_back_join_what_is_on_record_and_what_is_staged(repo: Path) -> None:
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        _propose(store, head, 1)
        with store.refs.staging("evolve iteration 0", max_age=3600):
            txn = Transaction("more")
            txn.append(layout.NOTES_EVIDENCE, head, [record(2)])
            store.refs.commit(txn)
            assert _candidates(store.notes.records_on(layout.NOTES_EVIDENCE, head)) == ["c1", "c2"]
            assert _candidates(store.notes.records(layout.NOTES_EVIDENCE)[head]) == ["c1", "c2"]
        assert _candidates(store.notes.records_on(layout.NOTES_EVIDENCE, head)) == ["c1", "c2"]


def test_an_exception_lands_what_was_staged_and_direct_lands_it_first(repo: Path) -> None:
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        with pytest.raises(RuntimeError), store.refs.staging("evolve iteration 0", max_age=3600):
            _propose(store, head, 1)
            with store.refs.direct():
                assert git(repo, "rev-parse", CAND).strip() == head  # landed before the body
                _propose(store, head, 2)  # written straight through
                assert git(repo, "rev-parse", layout.candidate_ref("c2")).strip() == head
            _propose(store, head, 3)
            raise RuntimeError("a step failed")
        assert git(repo, "rev-parse", layout.candidate_ref("c3")).strip() == head
        assert len(_commits(repo, layout.NOTES_EVIDENCE)) == 3


def test_staged_writes_older_than_max_age_land_at_the_next_commit(repo: Path) -> None:
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        with store.refs.staging("slow iteration", max_age=0.0):
            _propose(store, head, 1)
            assert git(repo, "rev-parse", CAND).strip() == head
            _propose(store, head, 2)
        assert len(_commits(repo, layout.NOTES_EVIDENCE)) == 2


def test_notes_kept_at_a_tip_are_read_again_when_another_store_writes(repo: Path) -> None:
    with Store.discover(repo) as store, Store.discover(repo) as other:
        head = store.refs.resolve("HEAD")
        _propose(store, head, 1)
        first = store.notes.records(layout.NOTES_EVIDENCE)
        first[head].clear()  # the caller's copy: what the store keeps is unchanged
        assert _candidates(store.notes.records(layout.NOTES_EVIDENCE)[head]) == ["c1"]
        _propose(other, head, 2)
        assert _candidates(store.notes.records(layout.NOTES_EVIDENCE)[head]) == ["c1", "c2"]
