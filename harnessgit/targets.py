"""What names and commits mean in harnessgit's layout, for every feature.

A candidate id or revision resolved to a commit (`resolve`), the base branch's tip,
the live and archived candidate branches, a candidate's retirement, where an edit's
proposal and evidence are recorded (`provenance`), and the recorded label moves.
Below every feature package and above the store: evaluation, the gate and the
candidates commands all name commits this way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harnessgit import layout
from harnessgit.errors import UnknownRevision
from harnessgit.names import CANDIDATE_ID, check_ref_name, check_revision
from harnessgit.records import EvidenceRecord, LabelRecord, ProposalRecord, RetireRecord
from harnessgit.store import Store, Transaction

State = Literal["live", "archived"]


@dataclass(frozen=True)
class Target:
    """A commit, and the candidate it is the tip of, if any."""

    sha: str
    candidate: str | None = None
    state: State | None = None


def candidate_tips(store: Store) -> dict[str, tuple[State, str]]:
    """Every candidate id -> (live or archived, tip commit)."""
    tips: dict[str, tuple[State, str]] = {}
    live: dict[str, str] = {}
    for ref, sha in store.list_refs(layout.ARCHIVE.rstrip("/"), layout.CANDIDATES.rstrip("/")).items():
        if ref.startswith(layout.ARCHIVE):
            tips[ref.removeprefix(layout.ARCHIVE)] = ("archived", sha)
        elif ref.startswith(layout.CANDIDATES):
            live[ref.removeprefix(layout.CANDIDATES)] = sha
    tips.update((cid, ("live", sha)) for cid, sha in live.items())  # live wins over a stale archive copy
    return tips


def resolve(store: Store, name: str) -> Target:
    """A candidate id (live or archived) first, then any git revision."""
    check_revision(name)
    if CANDIDATE_ID.fullmatch(name):
        refs = store.ref_values([layout.candidate_ref(name), layout.archive_ref(name)])
        if layout.candidate_ref(name) in refs:
            return Target(refs[layout.candidate_ref(name)], name, "live")
        if layout.archive_ref(name) in refs:
            return Target(refs[layout.archive_ref(name)], name, "archived")
    return Target(store.resolve_commit(name))


def base_tip(store: Store, branch: str) -> str:
    """The tip of the base branch; a clear error when it does not exist yet."""
    check_ref_name(branch, "base branch")
    sha = store.ref_value(layout.branch_ref(branch))
    if sha is None:
        if not store.list_refs("refs/heads"):
            raise UnknownRevision("the repository has no commits yet: commit the harness first")
        raise UnknownRevision(
            f"base branch {branch!r} does not exist: create it or set [harness] base in harnessgit.toml"
        )
    return sha


def candidate_of(store: Store, sha: str) -> str | None:
    """The candidate id recorded in a commit's trailer, if it is a candidate commit."""
    info = store.commit_info(sha)
    for line in reversed(info.message.strip().splitlines()):
        key, _, value = line.partition(":")
        if key == layout.CANDIDATE_TRAILER:
            return value.strip() or None
    return None


def without_trailer(body: str) -> str:
    """A commit message's body without its ``Harnessgit-Candidate`` trailer."""
    return "\n".join(
        line for line in body.splitlines() if not line.startswith(layout.CANDIDATE_TRAILER)
    ).strip()


@dataclass(frozen=True)
class Provenance:
    """Why an edit exists, from the record: the commit that carries its proposal and
    evidence (a merge on the base branch carries the gate record, the candidate it
    merged, its second parent, carries the proposal), and those records."""

    commit: str
    candidate: str | None
    proposal: ProposalRecord | None
    evidence: list[EvidenceRecord]


def provenance(store: Store, sha: str) -> Provenance:
    info = store.commit_info(sha)
    proposed = info.parents[1] if len(info.parents) > 1 else sha
    records = store.notes_on(layout.NOTES_EVIDENCE, proposed)
    proposal = next((r for r in records if isinstance(r, ProposalRecord)), None)
    candidate = (proposal.candidate if proposal else None) or candidate_of(store, proposed)
    return Provenance(proposed, candidate, proposal, [r for r in records if isinstance(r, EvidenceRecord)])


def retire(store: Store, txn: Transaction, candidate: str, sha: str, reason: str, detail: str = "") -> None:
    """Move a live candidate's branch to the archive (still pinned, still audited)."""
    txn.delete(layout.candidate_ref(candidate), sha)
    txn.create(layout.archive_ref(candidate), sha)
    txn.append(
        layout.NOTES_EVIDENCE,
        sha,
        [
            RetireRecord(
                ts=store.clock(),
                candidate=candidate,
                commit=sha,
                reason=reason,
                detail=detail,
            )
        ],
    )


def label_moves(store: Store, name: str | None = None) -> list[LabelRecord]:
    """Every recorded label move, oldest first."""
    moves = [
        record
        for records in store.notes(layout.NOTES_LABELS).values()
        for record in records
        if isinstance(record, LabelRecord) and (name is None or record.name == name)
    ]
    return sorted(moves, key=lambda record: record.ts)
