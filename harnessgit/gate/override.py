"""`harnessgit override`: accept an ungated commit on the base branch, on the record.

A commit made straight to the base branch that changes the harness, the evaluator (a
regrade: old and new scores do not compare) or the gate's settings did not pass the
gate, and `verify` reports it until it is reverted or accepted here: an `override`
record on the commit, with the reason and the author, which `verify` and `log` list
ever after. A commit that changes only infrastructure (docs, CI) needs none.
"""

from __future__ import annotations

from harnessgit import layout
from harnessgit.candidates.log import landing
from harnessgit.config import Config, require
from harnessgit.errors import HarnessgitError
from harnessgit.gate.changes import classify
from harnessgit.records import OverrideRecord
from harnessgit.store import Store, Transaction
from harnessgit.targets import base_tip, resolve


def override(
    store: Store, config: Config, rev: str, *, reason: str, base: str | None = None
) -> OverrideRecord:
    config = require(config)
    if not reason.strip():
        raise HarnessgitError("an override needs --reason: say why this commit may skip the gate")
    branch = base or config.harness.base
    sha = resolve(store.refs, rev).sha
    if sha not in store.history.first_parent_chain(base_tip(store.refs, branch)):
        raise HarnessgitError(
            f"{rev} is not on {branch}'s first-parent chain: only moves of {branch} need one"
        )
    landed = landing(store.notes.records_on(layout.NOTES_GATE, sha), sha)
    if landed.gates or landed.overrides:
        how = "a gated merge" if landed.gates else "overridden already"
        raise HarnessgitError(f"{sha[:12]} is {how}: there is nothing to override")
    change = classify(store, sha)
    if change.infrastructure:
        raise HarnessgitError(
            f"{sha[:12]} changes only infrastructure ({', '.join(change.other[:3]) or 'nothing'}): "
            "verify lists it and needs no override"
        )
    record = OverrideRecord(
        ts=store.clock(),
        commit=sha,
        candidate=None,
        action=", ".join(change.kinds),
        reason=reason.strip(),
        author=store.identity(),
    )
    txn = Transaction(f"override {sha[:12]}")
    txn.append(layout.NOTES_GATE, sha, [record])
    store.refs.commit(txn)
    return record
