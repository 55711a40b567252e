"""`harnessgit show`: what a candidate (or any commit) is, and what is on record about it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from harnessgit import layout
from harnessgit.config import Config
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.splits import ManifestError, load_manifest
from harnessgit.records import EvidenceRecord, ProposalRecord, Record, RetireRecord, view_of
from harnessgit.store import FileStat, History, Store
from harnessgit.targets import candidate_of, resolve

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

# A changed file as the store reports it (path, status, added, removed, old_path);
# `show`, `log` and `bisect` list them as they are.
FileChange = FileStat


@dataclass(frozen=True, kw_only=True)
class Evidence:
    id: str
    label: str
    items: int
    bytes: int
    blob: str
    item_kinds: dict[str, int]


@dataclass(frozen=True, kw_only=True)
class Proposed:
    id: str
    ts: datetime
    source: str
    proposer: str | None
    parent: str
    components: list[str]


@dataclass(frozen=True, kw_only=True)
class EvaluationSummary:
    split: str
    model: str
    fingerprint: str
    n: int
    mean: float | None
    stderr: float | None
    current: bool  # evaluated with the evaluator and model harnessgit.toml names now


@dataclass(frozen=True, kw_only=True)
class ShowResult:
    commit: str
    tree: str
    parents: list[str]
    candidate: str | None
    state: str | None
    author: str
    date: str
    subject: str
    rationale: str | None
    proposal: Proposed | None
    files: list[FileChange]
    diff: str
    evidence: list[Evidence]
    evaluations: list[EvaluationSummary]
    # why an archived candidate was retired ("rejected: GEPA: ..."), from its latest
    # retire record; None when none is on record
    retired: str | None = None


def show(store: Store, config: Config, name: str) -> ShowResult:
    target = resolve(store.refs, name)
    info = store.objects.commit_info(target.sha)
    parent = info.parents[0] if info.parents else EMPTY_TREE
    records = store.notes.records_on(layout.NOTES_EVIDENCE, target.sha)
    proposal = next((r for r in records if isinstance(r, ProposalRecord)), None)
    candidate = target.candidate or (
        proposal.candidate if proposal else candidate_of(store.objects, target.sha)
    )
    return ShowResult(
        commit=info.sha,
        tree=info.tree,
        parents=list(info.parents),
        candidate=candidate,
        state=target.state,
        author=info.author,
        date=info.author_time.isoformat(),
        subject=info.subject,
        rationale=proposal.rationale if proposal else None,
        proposal=view_of(Proposed, proposal) if proposal else None,
        files=files_between(store.history, parent, info.sha),
        diff=store.history.diff_text(parent, info.sha),
        evidence=[view_of(Evidence, r) for r in records if isinstance(r, EvidenceRecord)],
        evaluations=evaluations_of(store, config, target.sha),
        retired=_retired(records, candidate) if target.state == "archived" else None,
    )


def _retired(records: list[Record], candidate: str | None) -> str | None:
    found = [r for r in records if isinstance(r, RetireRecord) and r.candidate == candidate]
    if not found:
        return None
    latest = max(found, key=lambda r: r.ts)
    return ": ".join(filter(None, [latest.reason, latest.detail]))


def evaluations_of(store: Store, config: Config, commit: str) -> list[EvaluationSummary]:
    """Scores on record for this commit's harness, per split, model and evaluator."""
    if not config.present:
        return []
    try:
        manifest = load_manifest(store.root, config.splits.manifest)
    except ManifestError:
        return []
    current = eval_context(store.objects, config, commit).key
    book = ScoreBook.load(store)
    found = []
    for key in book.keys_of(current.harness):
        for split, ids in manifest.splits.items():
            summary = book.summary(key, split, ids)
            if summary.n:
                found.append(view_of(EvaluationSummary, summary, current=key == current))
    return found


def files_between(history: History, a: str, b: str) -> list[FileChange]:
    return history.diff_files(a, b)
