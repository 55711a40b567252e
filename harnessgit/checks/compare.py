"""Comparing two versions of a text line by line (difflib): what survived, what changed.

Blank lines are left out on both sides, so adding or removing blank lines is
neither an edit nor lost content, and trailing whitespace is ignored.

What counts as changed is the words: inside each changed region, a line is changed
only when its letters and digits are not the ones the other side has there (a line
without any, such as a fence or a brace, goes with the line next to it). So a
formatter's pass (prettier re-wrapping a paragraph, `*` -> `-` bullets, `*em*` ->
`_em_`, table padding, re-indented code, quotes) changes no line, while a rewrite
changes every line it rewords. Lines outside changed regions are never looked at
again, so an ordinary edit costs what difflib's line diff costs.
"""

from __future__ import annotations

import difflib
import re
from typing import NamedTuple

# difflib's "autojunk" treats lines that make up over 1% of a long text as junk,
# which keeps matching fast but splits real matches around them. Exact matching
# is affordable up to this many lines a side; above it, speed wins.
_EXACT_UP_TO = 5000
# git diff's default: three lines of context, so changes closer than six lines
# share one hunk (difflib's grouping follows the same rule).
CONTEXT = 3
# Letters and digits: what a formatter leaves alone (underscore is emphasis, not a letter).
_WORD = re.compile(r"[^\W_]+")


def words(line: str) -> list[str]:
    """The words of a line: its runs of letters and digits, markup and spacing aside."""
    return _WORD.findall(line)


class Comparison(NamedTuple):
    """How much of a file's non-blank lines one change kept, added and removed."""

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
    gone, came = [False] * len(a), [False] * len(b)
    hunks = 0
    # Words are compared over each of difflib's hunks (changes and the few equal lines
    # between them), not change by change: a formatter joins and splits lines, and a
    # line such as `}` that matches by chance must not cut a re-wrapped block in two.
    # A hunk counts when a word in it changed: never more hunks than git shows.
    for group in matcher.get_grouped_opcodes(CONTEXT):
        changes = [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in group if tag != "equal"]
        if not changes:
            continue
        (i0, _i, j0, _j), (_k, i9, _l, j9) = changes[0], changes[-1]
        old_gone, new_came = _reworded(a[i0:i9], b[j0:j9])
        hunks += any(old_gone) or any(new_came)
        for i1, i2, j1, j2 in changes:
            gone[i1:i2] = old_gone[i1 - i0 : i2 - i0]
            came[j1:j2] = new_came[j1 - j0 : j2 - j0]
    return Comparison(old_lines=len(a), kept_lines=kept, added=sum(came), removed=sum(gone), hunks=hunks)


def _reworded(old: list[str], new: list[str]) -> tuple[list[bool], list[bool]]:
    """Which lines of a changed region changed their words (the rest is formatting)."""
    old_words = [(word, index) for index, line in enumerate(old) for word in words(line)]
    new_words = [(word, index) for index, line in enumerate(new) for word in words(line)]
    gone, came = [False] * len(old), [False] * len(new)
    a, b = [word for word, _ in old_words], [word for word, _ in new_words]
    if a == b:  # a formatter's pass: the cheap, common answer
        return gone, came
    # The words a formatter's pass left alone around a real change need no matching:
    # only what lies between the common start and the common end is compared.
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    a, b = a[start : len(a) - end], b[start : len(b) - end]
    exact = len(a) <= _EXACT_UP_TO and len(b) <= _EXACT_UP_TO
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=not exact).get_opcodes():
        if tag != "equal":
            for _word, index in old_words[start + i1 : start + i2]:
                gone[index] = True
            for _word, index in new_words[start + j1 : start + j2]:
                came[index] = True
    old_worded = {index for _word, index in old_words}
    new_worded = {index for _word, index in new_words}
    return _with_wordless(gone, old_worded), _with_wordless(came, new_worded)


def _with_wordless(changed: list[bool], worded: set[int]) -> list[bool]:
    """A line without words (a fence, a brace, a rule) changed with the worded line
    next to it, before or after: a deleted code block takes its fences and braces along,
    while a formatter's `}` -> `},` beside unchanged lines stays formatting."""
    out = list(changed)
    before = after = False
    for index in range(len(changed)):
        if index in worded:
            before = changed[index]
        elif before:
            out[index] = True
    for index in range(len(changed) - 1, -1, -1):
        if index in worded:
            after = changed[index]
        elif after:
            out[index] = True
    return out
