"""`harnessgit log`: the accepted edits on the base branch, and every look at the test split."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from harnessgit import layout
from harnessgit.candidates import base_tip, candidate_of
from harnessgit.config import Config
from harnessgit.records import TestPeekRecord
from harnessgit.show import EMPTY_TREE, FileChange, files_between
from harnessgit.store import CommitInfo, Store


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class LogEntry(_Out):
    commit: str
    date: str
    author: str
    subject: str
    kind: str  # "merge": an accepted candidate; "direct": a commit made without harnessgit
    candidate: str | None
    files: list[FileChange]


class TestPeek(_Out):
    commit: str
    harness: str
    model: str
    ts: str
    n: int
    mean: float
    forced: bool


class LogResult(_Out):
    base: str
    entries: list[LogEntry]
    test_peeks: list[TestPeek]


def accepted_log(
    store: Store, config: Config, *, base: str | None = None, limit: int | None = None
) -> LogResult:
    """The base branch's first-parent chain, newest first: one entry per accepted edit."""
    branch = base or config.harness.base
    tip = base_tip(store, branch)
    entries = []
    for sha in store.first_parent_chain(tip, limit=limit):
        info = store.commit_info(sha)
        merged = info.parents[1] if len(info.parents) > 1 else None
        before = info.parents[0] if info.parents else EMPTY_TREE
        entries.append(
            LogEntry(
                commit=sha,
                date=info.author_time.isoformat(),
                author=info.author,
                subject=info.subject,
                kind="merge" if merged else "direct",
                candidate=_merged_candidate(store, info, merged),
                files=files_between(store, before, sha),
            )
        )
    return LogResult(base=branch, entries=entries, test_peeks=test_peeks(store))


def test_peeks(store: Store) -> list[TestPeek]:
    peeks = [
        record
        for records in store.notes(layout.NOTES_EVALS).values()
        for record in records
        if isinstance(record, TestPeekRecord)
    ]
    return [
        TestPeek(
            commit=p.commit,
            harness=p.harness,
            model=p.model,
            n=p.n,
            mean=p.mean,
            forced=p.forced,
            ts=p.model_dump(mode="json")["ts"],
        )
        for p in sorted(peeks, key=lambda p: p.ts)
    ]


def _merged_candidate(store: Store, info: CommitInfo, merged: str | None) -> str | None:
    if merged is None:
        return candidate_of(store, info.sha)
    return candidate_of(store, merged)
