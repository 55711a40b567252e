"""Proposing an edit: exactly one commit on a new candidate branch.

The edit comes from the working tree, from files, or from a patch; it is built
in the object database against its parent, so the user's working tree, index
and HEAD never change. The candidate branch, its proposal record, its evidence
and the pin that keeps it through `git gc` land in one ref transaction.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harnessgit import globs, layout
from harnessgit.config import Config
from harnessgit.confine import leads_out
from harnessgit.errors import CarryConflict, ConcurrentUpdate, ProposalError, UnknownRevision
from harnessgit.evidence import encode_evidence
from harnessgit.names import new_candidate_id
from harnessgit.objects import MODE_EXEC, MODE_FILE, MODE_LINK
from harnessgit.records import EvidenceRecord, ProposalRecord, Record, RetireRecord
from harnessgit.render import plural
from harnessgit.scrub import Scrubber
from harnessgit.store import Blob, Store, Transaction
from harnessgit.targets import base_tip, resolve

SUBJECT_WIDTH = 72
_ID_ATTEMPTS = 5
NAMED_FILES = 3  # files named in a message; the rest are counted


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


@dataclass(frozen=True)
class Edit:
    """What a proposal changes: path -> new blob, or None to delete."""

    changes: dict[str, Blob | None]
    source: str
    ignored: list[str] = field(default_factory=list)


# What `propose` accepts as the edit; see its docstring.
EditSource = Edit | Mapping[str, str | bytes] | bytes | None


def propose(
    store: Store,
    config: Config,
    edit_source: EditSource = None,
    *,
    parent: str | None = None,
    rationale: str = "",
    evidence: list[Any] | None = None,
    proposer: str | None = None,
    source: str | None = None,
    other_parent: str | None = None,
) -> Proposal:
    """Record one edit as a candidate.

    ``edit_source`` is a mapping of component path -> new text (the Python API,
    and ``--file``), a unified diff as bytes (``--patch``), an `Edit`, or None for
    the working tree's uncommitted changes to harness files. ``other_parent`` (a
    commit) makes the candidate a merge of ``parent`` and it: a two-parent commit, the
    edit taken relative to ``parent``.
    """
    parent_sha = resolve(store, parent).sha if parent else base_tip(store, config.harness.base)
    edit = _edit_of(store, config, edit_source, parent_sha, store.commit_info(parent_sha).tree)
    for _attempt in range(_ID_ATTEMPTS):
        txn = Transaction("propose")
        proposal = stage_proposal(
            store,
            config,
            txn,
            edit,
            parent_sha,
            rationale=rationale,
            evidence=evidence,
            proposer=proposer,
            source=source,
            other_parent=other_parent,
        )
        txn.reason = f"propose {proposal.candidate}"
        try:
            store.commit(txn)
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
    *,
    rationale: str = "",
    evidence: list[Any] | None = None,
    proposer: str | None = None,
    source: str | None = None,
    archived: str | None = None,
    other_parent: str | None = None,
) -> Proposal:
    """Write the candidate's commit and evidence blob, and add its branch, proposal
    and evidence records to ``txn`` under a fresh id: `propose`, one transaction per
    candidate, and a recorder that lands many candidates in one transaction (the GEPA
    recorder, one per iteration) share it. ``archived``, a reason: the candidate goes
    straight to the archive with a retire record (a proposal its optimiser rejected).
    ``other_parent``: as for `propose`."""
    parent_tree = store.commit_info(parent_sha).tree
    tree = store.edit_tree(parent_tree, edit.changes)
    if tree == parent_tree:
        raise ProposalError(f"the edit changes nothing in {parent_sha[:12]}")
    components = sorted(edit.changes)
    for path in components:
        _check_harness_text(store, config, path, edit.changes[path])
    # The rationale comes from a proposer or a user (the commit message and the
    # proposal record both carry it): scrubbed like the evidence.
    scrubber = config.scrub.scrubber(config.proposer)
    rationale = scrubber.text(rationale)
    proposer = scrubber.text(proposer) if proposer else proposer
    records: list[Record] = [_evidence_record(store, scrubber, evidence)] if evidence else []
    candidate = new_candidate_id()
    parents = [parent_sha, other_parent] if other_parent else [parent_sha]
    commit = store.write_commit(tree, parents, _message(rationale, components, candidate))
    proposal = ProposalRecord(
        ts=store.clock(),
        candidate=candidate,
        parent=parent_sha,
        components=components,
        rationale=rationale,
        source=source or edit.source,
        proposer=proposer,
        other_parent=other_parent,
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
        return edit_from_files(store, config, parent_tree, edit_source)
    return edit_from_worktree(store, config, parent_sha)


def _evidence_record(store: Store, scrubber: Scrubber, evidence: list[Any]) -> EvidenceRecord:
    """Write the evidence, scrubbed of secrets, as one blob; the record that points at it."""
    data, kinds = encode_evidence(evidence, scrubber)
    return EvidenceRecord(
        ts=store.clock(), blob=store.write_blob(data), items=len(evidence), bytes=len(data), item_kinds=kinds
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


def first_few(paths: list[str]) -> str:
    """The first `NAMED_FILES` paths, and how many more: what a one-line message can hold."""
    rest = len(paths) - NAMED_FILES
    return ", ".join(paths[:NAMED_FILES]) + (f" and {rest} more" if rest > 0 else "")


def normalise_component(path: str) -> str:
    clean = path.replace("\\", "/")
    while clean.startswith("./"):
        clean = clean[2:]
    parts = clean.split("/")
    unsafe = "\0" in clean or "\n" in clean or clean.startswith("/")
    if unsafe or not clean or any(part in ("", ".", "..") for part in parts):
        raise ProposalError(f"{path!r} is not a path inside the repository")
    return clean


def _require_harness(config: Config, path: str) -> None:
    if not globs.matches(path, config.harness.paths):
        raise ProposalError(
            f"{path} is not a harness file (harness.paths = {', '.join(config.harness.paths)})"
        )


def _check_harness_text(store: Store, config: Config, path: str, blob: Blob | None) -> None:
    _require_harness(config, path)
    if blob is None:
        return
    if blob.mode == MODE_LINK:
        raise _not_regular(path, os.fsdecode(store.read_blob(blob.sha)))
    if blob.mode not in (MODE_FILE, MODE_EXEC):
        raise ProposalError(f"{path}: only regular files can be harness files")
    data = store.read_blob(blob.sha)
    if b"\0" in data:
        raise ProposalError(f"{path} is a binary file: harness files must be UTF-8 text")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProposalError(f"{path} is not UTF-8 text (invalid byte at offset {exc.start})") from None


def _mode_in(store: Store, tree: str, path: str) -> str:
    entry = store.entry_at(tree, path)
    return entry.mode if entry is not None and not entry.is_tree else "100644"


def edit_from_files(store: Store, config: Config, parent_tree: str, files: Mapping[str, str | bytes]) -> Edit:
    changes: dict[str, Blob | None] = {}
    for component, text in files.items():
        path = normalise_component(component)
        _require_harness(config, path)
        data = text.encode("utf-8") if isinstance(text, str) else text
        changes[path] = Blob(store.write_blob(data), _mode_in(store, parent_tree, path))
    return Edit(changes, "file")


def edit_from_patch(store: Store, config: Config, parent_tree: str, patch: bytes) -> Edit:
    if not patch.strip():
        raise ProposalError("the patch is empty")
    new_tree = store.apply_patch(parent_tree, patch)
    changes: dict[str, Blob | None] = {}
    for path, status in store.changed_paths(parent_tree, new_tree).items():
        _require_harness(config, path)
        entry = store.entry_at(new_tree, path) if status != "D" else None
        changes[path] = Blob(entry.sha, entry.mode) if entry else None
    return Edit(changes, "patch")


def edit_from_worktree(store: Store, config: Config, parent_sha: str) -> Edit:
    """The working tree's uncommitted changes to harness files, carried onto the parent.

    When the parent is not HEAD, a file the parent also changed is merged three
    ways (HEAD as the base), and a conflict is an error rather than a silent revert.
    """
    try:
        head = store.resolve_commit("HEAD")
    except UnknownRevision:
        raise ProposalError("HEAD has no commit yet: commit the harness first") from None
    changed = store.worktree_changes()
    harness = {path: exists for path, exists in changed.items() if globs.matches(path, config.harness.paths)}
    ignored = sorted(set(changed) - set(harness))
    if not harness:
        hint = (
            f" ([harness] paths = {', '.join(config.harness.paths)}); "
            f"{plural(len(ignored), 'changed file')} left out: {first_few(ignored)}"
            if ignored
            else ""
        )
        raise ProposalError(f"no uncommitted changes to harness files{hint}")
    blobs = _hash_worktree(store, [path for path, exists in harness.items() if exists])
    head_tree = store.commit_info(head).tree
    parent_tree = store.commit_info(parent_sha).tree
    changes: dict[str, Blob | None] = {}
    for path in sorted(harness):
        theirs = blobs.get(path)
        base_entry = store.entry_at(head_tree, path)
        ours_entry = store.entry_at(parent_tree, path)
        if base_entry == ours_entry or parent_sha == head:
            # A committed link now a regular file is a regular file (git commits what is there).
            mode = base_entry.mode if base_entry and base_entry.mode in (MODE_FILE, MODE_EXEC) else MODE_FILE
            changes[path] = Blob(theirs, mode) if theirs else None
            continue
        changes[path] = _merge_onto_parent(store, path, base_entry, ours_entry, theirs)
    return Edit(changes, "worktree", ignored)


def _hash_worktree(store: Store, paths: list[str]) -> dict[str, str]:
    """Blob ids of working-tree harness files, never read through a symbolic link.

    `git hash-object` follows links: a harness file linked to ~/.aws/credentials was
    committed as a regular file holding the secret (issue 15, defect 9). So every path
    is looked at before any is hashed. git would commit a link as a link (mode 120000,
    its target as the blob), and harness files must be regular files (the checks never
    follow links), so a link is refused: the one leading out of the repository says so.
    """
    for path in paths:
        full = store.root / path
        out = leads_out(store.root, full)
        if full.is_symlink():
            target = os.readlink(full)
            if out is not None:
                raise ProposalError(
                    f"{path} is a symbolic link out of the repository (to {target}): "
                    "harness files must be regular files inside it"
                )
            raise _not_regular(path, target)
        if out is not None:  # a directory on the way is a link (git does not list such paths)
            raise ProposalError(f"{path} leads out of the repository through a symbolic link (to {out})")
    return store.hash_worktree_files(paths)


def _not_regular(path: str, target: str) -> ProposalError:
    return ProposalError(f"{path} is a symbolic link (to {target}): only regular files can be harness files")


def _merge_onto_parent(store: Store, path: str, base: Any, ours: Any, theirs: str | None) -> Blob | None:
    if theirs is None or ours is None:
        raise ProposalError(
            f"{path}: the parent candidate changed this file too; check the parent out and edit it there"
        )
    merged = store.merge_text(
        store.read_blob(base.sha) if base else b"", store.read_blob(ours.sha), store.read_blob(theirs)
    )
    if merged is None:
        raise ProposalError(
            f"{path}: your change conflicts with the parent's version; check the parent out and edit it there"
        )
    return Blob(store.write_blob(merged), ours.mode)


def rebase(store: Store, config: Config, name: str, onto: str) -> Proposal:
    """A new candidate carrying ``name``'s edit onto ``onto`` (a branch or revision).

    The gate merges only candidates that descend from the base tip (the tree
    evaluated must be the tree merged), so an edit proposed on an older tip is
    carried over: every harness file it changed since the merge base is merged
    three ways with the tip's version. A conflict is an error.
    """
    target = resolve(store, name)
    tip = resolve(store, onto).sha
    base = store.merge_base(tip, target.sha)
    if base is None:
        raise ProposalError(f"{name} and {onto} share no history")
    trees = {
        which: store.commit_info(sha).tree
        for which, sha in (("base", base), ("tip", tip), ("cand", target.sha))
    }
    changes: dict[str, Blob | None] = {}
    conflicts: dict[str, str] = {}  # every conflicting file and why, so that the error names them all
    for path in store.changed_paths(trees["base"], trees["cand"]):
        old, ours, theirs = (store.entry_at(trees[which], path) for which in ("base", "tip", "cand"))
        if ours in (old, theirs):
            changes[path] = Blob(theirs.sha, theirs.mode) if theirs else None
            continue
        if theirs is None or ours is None:
            conflicts[path] = f"{onto} changed a file that {name} deletes (or the reverse)"
            continue
        merged = store.merge_text(
            store.read_blob(old.sha) if old else b"", store.read_blob(ours.sha), store.read_blob(theirs.sha)
        )
        if merged is None:
            conflicts[path] = f"{name}'s edit conflicts with {onto}'s version"
            continue
        changes[path] = Blob(store.write_blob(merged), theirs.mode)
    if conflicts:
        raise CarryConflict("; ".join(f"{path}: {why}" for path, why in conflicts.items()), list(conflicts))
    original = next(
        (r for r in store.notes_on(layout.NOTES_EVIDENCE, target.sha) if isinstance(r, ProposalRecord)), None
    )
    why = original.rationale if original else store.commit_info(target.sha).message
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
