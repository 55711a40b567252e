"""`harnessgit log`: the accepted edits on the base branch, and every look at the test split."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from harnessgit import layout
from harnessgit.candidates.show import EMPTY_TREE, FileChange, files_between
from harnessgit.candidates.targets import base_tip, candidate_of
from harnessgit.config import Config
from harnessgit.records import GateRecord, OverrideRecord, TestPeekRecord
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
    gate: GateSummary | None = None
    override: Override | None = None


class GateSummary(_Out):
    passed: bool
    n: int
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    attempt: int
    alpha_k: float
    alpha_spent: float


class Override(_Out):
    action: str
    reason: str
    author: str


class SelectionSpend(_Out):
    """Gate attempts on one selection set (one split hash) and the alpha they spent."""

    split_hash: str
    attempts: int
    alpha: float
    alpha_spent: float
    passed: int


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
    selection_sets: list[SelectionSpend]


def accepted_log(
    store: Store, config: Config, *, base: str | None = None, limit: int | None = None
) -> LogResult:
    """The base branch's first-parent chain, newest first: one entry per accepted edit."""
    branch = base or config.harness.base
    tip = base_tip(store, branch)
    gates = store.notes(layout.NOTES_GATE)
    entries = []
    for sha in store.first_parent_chain(tip, limit=limit):
        records = gates.get(sha, [])
        gate = next((r for r in reversed(records) if isinstance(r, GateRecord) and r.merge == sha), None)
        override = next((r for r in records if isinstance(r, OverrideRecord) and r.commit == sha), None)
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
                gate=GateSummary(
                    passed=gate.passed,
                    n=gate.n,
                    difference=gate.difference,
                    ci_low=gate.ci_low,
                    ci_high=gate.ci_high,
                    attempt=gate.attempt,
                    alpha_k=gate.alpha_k,
                    alpha_spent=gate.alpha_spent,
                )
                if gate
                else None,
                override=Override(action=override.action, reason=override.reason, author=override.author)
                if override
                else None,
            )
        )
    all_gates = [r for rs in gates.values() for r in rs if isinstance(r, GateRecord)]
    return LogResult(
        base=branch, entries=entries, test_peeks=test_peeks(store), selection_sets=selection_spend(all_gates)
    )


def selection_spend(gates: list[GateRecord]) -> list[SelectionSpend]:
    """Per selection set: distinct comparisons gated, and the alpha they spent."""
    by_set: dict[str, list[GateRecord]] = {}
    for record in gates:
        by_set.setdefault(record.split_hash, []).append(record)
    spends = []
    for split_hash, records in by_set.items():
        latest = max(records, key=lambda r: r.attempt)
        spends.append(
            SelectionSpend(
                split_hash=split_hash,
                attempts=latest.attempt,
                alpha=latest.alpha,
                alpha_spent=latest.alpha_spent,
                passed=len({(r.base_harness, r.harness) for r in records if r.passed}),
            )
        )
    return spends


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
