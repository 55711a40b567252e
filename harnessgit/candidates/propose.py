"""Proposing an edit: exactly one commit on a new candidate branch.

The edit comes from the working tree, from files, or from a patch; it is built
in the object database against its parent, so the user's working tree, index
and HEAD never change. The candidate branch, its proposal record, its evidence
and the pin that keeps it through `git gc` land in one ref transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from harnessgit import layout
from harnessgit.candidates.checked import judge_proposal
from harnessgit.candidates.edits import (
    Edit,
    check_harness_text,
    edit_from_files,
    edit_from_patch,
    edit_from_worktree,
)
from harnessgit.checks import check_change
from harnessgit.config import Config
from harnessgit.errors import CarryConflict, ConcurrentUpdate, ProposalError
from harnessgit.evidence import encode_evidence
from harnessgit.names import new_candidate_id
from harnessgit.records import EvidenceRecord, ProposalRecord, Record, RetireRecord
from harnessgit.scrub import Scrubber
from harnessgit.store import Blob, Store, Transaction
from harnessgit.targets import base_tip, resolve

if TYPE_CHECKING:  # Python 3.11's typing.Unpack; only read by type checkers
    from typing_extensions import Unpack

SUBJECT_WIDTH = 72
_ID_ATTEMPTS = 5


@dataclass(frozen=True)
class Proposal:
    candidate: str
    commit: str
    parent: str
    components: list[str]
    ref: str
    ignored: list[str] = field(default_factory=list)  # changed non-harness files left out
    # The [harness] paths globs, for the text that says why files were left out.
    harness_paths: list[str] = field(default_factory=list, metadata={"json": False})


# What `propose` accepts as the edit; see its docstring.
EditSource = Edit | Mapping[str, str | bytes] | bytes | None


@dataclass(frozen=True)
class CandidateRequest:
    """What a candidate's proposal record says besides its edit and parent."""

    rationale: str = ""  # why: the commit message and the record carry it, scrubbed
    evidence: list[Any] | None = None  # JSON values, kept scrubbed in one blob
    proposer: str | None = None  # who proposed it (a proposer's name, "gepa", ...)
    source: str | None = None  # the way it came in ("api", "evolve", ...); None: the edit's
    # A commit: the candidate is a merge of its parent and this one (a two-parent
    # commit, the edit taken relative to the parent).
    other_parent: str | None = None
    # A reason: the candidate goes straight to the archive with a retire record (a
    # proposal its optimiser rejected).
    archived: str | None = None


class CandidateOptions(TypedDict, total=False):
    """`CandidateRequest`'s fields as `propose`'s keyword arguments (a candidate proposed
    alone is never archived at birth: no ``archived``)."""

    rationale: str
    evidence: list[Any] | None
    proposer: str | None
    source: str | None
    other_parent: str | None


def propose(
    store: Store,
    config: Config,
    edit_source: EditSource = None,
    *,
    parent: str | None = None,
    **about: Unpack[CandidateOptions],
) -> Proposal:
    """Record one edit as a candidate on ``parent`` (default: the base branch tip).

    ``edit_source`` is a mapping of component path -> new text (the Python API,
    and ``--file``), a unified diff as bytes (``--patch``), an `Edit`, or None for
    the working tree's uncommitted changes to harness files. ``about``: the
    `CandidateRequest` (rationale, evidence, proposer, source, other_parent) as keywords.
    """
    request = CandidateRequest(**about)
    parent_sha = resolve(store.refs, parent).sha if parent else base_tip(store.refs, config.harness.base)
    edit = _edit_of(store, config, edit_source, parent_sha, store.objects.commit_info(parent_sha).tree)
    for _attempt in range(_ID_ATTEMPTS):
        txn = Transaction("propose")
        proposal = stage_proposal(store, config, txn, edit, parent_sha, request)
        txn.reason = f"propose {proposal.candidate}"
        try:
            store.refs.commit(txn)
        except ConcurrentUpdate:
            continue  # the id was taken meanwhile: draw another
        return proposal
    raise ProposalError("could not find a free candidate id")  # pragma: no cover


