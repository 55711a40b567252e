"""What names and commits mean in harnessgit's layout, for every feature.

A candidate id or revision resolved to a commit (`resolve`), the base branch's tip,
the live and archived candidate branches, a candidate's retirement, where an edit's
proposal and evidence are recorded (`provenance`), the chain of proposals a candidate
stands on (`proposal_chain`), and the recorded label moves.
Below every feature package and above the store: evaluation, the gate and the
candidates commands all name commits this way.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

from harnessgit import layout
from harnessgit.errors import UnknownRevision
from harnessgit.names import CANDIDATE_ID, check_ref_name, check_revision
from harnessgit.records import EvidenceRecord, LabelRecord, ProposalRecord, RetireRecord
from harnessgit.store import Notes, Objects, Refs, Store, Transaction

State = Literal["live", "archived"]

# A candidate id may be abbreviated as git abbreviates commit ids (core.abbrev's
# default length), and never shorter: shorter prefixes collide too soon to type.
PREFIX_MIN = 7
# What may be an abbreviated commit id, so also a candidate id's prefix.
_ABBREVIATION = re.compile(rf"[0-9a-f]{{{PREFIX_MIN},39}}")
# Two 7-character strings one character apart score 12/14 = 0.86 with difflib; two
# characters off, 0.71. Above this ratio an unknown name is taken for a typo.
_TYPO_RATIO = 0.7

log = logging.getLogger("harnessgit")


@dataclass(frozen=True)
class Target:
    """A commit, and the candidate it is the tip of, if any."""

    sha: str
    candidate: str | None = None
    state: State | None = None


def candidate_tips(refs: Refs) -> dict[str, tuple[State, str]]:
    """Every candidate id -> (live or archived, tip commit)."""
    tips: dict[str, tuple[State, str]] = {}
    live: dict[str, str] = {}
    for ref, sha in refs.listing(layout.ARCHIVE.rstrip("/"), layout.CANDIDATES.rstrip("/")).items():
        if ref.startswith(layout.ARCHIVE):
            tips[ref.removeprefix(layout.ARCHIVE)] = ("archived", sha)
        elif ref.startswith(layout.CANDIDATES):
            live[ref.removeprefix(layout.CANDIDATES)] = sha
    tips.update((cid, ("live", sha)) for cid, sha in live.items())  # live wins over a stale archive copy
    return tips


def resolve(refs: Refs, name: str) -> Target:
    """What a name means, first match wins: a full candidate id (live, else archived),
    then any git revision (a branch, a tag, a full or abbreviated commit id, ``HEAD~2``),
    then a unique prefix of at least `PREFIX_MIN` characters of a candidate id.

    git comes before prefixes so that every revision keeps the meaning git gives it;
    when an abbreviation is both a commit's and a candidate's, the commit wins and a
    warning names the candidate (typing more of the id, or all of it, picks it).
    """
    check_revision(name)
    if CANDIDATE_ID.fullmatch(name):
        found = refs.values([layout.candidate_ref(name), layout.archive_ref(name)])
        if layout.candidate_ref(name) in found:
            return Target(found[layout.candidate_ref(name)], name, "live")
        if layout.archive_ref(name) in found:
            return Target(found[layout.archive_ref(name)], name, "archived")
    try:
        sha = refs.resolve(name)
    except UnknownRevision:
        return _by_prefix(refs, name)
    if _ABBREVIATION.fullmatch(name):
        shadowed = [cid for cid in candidate_tips(refs) if cid.startswith(name)]
        if shadowed:
            log.warning(
                "%s is taken as commit %s, not as candidate %s (type more of the candidate id to mean it)",
                name,
                sha[:12],
                ", ".join(sorted(shadowed)),
            )
    return Target(sha)


def _by_prefix(refs: Refs, name: str) -> Target:
    """The candidate a prefix stands for, or an error that says what was meant."""
    unknown = f"unknown revision {name!r}"
    if not CANDIDATE_ID.fullmatch(name):
        raise UnknownRevision(unknown)
    tips = candidate_tips(refs)
    matches = sorted(cid for cid in tips if cid.startswith(name))
    if len(name) >= PREFIX_MIN and len(matches) == 1:
        state, sha = tips[matches[0]]
        return Target(sha, matches[0], state)
    if len(name) >= PREFIX_MIN and matches:
        raise UnknownRevision(f"candidate id prefix {name!r} is ambiguous: it starts {', '.join(matches)}")
    if matches:
        raise UnknownRevision(
            f"{unknown}: a candidate id prefix needs {PREFIX_MIN} characters or more; "
            f"did you mean {matches[0]}?"
        )
    closest = _closest(name, tips)
    raise UnknownRevision(f"{unknown}: did you mean {closest}?" if closest else unknown)


def _closest(name: str, ids: Iterable[str]) -> str | None:
    """The candidate id most like ``name``, whole or cut to its length (a mistyped
    prefix), if it is close enough to be a typo rather than another word."""
    best, best_ratio = None, _TYPO_RATIO
    for cid in sorted(ids):
        ratio = max(
            SequenceMatcher(None, name, cid).ratio(), SequenceMatcher(None, name, cid[: len(name)]).ratio()
        )
        if ratio > best_ratio:
            best, best_ratio = cid, ratio
    return best


def base_tip(refs: Refs, branch: str) -> str:
    """The tip of the base branch; a clear error when it does not exist yet."""
    check_ref_name(branch, "base branch")
    sha = refs.value(layout.branch_ref(branch))
    if sha is None:
        if not refs.listing("refs/heads"):
            raise UnknownRevision("the repository has no commits yet: commit the harness first")
        if refs.value(layout.LABELS + branch) is not None:
            raise UnknownRevision(
                f"base branch {branch!r} does not exist ({branch!r} is a label: the base is the branch "
                "a merge lands on)"
            )
        raise UnknownRevision(
            f"base branch {branch!r} does not exist: create it or set [harness] base in harnessgit.toml"
        )
    return sha


def candidate_of(objects: Objects, sha: str) -> str | None:
    """The candidate id recorded in a commit's trailer, if it is a candidate commit."""
    info = objects.commit_info(sha)
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
    info = store.objects.commit_info(sha)
    return recorded(store, info.parents[1] if len(info.parents) > 1 else sha)


