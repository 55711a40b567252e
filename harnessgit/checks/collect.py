"""Building `FileVersion`s from a repository: the git-facing half of the checks.

The new side of a change is a commit or tree, the index (what pre-commit checks)
or the working tree; the old side is a commit or tree, or nothing (every file is
new). Only harness files are collected: those matching ``[harness] paths`` or a
``[checks.kinds]`` glob. Files over ``[checks] max_file_bytes`` are sized, never
read, so memory stays bounded whatever a repository holds.

The change's other files (any path it adds, modifies or renames, harness or not) are
not read unless asked for: `Collected.others` reads them when a harness file shrank
enough to be a collapse, to see whether its content moved there.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, NamedTuple

from harnessgit import globs
from harnessgit.check_findings import Content, FileVersion, Finding, failure
from harnessgit.checkconfig import CheckSections
from harnessgit.checkconfig.folders import SKILL_FILE
from harnessgit.errors import HarnessgitError
from harnessgit.names import check_revision
from harnessgit.objects import ZERO
from harnessgit.readstore import Repository
from harnessgit.readstore.changes import RawChange, Side
from harnessgit.render import listing, plural, short

Source = Literal["tree", "index", "worktree"]
_REGULAR = ("100644", "100755")


class _Ref(NamedTuple):
    """Where one side of a file is: a blob, or a path in the working tree."""

    sha: str | None = None
    disk: str | None = None


@dataclass
class Collected:
    """The harness files of one change, read, with what was noted or left unread."""

    versions: list[FileVersion] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    links: set[str] = field(default_factory=set)  # links and submodules: noted, never read
    missing: list[tuple[str, str]] = field(default_factory=list)  # named files not there, and where
    # The change's files outside ``versions``, read when called (`core.check_files`' others).
    others: Callable[[], list[FileVersion]] | None = None
    # The folders of ``versions``' files that hold a SKILL.md on the new side ("": the root).
    skill_folders: set[str] = field(default_factory=set)


def skipped_note(skipped: list[str]) -> list[str]:
    """The named files left out, by name: a hook passes every staged file."""
    if not skipped:
        return []
    return [f"skipped {plural(len(skipped), 'file')} outside the harness paths: {listing(skipped, 10)}"]


def missing_file(path: str, where: str) -> Finding:
    return failure(
        path,
        "format",
        "file",
        "missing",
        "a file",
        f"no such file {where}",
        "check the name; the other files were checked",
    )


def with_references(store: Repository, collected: Collected, commit: str, max_bytes: int) -> Collected:
    """``collected`` with each file's content at ``commit`` (for a renamed file, at its
    old path when the new one was not there), for cumulative growth."""
    paths = {path for v in collected.versions for path in (v.path, v.old_path) if path is not None}
    entries = {
        path: entry
        for path, entry in store.objects.entries_at(commit, sorted(paths)).items()
        if entry.mode in _REGULAR
    }
    contents = _read(store, [_Ref(sha=entry.sha) for entry in entries.values()], max_bytes)
    versions = []
    for version in collected.versions:
        entry = entries.get(version.path) or (entries.get(version.old_path) if version.old_path else None)
        reference = contents[_Ref(sha=entry.sha)] if entry else None
        versions.append(replace(version, reference=reference))
    return replace(collected, versions=versions)


def is_harness(path: str, config: CheckSections) -> bool:
    return globs.matches(path, config.harness.paths) or globs.matches(path, config.checks.globs())


def collect(
    store: Repository,
    config: CheckSections,
    old: str | None,
    source: Source,
    new: str | None = None,
    *,
    paths: list[str] | None = None,
    all_files: bool = False,
) -> Collected:
    """The harness files changed from ``old`` (None: the empty tree) to ``new``
    (a commit or tree when ``source`` is "tree"), the index or the working tree;
    with ``paths``, exactly those files, changed or not; with ``all_files``, every
    harness file on the new side."""
    # Revisions reach git as arguments: never as options or ranges (docs/design.md, "Writing safely").
    for revision in (old, new):
        if revision is not None:
            check_revision(revision)
    base = old or store.objects.empty_tree()
    if source == "tree":
        if new is None:
            raise HarnessgitError("collect: a tree source needs a new commit or tree")
        changes = store.history.diff_raw(base, new)
    else:
        changes = store.history.diff_raw(base, cached=source == "index")
    if source == "worktree":
        untracked = store.worktree.untracked_files(None if all_files else paths)
        changes += [RawChange("A", path, None, Side("100644", ZERO)) for path in untracked]
    by_path = {change.path: change for change in changes}
    out = Collected()
    if paths is not None:
        wanted = list(dict.fromkeys(paths))
    elif all_files:
        wanted = sorted(_all_files(store, source, new, by_path))
    else:
        wanted = sorted(by_path)
    selected = [path for path in wanted if _selected(path, by_path.get(path), config)]
    chosen = set(selected)
    out.others = _other_files(
        store,
        [change for path, change in by_path.items() if path not in chosen],
        config.checks.max_file_bytes,
    )
    if paths is not None:
        out.notes += skipped_note([path for path in wanted if path not in selected])
    unchanged = _unchanged_refs(store, source, new, [path for path in selected if path not in by_path], out)
    pairs: list[tuple[str, str | None, _Ref | None, _Ref | None]] = []
    for path in selected:
        change = by_path.get(path)
        if change is None:
            if path in out.links:
                continue
            ref = unchanged.get(path)
            if ref is None:
                # A finding, not an abort: the other named files are still checked.
                where = {"tree": f"in {short(new)}", "index": "in the index", "worktree": "here"}[source]
                out.missing.append((path, where))
                continue
            pairs.append((path, None, ref, ref))
            continue
        old_ref = _blob_ref(path, change.old, out) if change.old else None
        new_ref = _new_ref(store, path, change.new, out) if change.new else None
        if (change.old and old_ref is None) or (change.new and new_ref is None):
            continue  # a symbolic link or a submodule: noted, not checked
        pairs.append((path, change.old_path, old_ref, new_ref))
    contents = _read(
        store, [ref for _p, _o, *refs in pairs for ref in refs if ref], config.checks.max_file_bytes
    )
    for path, old_path, old_ref, new_ref in pairs:
        out.versions.append(
            FileVersion(
                path=path,
                old_path=old_path,
                old=contents[old_ref] if old_ref else None,
                new=contents[new_ref] if new_ref else None,
            )
        )
    out.skill_folders = _skill_folders(store, source, new, [v.path for v in out.versions])
    return out


def _skill_folders(store: Repository, source: Source, new: str | None, paths: list[str]) -> set[str]:
    """The folders above ``paths`` that hold a SKILL.md on the new side: a skill is its
    folder, so the files beside and below a SKILL.md are its resources."""
    wanted: dict[str, str] = {}
    for path in paths:
        if posixpath.basename(path) == SKILL_FILE:
            continue
        folder = posixpath.dirname(path)
        while True:
            wanted[posixpath.join(folder, SKILL_FILE)] = folder
            if not folder:
                break
            folder = posixpath.dirname(folder)
    if not wanted:
        return set()
    if source == "worktree":
        return {folder for skill, folder in wanted.items() if (store.root / skill).is_file()}
    skills = list(wanted)
    found = (
        store.objects.entries_at(new, skills)
        if source == "tree" and new
        else store.worktree.index_entries(skills)
    )
    return {wanted[skill] for skill in found}


def _other_files(
    store: Repository, changes: list[RawChange], max_bytes: int
) -> Callable[[], list[FileVersion]]:
    """A reader of the files ``changes`` add, modify or rename (regular files only)."""

    def read() -> list[FileVersion]:
        pairs = []
        for change in changes:
            if change.new is None or change.new.mode not in _REGULAR:
                continue
            if change.new.sha == ZERO and (store.root / change.path).is_symlink():
                continue
            old = change.old if change.old is not None and change.old.mode in _REGULAR else None
            new_ref = _Ref(disk=change.path) if change.new.sha == ZERO else _Ref(sha=change.new.sha)
            pairs.append((change, _Ref(sha=old.sha) if old else None, new_ref))
        try:
            contents = _read(store, [ref for _c, *refs in pairs for ref in refs if ref], max_bytes)
        except HarnessgitError:
            return []  # what cannot be read holds nothing moved: a collapse stands
        return [
            FileVersion(
                path=change.path,
                old_path=change.old_path,
                old=contents[old_ref] if old_ref else None,
                new=contents[new_ref],
            )
            for change, old_ref, new_ref in pairs
        ]

    return read


def _selected(path: str, change: RawChange | None, config: CheckSections) -> bool:
    if is_harness(path, config):
        return True
    return change is not None and change.old_path is not None and is_harness(change.old_path, config)


def _all_files(store: Repository, source: Source, new: str | None, changes: dict[str, RawChange]) -> set[str]:
    if source == "tree" and new is not None:
        return set(store.objects.entries_at(new))
    if source == "index":
        return set(store.worktree.index_entries())
    deleted = {path for path, change in changes.items() if change.new is None}
    return (
        set(store.worktree.tracked_files()) | {p for p, c in changes.items() if c.status == "A"}
    ) - deleted


def _unchanged_refs(
    store: Repository, source: Source, new: str | None, paths: list[str], out: Collected
) -> dict[str, _Ref]:
    if not paths:
        return {}
    refs = {}
    if source == "worktree":
        for path in paths:
            if (store.root / path).is_symlink():
                _note_link(path, "a symbolic link", out)
            elif (store.root / path).is_file():
                refs[path] = _Ref(disk=path)
        return refs
    entries = (
        store.objects.entries_at(new, paths)
        if source == "tree" and new
        else store.worktree.index_entries(paths)
    )
    for path, entry in entries.items():
        ref = _blob_ref(path, Side(entry.mode, entry.sha), out)
        if ref is not None:
            refs[path] = ref
    return refs


def _note_link(path: str, what: str, out: Collected) -> None:
    out.notes.append(f"{path} is {what}: not checked")
    out.links.add(path)


def _blob_ref(path: str, side: Side, out: Collected) -> _Ref | None:
    if side.mode not in _REGULAR:
        what = {"120000": "a symbolic link", "160000": "a submodule"}.get(side.mode, "not a file")
        _note_link(path, what, out)
        return None
    return _Ref(sha=side.sha)


def _new_ref(store: Repository, path: str, side: Side, out: Collected) -> _Ref | None:
    if side.sha != ZERO:
        return _blob_ref(path, side, out)
    # A working-tree file git has not hashed: read it from disk, unless it is a link.
    if (store.root / path).is_symlink():
        _note_link(path, "a symbolic link", out)
        return None
    return _Ref(disk=path)


def _read(store: Repository, refs: list[_Ref], max_bytes: int) -> dict[_Ref, Content]:
    contents: dict[_Ref, Content] = {}
    blobs = store.objects.read_small_blobs([ref.sha for ref in refs if ref.sha], max_bytes)
    for ref in refs:
        if ref.sha:
            size, data = blobs[ref.sha]
            contents[ref] = Content.unread(size) if data is None else Content.from_bytes(data)
        elif ref.disk:
            contents[ref] = read_disk(store.root / ref.disk, max_bytes)
    return contents


def read_disk(path: Path, max_bytes: int) -> Content:
    """A working-tree file's content, never reading more than ``max_bytes`` + 1."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise HarnessgitError(f"{path} is not a regular file")
        if info.st_size > max_bytes:
            return Content.unread(info.st_size)
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise HarnessgitError(f"cannot read {path}: {exc.strerror}") from None
    if len(data) > max_bytes:  # it grew while we looked
        return Content.unread(len(data))
    return Content.from_bytes(data)


def disk_versions(root: Path, paths: list[str], config: CheckSections) -> Collected:
    """Files outside any git repository: every file is new, nothing to compare with."""
    out = Collected(notes=["not in a git repository: growth, collapse and edit size need a previous version"])
    selected = [path for path in paths if is_harness(path, config)]
    out.notes += skipped_note([path for path in paths if path not in selected])
    for path in selected:
        if not (root / path).exists():
            out.missing.append((path, "here"))
            continue
        out.versions.append(FileVersion(path=path, new=read_disk(root / path, config.checks.max_file_bytes)))
    return out