def stage_proposal(
    store: Store,
    config: Config,
    txn: Transaction,
    edit: Edit,
    parent_sha: str,
    request: CandidateRequest = CandidateRequest(),
    *,
    scrubber: Scrubber | None = None,
) -> Proposal:
    """Write the candidate's commit and evidence blob, and add its branch, proposal
    and evidence records to ``txn`` under a fresh id: `propose`, one transaction per
    candidate, and a recorder that lands many candidates in one transaction (the GEPA
    recorder, one per iteration) share it. ``scrubber``: the configuration's, made once
    by a caller that stages many candidates (making it reads the environment: 1 ms each)."""
    evidence, other_parent, archived = request.evidence, request.other_parent, request.archived
    parent_tree = store.objects.commit_info(parent_sha).tree
    tree = store.objects.edit_tree(parent_tree, edit.changes)
    if tree == parent_tree:
        raise ProposalError(f"the edit changes nothing in {parent_sha[:12]}")
    components = sorted(edit.changes)
    for path in components:
        check_harness_text(store.objects, config, path, edit.changes[path])
    # The rationale comes from a proposer or a user (the commit message and the
    # proposal record both carry it): scrubbed like the evidence.
    scrubber = scrubber or config.scrub.scrubber(config.proposer)
    rationale = scrubber.text(request.rationale)
    proposer = scrubber.text(request.proposer) if request.proposer else request.proposer
    records: list[Record] = [_evidence_record(store, scrubber, evidence)] if evidence else []
    candidate = new_candidate_id()
    parents = [parent_sha, other_parent] if other_parent else [parent_sha]
    commit = store.objects.write_commit(tree, parents, _message(rationale, components, candidate))
    proposal = ProposalRecord(
        ts=store.clock(),
        candidate=candidate,
        parent=parent_sha,
        components=components,
        rationale=rationale,
        source=request.source or edit.source,
        proposer=proposer,
        other_parent=other_parent,
        checks=judge_proposal(store, config, parent_sha, commit, check_change) if archived is None else None,
    )
    if archived is None:
        txn.create(layout.candidate_ref(candidate), commit)
    else:  # never live: archived at birth, with the reason its optimiser gave
        txn.create(layout.archive_ref(candidate), commit)
        detail = scrubber.text(archived)
        records.append(
            RetireRecord(
                ts=store.clock(), candidate=candidate, commit=commit, reason="rejected", detail=detail
            )
        )
    txn.append(layout.NOTES_EVIDENCE, commit, [proposal, *records])
    for record in records:
        if isinstance(record, EvidenceRecord):
            txn.keep(record.blob)  # the evidence blob, kept through `git gc`
    return Proposal(
        candidate,
        commit,
        parent_sha,
        components,
        layout.candidate_ref(candidate),
        edit.ignored,
        list(config.harness.paths),
    )


def _edit_of(
    store: Store,
    config: Config,
    edit_source: EditSource,
    parent_sha: str,
    parent_tree: str,
) -> Edit:
    if isinstance(edit_source, Edit):
        return edit_source
    if isinstance(edit_source, bytes):
        return edit_from_patch(store, config, parent_tree, edit_source)
    if edit_source is not None:
        return edit_from_files(store.objects, config, parent_tree, edit_source)
    return edit_from_worktree(store, config, parent_sha)


def _evidence_record(store: Store, scrubber: Scrubber, evidence: list[Any]) -> EvidenceRecord:
    """Write the evidence, scrubbed of secrets, as one blob; the record that points at it."""
    data, kinds = encode_evidence(evidence, scrubber)
    return EvidenceRecord(
        ts=store.clock(),
        blob=store.objects.write_blob(data),
        items=len(evidence),
        bytes=len(data),
        item_kinds=kinds,
    )


def _message(rationale: str, components: list[str], candidate: str) -> str:
    text = rationale.strip()
    if text:
        subject, _, body = text.partition("\n")
        if len(subject) > SUBJECT_WIDTH:
            subject, body = subject[: SUBJECT_WIDTH - 3] + "...", text
    else:
        subject = "Edit " + ", ".join(components)
        if len(subject) > SUBJECT_WIDTH:
            subject = f"Edit {len(components)} harness files"
        body = ""
    parts = [subject]
    if body.strip():
        parts.append(body.strip())
    parts.append(f"{layout.CANDIDATE_TRAILER}: {candidate}")
    return "\n\n".join(parts)


def rebase(store: Store, config: Config, name: str, onto: str) -> Proposal:
    """A new candidate carrying ``name``'s edit onto ``onto`` (a branch or revision).

    The gate merges only candidates that descend from the base tip (the tree
    evaluated must be the tree merged), so an edit proposed on an older tip is
    carried over: every harness file it changed since the merge base is merged
    three ways with the tip's version. A conflict is an error.
    """
    target = resolve(store.refs, name)
    tip = resolve(store.refs, onto).sha
    base = store.history.merge_base(tip, target.sha)
    if base is None:
        raise ProposalError(f"{name} and {onto} share no history")
    trees = {
        which: store.objects.commit_info(sha).tree
        for which, sha in (("base", base), ("tip", tip), ("cand", target.sha))
    }
    changes: dict[str, Blob | None] = {}
    conflicts: dict[str, str] = {}  # every conflicting file and why, so that the error names them all
    for path in store.history.changed_paths(trees["base"], trees["cand"]):
        old, ours, theirs = (store.objects.entry_at(trees[which], path) for which in ("base", "tip", "cand"))
        if ours in (old, theirs):
            changes[path] = Blob(theirs.sha, theirs.mode) if theirs else None
            continue
        if theirs is None or ours is None:
            conflicts[path] = f"{onto} changed a file that {name} deletes (or the reverse)"
            continue
        merged = store.worktree.merge_text(
            store.objects.read_blob(old.sha) if old else b"",
            store.objects.read_blob(ours.sha),
            store.objects.read_blob(theirs.sha),
        )
        if merged is None:
            conflicts[path] = f"{name}'s edit conflicts with {onto}'s version"
            continue
        changes[path] = Blob(store.objects.write_blob(merged), theirs.mode)
    if conflicts:
        raise CarryConflict("; ".join(f"{path}: {why}" for path, why in conflicts.items()), list(conflicts))
    original = next(
        (
            r
            for r in store.notes.records_on(layout.NOTES_EVIDENCE, target.sha)
            if isinstance(r, ProposalRecord)
        ),
        None,
    )
    why = original.rationale if original else store.objects.commit_info(target.sha).message
    label = target.candidate or target.sha[:12]
    rationale = f"{why.strip()}\n\n(Carried onto {onto} from candidate {label}.)"
    return propose(
        store,
        config,
        Edit(changes, "rebase"),
        parent=tip,
        rationale=rationale,
        proposer=original.proposer if original else None,
    )
