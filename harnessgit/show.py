"""`harnessgit show` and `harnessgit log`: what a candidate is, and what main accepted."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from harnessgit import layout
from harnessgit.candidates import base_tip, candidate_of, resolve
from harnessgit.config import Config
from harnessgit.records import EvidenceRecord, ProposalRecord
from harnessgit.store import CommitInfo, Store

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


class LogEntry(_Out):
    commit: str
    date: str
    author: str
    subject: str
    kind: str  # "merge": an accepted candidate; "direct": a commit made without harnessgit
    candidate: str | None
    files: list[FileChange]


def show(store: Store, name: str) -> ShowResult:
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
        files=_files(store, parent, info.sha),
        diff=store.diff_text(parent, info.sha),
        evidence=[
            Evidence(
                id=r.id, label=r.label, items=r.items, bytes=r.bytes, blob=r.blob, item_kinds=r.item_kinds
            )
            for r in records
            if isinstance(r, EvidenceRecord)
        ],
    )


def _files(store: Store, a: str, b: str) -> list[FileChange]:
    return [
        FileChange(path=s.path, status=s.status, added=s.added, removed=s.removed, old_path=s.old_path)
        for s in store.diff_files(a, b)
    ]


def accepted_log(
    store: Store, config: Config, *, base: str | None = None, limit: int | None = None
) -> list[LogEntry]:
    """The base branch's first-parent chain, newest first: one entry per accepted edit."""
    tip = base_tip(store, base or config.harness.base)
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
                files=_files(store, before, sha),
            )
        )
    return entries


def _merged_candidate(store: Store, info: CommitInfo, merged: str | None) -> str | None:
    if merged is None:
        return candidate_of(store, info.sha)
    return candidate_of(store, merged)
