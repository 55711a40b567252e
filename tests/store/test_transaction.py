"""A transaction lands whole or not at all."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.errors import ConcurrentUpdate
from harnessgit.records import ProposalRecord
from harnessgit.store import Store, Transaction
from tests.conftest import git

TS = datetime(2026, 1, 1, tzinfo=timezone.utc)


def record(n: int = 0) -> ProposalRecord:
    return ProposalRecord(
        ts=TS, candidate=f"c{n}", parent="0" * 40, components=["SKILL.md"], rationale=f"r{n}", source="api"
    )


def test_transaction_is_all_or_nothing(repo: Path) -> None:
    with Store.discover(repo) as store:
        head = store.resolve_commit("HEAD")
        txn = Transaction("setup")
        txn.create("refs/heads/harnessgit/cand/x", head)
        store.commit(txn)
        before = git(repo, "for-each-ref")
        txn = Transaction("conflicting")
        txn.create("refs/heads/harnessgit/cand/y", head)
        txn.create("refs/heads/harnessgit/cand/x", head)  # exists already: the whole thing fails
        txn.append(layout.NOTES_GATE, head, [record()])
        txn.keep(store.write_blob(b"evidence"))
        with pytest.raises(ConcurrentUpdate):
            store.commit(txn)
        assert git(repo, "for-each-ref") == before
