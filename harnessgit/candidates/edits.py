"""What a proposal changes (`Edit`), made from files, a patch or the working tree.

Every path is a harness file ([harness] paths), every blob a regular UTF-8 text file
never read through a symbolic link (issue 15, defect 9); a working-tree edit proposed
on a parent other than HEAD is merged three ways onto it, and a conflict is an error.
Split from `propose`, which turns an `Edit` into a candidate.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harnessgit import globs
from harnessgit.config import Config
from harnessgit.confine import leads_out
from harnessgit.errors import ProposalError, UnknownRevision
from harnessgit.objects import MODE_EXEC, MODE_FILE, MODE_LINK
from harnessgit.render import plural
from harnessgit.store import Blob, Objects, Store

NAMED_FILES = 3  # files named in a message; the rest are counted


@dataclass(frozen=True)
class Edit:
    """What a proposal changes: path -> new blob, or None to delete."""

    changes: dict[str, Blob | None]
    source: str
    ignored: list[str] = field(default_factory=list)


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


def check_harness_text(objects: Objects, config: Config, path: str, blob: Blob | None) -> None:
    _require_harness(config, path)
    if blob is None:
        return
    if blob.mode == MODE_LINK:
        raise _not_regular(path, os.fsdecode(objects.read_blob(blob.sha)))
    if blob.mode not in (MODE_FILE, MODE_EXEC):
        raise ProposalError(f"{path}: only regular files can be harness files")
    data = objects.read_blob(blob.sha) if blob.data is None else blob.data
    if b"\0" in data:
        raise ProposalError(f"{path} is a binary file: harness files must be UTF-8 text")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProposalError(f"{path} is not UTF-8 text (invalid byte at offset {exc.start})") from None


def _mode_in(objects: Objects, tree: str, path: str) -> str:
    entry = objects.entry_at(tree, path)
    return entry.mode if entry is not None and not entry.is_tree else "100644"


def edit_from_files(
    objects: Objects, config: Config, parent_tree: str, files: Mapping[str, str | bytes]
) -> Edit:
    changes: dict[str, Blob | None] = {}
    for component, text in files.items():
        path = normalise_component(component)
        _require_harness(config, path)
        data = text.encode("utf-8") if isinstance(text, str) else text
        changes[path] = Blob(objects.write_blob(data), _mode_in(objects, parent_tree, path), data)
    return Edit(changes, "file")


def edit_from_patch(store: Store, config: Config, parent_tree: str, patch: bytes) -> Edit:
    if not patch.strip():
        raise ProposalError("the patch is empty")
    new_tree = store.worktree.apply_patch(parent_tree, patch)
    changes: dict[str, Blob | None] = {}
    for path, status in store.history.changed_paths(parent_tree, new_tree).items():
        _require_harness(config, path)
        entry = store.objects.entry_at(new_tree, path) if status != "D" else None
        changes[path] = Blob(entry.sha, entry.mode) if entry else None
    return Edit(changes, "patch")


def edit_from_worktree(store: Store, config: Config, parent_sha: str) -> Edit:
    """The working tree's uncommitted changes to harness files, carried onto the parent.

    When the parent is not HEAD, a file the parent also changed is merged three
    ways (HEAD as the base), and a conflict is an error rather than a silent revert.
    """
    try:
        head = store.refs.resolve("HEAD")
    except UnknownRevision:
        raise ProposalError("HEAD has no commit yet: commit the harness first") from None
    changed = store.worktree.changes()
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
    head_tree = store.objects.commit_info(head).tree
    parent_tree = store.objects.commit_info(parent_sha).tree
    changes: dict[str, Blob | None] = {}
    for path in sorted(harness):
        theirs = blobs.get(path)
        base_entry = store.objects.entry_at(head_tree, path)
        ours_entry = store.objects.entry_at(parent_tree, path)
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
    return store.worktree.hash_files(paths)


def _not_regular(path: str, target: str) -> ProposalError:
    return ProposalError(f"{path} is a symbolic link (to {target}): only regular files can be harness files")


def _merge_onto_parent(store: Store, path: str, base: Any, ours: Any, theirs: str | None) -> Blob | None:
    if theirs is None or ours is None:
        raise ProposalError(
            f"{path}: the parent candidate changed this file too; check the parent out and edit it there"
        )
    merged = store.worktree.merge_text(
        store.objects.read_blob(base.sha) if base else b"",
        store.objects.read_blob(ours.sha),
        store.objects.read_blob(theirs),
    )
    if merged is None:
        raise ProposalError(
            f"{path}: your change conflicts with the parent's version; check the parent out and edit it there"
        )
    return Blob(store.objects.write_blob(merged), ours.mode)
