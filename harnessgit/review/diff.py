"""The files a change touches, parsed from git's patch with unidiff.

Pure: patch text and blob sizes in, `FileDiff`s out. The patch comes from
`History.diff_patch` (``git -c core.quotePath=false diff --no-color --no-ext-diff -M``
with fixed prefixes), so a user's ``color.ui=always``, renames, binary files and
non-ASCII names all arrive in one shape. git still C-quotes a name that holds a
double quote, a backslash or a control character (``"b/say \\"hi\\".md"``), and
unidiff keeps the quotes, so names are unquoted here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

FileStatus = Literal["added", "deleted", "modified", "renamed"]

# git's quote_c_style escapes (quote.c); anything else after a backslash is octal.
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


@dataclass(frozen=True, kw_only=True)
class FileDiff:
    path: str
    old_path: str | None  # the name before a rename
    status: FileStatus
    binary: bool
    added: int | None  # None for a binary file
    removed: int | None
    size_before: int | None = None  # bytes; None when the file did not exist
    size_after: int | None = None
    harness: bool = True  # under [harness] paths
    evaluator: bool = False  # outside the harness and one of the evaluator's files (its fingerprint's)
    patch: str = ""  # this file's part of the patch
    # A harness file's text, as the checks read it: None when absent on that side, not
    # UTF-8 text, over [checks] max_file_bytes, or not a harness file.
    chars_before: int | None = None
    chars_after: int | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None

    def weight(self) -> tuple[int, int]:
        """How much the file changed, for ordering: lines touched, then characters."""
        lines = (self.added or 0) + (self.removed or 0)
        return lines, abs((self.chars_after or 0) - (self.chars_before or 0))


@dataclass(frozen=True, kw_only=True)
class ChangeTotals:
    """A change as a whole, before its files (issue 27: a release sync touching 116
    files showed a 116-row table and no total; the maintainers' own subjects say
    "-1,911 tokens"). Characters and tokens add up the harness files whose text was read
    on each side they exist."""

    files: int
    harness_files: int
    added: int  # lines, over every text file
    removed: int
    chars_before: int
    chars_after: int
    tokens_before: int
    tokens_after: int
    tokenizer: str  # how tokens were counted (an estimate says so)
    unread: int = 0  # harness files whose text could not be read (binary, too large)


def change_totals(files: list[FileDiff], tokenizer: str) -> ChangeTotals:
    harness = [f for f in files if f.harness]
    unread = [
        f
        for f in harness
        if (f.size_before is not None and f.chars_before is None)
        or (f.size_after is not None and f.chars_after is None)
    ]
    return ChangeTotals(
        files=len(files),
        harness_files=len(harness),
        added=sum(f.added or 0 for f in files),
        removed=sum(f.removed or 0 for f in files),
        chars_before=sum(f.chars_before or 0 for f in harness),
        chars_after=sum(f.chars_after or 0 for f in harness),
        tokens_before=sum(f.tokens_before or 0 for f in harness),
        tokens_after=sum(f.tokens_after or 0 for f in harness),
        tokenizer=tokenizer,
        unread=len(unread),
    )


def largest_first(files: list[FileDiff]) -> list[FileDiff]:
    """The files that matter first: the most lines touched, then the most characters moved."""
    return sorted(files, key=lambda f: (-f.weight()[0], -f.weight()[1], f.path))


def unquote_path(name: str) -> str:
    """A name as git printed it, without its C quoting and its a/ or b/ prefix."""
    if len(name) >= 2 and name.startswith('"') and name.endswith('"'):
        raw = bytearray()
        body = name[1:-1]
        i = 0
        while i < len(body):
            char = body[i]
            if char != "\\" or i + 1 == len(body):
                raw += char.encode("utf-8", "surrogateescape")
                i += 1
                continue
            code = body[i + 1]
            if code in _ESCAPES:
                raw.append(_ESCAPES[code])
                i += 2
            else:  # \ooo: one byte of a name git could not print as is
                raw.append(int(body[i + 1 : i + 4], 8))
                i += 4
        name = raw.decode("utf-8", "surrogateescape")
    if name.startswith(("a/", "b/")):
        return name[2:]
    return name


def parse_patch(text: str) -> list[FileDiff]:
    """One `FileDiff` per file of a git patch, in the patch's order (sizes not filled in)."""
    from unidiff.patch import PatchSet

    patches = PatchSet(text)
    # Each file's own text as git printed it (unidiff re-renders hunk headers, "-1"
    # as "-1,1"). A line at column 0 that starts a file is always "diff --git ":
    # inside a hunk every line starts with " ", "+", "-" or "\\".
    chunks = [chunk for chunk in re.split(r"(?m)^(?=diff --git )", text) if chunk]
    files = []
    for number, patched in enumerate(patches):
        source = unquote_path(patched.source_file)
        target = unquote_path(patched.target_file)
        if patched.is_added_file:
            status: FileStatus = "added"
            path, old_path = target, None
        elif patched.is_removed_file:
            status, path, old_path = "deleted", source, None
        elif patched.is_rename or source != target:
            status, path, old_path = "renamed", target, source
        else:
            status, path, old_path = "modified", target, None
        binary = bool(patched.is_binary_file)
        files.append(
            FileDiff(
                path=path,
                old_path=old_path,
                status=status,
                binary=binary,
                added=None if binary else patched.added,
                removed=None if binary else patched.removed,
                patch=chunks[number] if len(chunks) == len(patches) else str(patched),
            )
        )
    return files
