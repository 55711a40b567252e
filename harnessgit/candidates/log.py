"""`harnessgit log`: the accepted edits on the base branch (each merge with the
proposals it landed), every look at the test split, and every forced export of a
guarded split as training data (`harnessgit export failures --force`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar

from harnessgit import layout
from harnessgit.candidates.show import EMPTY_TREE, FileChange, files_between
from harnessgit.config import Config
from harnessgit.evaluation.lineage import registered
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.objects import CommitInfo
from harnessgit.records import GateRecord, ModelRecord, OverrideRecord, Record, view_of
from harnessgit.store import Store
from harnessgit.targets import base_tip, candidate_of, proposal_chain


@dataclass(frozen=True, kw_only=True)
class GateSummary:
    passed: bool
    shown_verdict: str  # pass, fail or inconclusive (a record from before: pass or fail)
    n: int
    difference: float | None
    corrected: float | None = None  # the gain corrected for selection; None before issue 25
    ci_low: float | None
    ci_high: float | None
    attempt: int
    alpha_k: float
    alpha_spent: float
    # Why the record is not this commit's gate (a record copied onto it from another
    # merge, issue 28 defect 4), or None: `landing_mismatch`. `verify` checks the rest.
    problem: str | None = None


@dataclass(frozen=True, kw_only=True)
class Override:
    action: str
    reason: str
    author: str


@dataclass(frozen=True, kw_only=True)
class MergedProposal:
    """One proposal a merge landed."""

    candidate: str | None
    commit: str
    subject: str


@dataclass(frozen=True, kw_only=True)
class LogEntry:
    commit: str
    date: str
    author: str
    subject: str
    kind: str  # "merge": an accepted candidate; "direct": a commit made without harnessgit
    candidate: str | None
    files: list[FileChange]
    gate: GateSummary | None = None
    override: Override | None = None
    # A merge's proposals, oldest first: the candidate and every candidate it was
    # proposed on that the base did not hold yet (empty for a direct commit).
    proposals: list[MergedProposal] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class SelectionSpend:
    """Gate attempts on one selection set (one split hash) and the alpha they spent."""

    split_hash: str
    attempts: int  # distinct comparisons gated on it
    alpha: float
    alpha_spent: float
    passed: int


@dataclass(frozen=True, kw_only=True)
class TestPeek:
    __test__: ClassVar[bool] = False  # not a pytest test class, despite the name

    commit: str
    harness: str
    model: str
    ts: datetime
    n: int
    mean: float
    forced: bool


@dataclass(frozen=True, kw_only=True)
class Export:
    """A forced export of the selection or test split as training data: from then on,
    that split's instances may be in a model's or proposer's training data."""

    commit: str  # the base tip when it was made
    ts: datetime
    split: str
    model: str | None  # the --model filter; None: every model
    conversations: int
    pairs: bool
    author: str  # "" in records written before exports named who made them


@dataclass(frozen=True, kw_only=True)
class LogResult:
    base: str
    entries: list[LogEntry]
    test_peeks: list[TestPeek]
    selection_sets: list[SelectionSpend]
    # Registered model checkpoints, oldest first (`harnessgit model add`): a score change
    # across model labels is a weights change, not a harness edit.
    models: list[ModelRecord] = field(default_factory=list)
    exports: list[Export] = field(default_factory=list)  # oldest first


@dataclass(frozen=True)
class Landing:
    """What the records on a base-branch commit say about how it got there."""

    gates: list[GateRecord]  # the gate records of the merge that landed it, oldest first
    overrides: list[OverrideRecord]  # base-branch moves to it made without the gate


def landing(records: Sequence[Record], sha: str) -> Landing:
    """``sha``'s landing, from the gate notes on it (`verify` checks the same records)."""
    return Landing(
        [r for r in records if isinstance(r, GateRecord) and r.merge == sha],
        [r for r in records if isinstance(r, OverrideRecord) and r.commit == sha],
    )