def recorded(store: Store, sha: str) -> Provenance:
    """The proposal and evidence recorded on ``sha`` itself (a merge's are on the
    candidate it merged: `provenance` looks there)."""
    records = store.notes.records_on(layout.NOTES_EVIDENCE, sha)
    proposal = next((r for r in records if isinstance(r, ProposalRecord)), None)
    candidate = (proposal.candidate if proposal else None) or candidate_of(store.objects, sha)
    return Provenance(sha, candidate, proposal, [r for r in records if isinstance(r, EvidenceRecord)])


def proposed_on(store: Store, origin: Provenance) -> str | None:
    """The commit an edit was made on: its proposal's parent, else its first parent."""
    if origin.proposal is not None:
        return origin.proposal.parent
    parents = store.objects.commit_info(origin.commit).parents
    return parents[0] if parents else None


def proposal_chain(store: Store, tip: str, base: str) -> list[Provenance]:
    """The edits ``tip`` brings to ``base``, oldest first: ``tip``, the commit it was
    proposed on, and so on back through proposal parents (a commit without a proposal
    record: its first parent) to the first commit ``base`` already holds.

    A candidate proposed on another candidate (``propose --parent``, every evolve
    iteration whose parent is a frontier member) holds that one's edit too, so merging
    it lands the whole chain (issue 12: a merge of 7 proposals was credited to the last).
    """
    chain: list[Provenance] = []
    sha: str | None = tip
    while sha is not None and sha != base:
        chain.append(recorded(store, sha))
        sha = chain[-1].proposal.parent if chain[-1].proposal else None
    if sha == base:  # proposals all the way down to base: each descends from it
        return chain[::-1]
    # A commit without a proposal, or a chain begun further back: ask git what base
    # holds (only now, as that costs a git process).
    outside = set(store.history.first_parent_chain(tip, stop=base))
    chain, sha = [], tip
    while sha is not None and sha in outside:
        chain.append(recorded(store, sha))
        sha = proposed_on(store, chain[-1])
    return chain[::-1]


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


def label_moves(notes: Notes, name: str | None = None) -> list[LabelRecord]:
    """Every recorded label move, oldest first."""
    moves = [
        record
        for records in notes.records(layout.NOTES_LABELS).values()
        for record in records
        if isinstance(record, LabelRecord) and (name is None or record.name == name)
    ]
    return sorted(moves, key=lambda record: record.ts)
