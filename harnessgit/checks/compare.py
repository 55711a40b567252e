"""Comparing two versions of a text line by line (difflib): what survived, what changed.

Blank lines are left out on both sides, so adding or removing blank lines is
neither an edit nor lost content, and trailing whitespace is ignored.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

# difflib's "autojunk" treats lines that make up over 1% of a long text as junk,
# which keeps matching fast but splits real matches around them. Exact matching
# is affordable up to this many lines a side; above it, speed wins.
_EXACT_UP_TO = 5000
# git diff's default: three lines of context, so changes closer than six lines
# share one hunk (difflib's grouping follows the same rule).
CONTEXT = 3


@dataclass(frozen=True)
class Comparison:
    old_lines: int  # non-blank lines before
    kept_lines: int  # of those, unchanged after
    added: int
    removed: int
    hunks: int

    @property
    def kept_share(self) -> float:
        return self.kept_lines / self.old_lines if self.old_lines else 1.0

    @property
    def changed_lines(self) -> int:
        return self.added + self.removed


def _content_lines(text: str) -> list[str]:
    return [stripped for line in text.splitlines() if (stripped := line.rstrip())]


def compare(old: str, new: str) -> Comparison:
    a, b = _content_lines(old), _content_lines(new)
    exact = len(a) <= _EXACT_UP_TO and len(b) <= _EXACT_UP_TO
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=not exact)
    kept = sum(block.size for block in matcher.get_matching_blocks())
    added = removed = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    hunks = sum(1 for _group in matcher.get_grouped_opcodes(CONTEXT)) if (added or removed) else 0
    return Comparison(old_lines=len(a), kept_lines=kept, added=added, removed=removed, hunks=hunks)