def landing_mismatch(gate: GateRecord, info: CommitInfo) -> list[str]:
    """What shows that ``gate`` did not decide the merge ``info``: it compared other
    commits, or evaluated another tree. Cheap (no scores read), so that whatever shows a
    landing's verdict shows one that belongs to it; `verify` recomputes the decision."""
    problems = []
    if info.parents[:1] != (gate.base,) or len(info.parents) < 2 or info.parents[1] != gate.commit:
        problems.append(
            f"the gate compared {gate.commit[:12]} with {gate.base[:12]}, but this merge's parents "
            f"are {', '.join(p[:12] for p in info.parents)}"
        )
    if info.tree != gate.tree:
        problems.append(
            f"the merged tree {info.tree[:12]} is not the tree the gate evaluated ({gate.tree[:12]})"
        )
    return problems


def accepted_log(
    store: Store, config: Config, *, base: str | None = None, limit: int | None = None
) -> LogResult:
    """The base branch's first-parent chain, newest first: one entry per accepted edit."""
    branch = base or config.harness.base
    gates = store.notes.records(layout.NOTES_GATE)
    entries = [
        _entry(store, sha, landing(gates.get(sha, []), sha))
        for sha in store.history.first_parent_chain(base_tip(store.refs, branch), limit=limit)
    ]
    all_gates = [r for rs in gates.values() for r in rs if isinstance(r, GateRecord)]
    book = ScoreBook.load(store)
    return LogResult(
        base=branch,
        entries=entries,
        test_peeks=[view_of(TestPeek, peek) for peek in book.peeks],
        selection_sets=selection_spend(all_gates),
        models=list(registered(store.notes).values()),
        exports=[view_of(Export, export) for export in book.exports],
    )


def _entry(store: Store, sha: str, landed: Landing) -> LogEntry:
    info = store.objects.commit_info(sha)
    merged = info.parents[1] if len(info.parents) > 1 else None
    chain = proposal_chain(store, merged, info.parents[0]) if merged else []
    return LogEntry(
        commit=sha,
        date=info.author_time.isoformat(),
        author=info.author,
        subject=info.subject,
        kind="merge" if merged else "direct",
        candidate=candidate_of(store.objects, merged or sha),
        files=files_between(store.history, info.parents[0] if info.parents else EMPTY_TREE, sha),
        gate=_summary(landed.gates[-1], info) if landed.gates else None,
        override=view_of(Override, landed.overrides[0]) if landed.overrides else None,
        proposals=[
            MergedProposal(
                candidate=origin.candidate,
                commit=origin.commit,
                subject=store.objects.commit_info(origin.commit).subject,
            )
            for origin in chain
        ],
    )


def _summary(gate: GateRecord, info: CommitInfo) -> GateSummary:
    problems = landing_mismatch(gate, info)
    return view_of(GateSummary, gate, problem="; ".join(problems) if problems else None)


def selection_spend(gates: list[GateRecord]) -> list[SelectionSpend]:
    """Per selection set: distinct comparisons gated, and the alpha they spent."""
    by_set: dict[str, list[GateRecord]] = {}
    for record in gates:
        by_set.setdefault(record.split_hash, []).append(record)
    spends = []
    for split_hash, records in by_set.items():
        latest = max(records, key=lambda r: r.attempt)
        first: dict[tuple[str, str], GateRecord] = {}
        for record in sorted(records, key=lambda r: (r.ts, r.id)):
            first.setdefault((record.base_harness, record.harness), record)
        # Two clones that gated before syncing can share a k: every comparison's level
        # counts, and so do the levels a later k skipped to pay for it (`next_attempt`).
        tested = math.fsum(record.alpha_k for record in first.values())
        spends.append(
            SelectionSpend(
                split_hash=split_hash,
                attempts=len(first),
                alpha=latest.alpha,
                alpha_spent=max(latest.alpha_spent, tested),
                passed=len({(r.base_harness, r.harness) for r in records if r.passed}),
            )
        )
    return spends
