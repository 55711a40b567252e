"""What a change touches, as git's raw diff says it: the records `Store.history.diff_raw`
and `first_parent_changes` parse. NUL-separated, so any file name survives."""

from __future__ import annotations

from typing import NamedTuple

# Plumbing-stable raw diffs: no colour, no external diff, no renames limit surprises,
# paths relative to the repository root whatever diff.relative says.
RAW_DIFF = [
    "-c",
    "core.quotePath=false",
    "diff",
    "--raw",
    "-z",
    "-M",
    "--no-abbrev",
    "--no-color",
    "--no-ext-diff",
    "--no-relative",
]


class Side(NamedTuple):
    """One side of a changed path: its mode and blob id. The id is ZERO for a
    working-tree file that git has not hashed (read it from disk)."""

    mode: str
    sha: str


class RawChange(NamedTuple):
    """One file's change between two sides, as `git diff --raw` gives it."""

    status: str  # A added, M modified, D deleted, R renamed, T type changed
    path: str
    old: Side | None  # None when added
    new: Side | None  # None when deleted
    old_path: str | None = None  # the previous name of a renamed file


def parse_raw_diff(raw: bytes) -> list[RawChange]:
    """``git diff --raw -z`` output: ``:old_mode new_mode old_sha new_sha status\\0path\\0[path\\0]``."""
    fields = raw.split(b"\0")
    changes = []
    i = 0
    while i < len(fields) and fields[i].startswith(b":"):
        change, i = raw_record(fields, i)
        changes.append(change)
    return changes


def raw_record(fields: list[bytes], i: int) -> tuple[RawChange, int]:
    """The raw-diff record at ``fields[i]`` (its ``:modes ids status`` field, then one
    path, or two for a rename or copy) and the index of the field after it."""
    old_mode, new_mode, old_sha, new_sha, status = fields[i][1:].decode().split()
    code = status[0]
    first = fields[i + 1].decode("utf-8", "surrogateescape")
    i += 2
    old_path = None
    path = first
    if code in "RC":
        path = fields[i].decode("utf-8", "surrogateescape")
        old_path = first if code == "R" else None
        i += 1
    old = None if code in "AC" or old_mode == "000000" else Side(old_mode, old_sha)
    new = None if code == "D" or new_mode == "000000" else Side(new_mode, new_sha)
    return RawChange("A" if code == "C" else code, path, old, new, old_path), i
