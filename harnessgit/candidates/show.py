"""`harnessgit show` and `harnessgit log`: what a candidate is, and what main accepted."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from harnessgit import layout
from harnessgit.candidates.targets import candidate_of, resolve
from harnessgit.config import Config
from harnessgit.records import EvidenceRecord, ProposalRecord
from harnessgit.store import Store

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class FileChange(_Out):
    path: str
    status: str
    added: int | None
    removed: int | None
    old_path: str | None = None


class Evidence(_Out):
    id: str
    label: str
    items: int
    bytes: int
    blob: str
    item_kinds: dict[str, int]


class Proposed(_Out):
    id: str
    ts: str
    source: str
    proposer: str | None
    parent: str
    components: list[str]


class EvaluationSummary(_Out):
    split: str
    model: str
    fingerprint: str
    n: int
    mean: float | None
    stderr: float | None
    current: bool  # evaluated with the evaluator and model harnessgit.toml names now


class ShowResult(_Out):
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


def show(store: Store, config: Config, name: str) -> ShowResult:
    target = resolve(store, name)
    info = store.commit_info(target.sha)
    parent = info.parents[0] if info.parents else EMPTY_TREE
    records = store.notes_on(layout.NOTES_EVIDENCE, target.sha)
    proposal = next((r for r in records if isinstance(r, ProposalRecord)), None)
    candidate = target.candidate or (proposal.candidate if proposal else candidate_of(store, target.sha))
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
        proposal=Proposed(
            id=proposal.id,
            ts=proposal.model_dump(mode="json")["ts"],
            source=proposal.source,
            proposer=proposal.proposer,
            parent=proposal.parent,
            components=proposal.components,
        )
        if proposal
        else None,
        files=files_between(store, parent, info.sha),
        diff=store.diff_text(parent, info.sha),
        evidence=[
            Evidence(
                id=r.id, label=r.label, items=r.items, bytes=r.bytes, blob=r.blob, item_kinds=r.item_kinds
            )
            for r in records
            if isinstance(r, EvidenceRecord)
        ],
        evaluations=evaluations_of(store, config, target.sha),
    )


def evaluations_of(store: Store, config: Config, commit: str) -> list[EvaluationSummary]:
    """Scores on record for this commit's harness, per split, model and evaluator."""
    if not config.present:
        return []
    from harnessgit.evaluation.context import eval_context
    from harnessgit.evaluation.scores import ScoreBook
    from harnessgit.evaluation.splits import ManifestError, load_manifest

    try:
        manifest = load_manifest(store.root, config.splits.manifest)
    except ManifestError:
        return []
    current = eval_context(store, config, commit).key
    book = ScoreBook.load(store)
    found = []
    for key in book.cache_keys():
        if key.harness != current.harness:
            continue
        for split, ids in manifest.splits.items():
            summary = book.summary(key, split, ids)
            if summary.n:
                found.append(
                    EvaluationSummary(
                        split=split,
                        model=key.model,
                        fingerprint=key.fingerprint,
                        n=summary.n,
                        mean=summary.mean,
                        stderr=summary.stderr,
                        current=key == current,
                    )
                )
    return found


def files_between(store: Store, a: str, b: str) -> list[FileChange]:
    return [
        FileChange(path=s.path, status=s.status, added=s.added, removed=s.removed, old_path=s.old_path)
        for s in store.diff_files(a, b)
    ]
