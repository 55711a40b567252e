"""`harnessgit test`: the held-out test split, looked at rarely and always on the record.

SkillOpt's published main table picked its configuration on the test set; here a
second look at the test split, for a different harness, before a release label
moves, is refused without --force, and every look is a record that `log` and
`verify` list. No automatic decision reads these scores (`ScoreBook.summary`
refuses the test split to deciding callers).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from harnessgit import layout
from harnessgit.config import Config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.eval import EvalRequest, Evaluation, Execution, evaluate
from harnessgit.evaluation.scores import TEST_SPLIT, ScoreBook
from harnessgit.records import TestPeekRecord
from harnessgit.store import Notes, Store, Transaction
from harnessgit.targets import label_moves, resolve


@dataclass(frozen=True)
class HeldOutResult:
    evaluation: Evaluation
    peek: TestPeekRecord
    earlier: list[TestPeekRecord]  # peeks at other harnesses since the last label move


def last_label_move(notes: Notes) -> datetime | None:
    return max((record.ts for record in label_moves(notes)), default=None)


def peek_test_split(
    store: Store,
    config: Config,
    rev: str,
    *,
    force: bool = False,
    execution: Execution = Execution(),
) -> HeldOutResult:
    book = ScoreBook.load(store)
    context = eval_context(store.objects, config, resolve(store.refs, rev).sha)
    since = last_label_move(store.notes)
    earlier = [
        peek
        for peek in book.peeks
        if (since is None or peek.ts > since) and peek.harness != context.key.harness
    ]
    if earlier and not force:
        harnesses = len({peek.harness for peek in earlier})  # a harness looked at twice is one
        raise HarnessgitError(
            f"the test split was already evaluated for {harnesses} other harness"
            f"{'es' if harnesses > 1 else ''} (first on {earlier[0].commit[:12]}) since the last "
            "label move; a second look turns it into a selection set. Pass --force to look anyway "
            "(recorded as forced)"
        )
    evaluation = evaluate(
        store,
        config,
        context.commit,
        EvalRequest(split=TEST_SPLIT, allow_test=True, warn_uncommitted=True),
        execution=execution,
        book=book,
    )
    summary = evaluation.summary
    peek = TestPeekRecord(
        ts=store.clock(),
        commit=context.commit,
        **context.key.fields(),
        n=summary.n,
        mean=summary.mean if summary.mean is not None else 0.0,
        forced=bool(earlier),
    )
    txn = Transaction(f"test peek {context.commit[:12]}")
    txn.append(layout.NOTES_EVALS, context.commit, [peek])
    store.refs.commit(txn)
    return HeldOutResult(evaluation, peek, earlier)
