"""A transaction lands whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.errors import ConcurrentUpdate
from harnessgit.store import Store, Transaction
from tests.conftest import git
from tests.store.store_fixtures import record


def test_transaction_is_all_or_nothing(repo: Path) -> None:
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        txn = Transaction("setup")
        txn.create("refs/heads/harnessgit/cand/x", head)
        store.refs.commit(txn)
        before = git(repo, "for-each-ref")
        txn = Transaction("conflicting")
        txn.create("refs/heads/harnessgit/cand/y", head)
        txn.create("refs/heads/harnessgit/cand/x", head)  # exists already: the whole thing fails
        txn.append(layout.NOTES_GATE, head, [record()])
        txn.keep(store.objects.write_blob(b"evidence"))
        with pytest.raises(ConcurrentUpdate):
            store.refs.commit(txn)
        assert git(repo, "for-each-ref") == before
