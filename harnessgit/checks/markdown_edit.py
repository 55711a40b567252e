"""Parsing an edited version of a Markdown text from its previous version's Document.

A history audit parses each version of every file (the sections it touched, the rules
that read structure), and most edits change a few lines: `parse_edit` runs
markdown-it's top-level block loop over the new text and takes each top-level block of
the old Document whose lines, and the lines it read past its end, are unchanged. The
result is the Document `markdown.parse` gives (tests/checks/test_markdown_edit.py).
"""

from __future__ import annotations

import re
from bisect import bisect_right

from markdown_it.rules_block import StateBlock
from markdown_it.token import Token

from harnessgit.checks.markdown import Block, Document, Heading, cached, keep, parse, parser, walk
from harnessgit.checks.text import split_frontmatter

# What `parse_edit` leaves to a whole parse: line breaks other than "\n" (splitlines and
# markdown-it count lines differently there) and what markdown-it normalises.
_ODD = re.compile("[\r\x00\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_LOOKAHEAD = 2  # lines from the first non-blank one after a block a rule may read


def parse_edit(old: str, new: str) -> Document:
    """`parse` of ``new``, an edit of ``old``, reusing ``old``'s Document when it was
    parsed: markdown-it's top-level loop runs over ``new``, and where it would start a
    block on a line that starts one of ``old``'s top-level blocks, whose lines and the
    lines that block read past its end (`_read_up_to`) are the same in both, that block
    is taken from ``old``'s Document, moved to its new line, instead of being parsed
    again (a history audit parses each version of every file; most edits change a few
    lines). The same Document as `parse` gives: at the top level, markdown-it starts each
    block afresh from its first line and reads nothing before it
    (tests/checks/test_markdown_edit.py compares the two on random edits)."""
    previous = cached(old)
    front = split_frontmatter(new)
    if (
        cached(new) is not None
        or previous is None
        or previous.body_line != front.body_line
        or _ODD.search(new + old)
    ):
        return parse(new)
    old_lines, new_lines = split_frontmatter(old).body.split("\n"), front.body.split("\n")
    tokens: list[Token] = []
    state = _state(front.body, tokens)
    taken = _Taken(previous, old_lines, new_lines)
    segments = _tokenize(state, taken)
    offset = front.body_line - 1
    text_lines = new.splitlines()
    headings: list[Heading] = []
    blocks: list[Block] = []
    tops: list[tuple[int, int]] = []
    for first, last, top, moved in segments:
        found = walk(tokens[first:last], text_lines, offset) if top is None else taken.moved(top, moved)
        headings += found[0]
        blocks += found[1]
        tops += found[2]
    document = Document(text_lines, _parented(headings), blocks, front.body_line, tuple(tops))
    keep(new, document)
    return document


class _Taken:
    """The top-level blocks of an old version, for `parse_edit` to take up."""

    def __init__(self, previous: Document, old_lines: list[str], new_lines: list[str]) -> None:
        self.previous, self.old_lines, self.new_lines = previous, old_lines, new_lines
        self.tops = previous.tops
        self.starting: dict[str, list[int]] = {}  # a block's first line -> the blocks
        for index, (first, _end) in enumerate(self.tops):
            self.starting.setdefault(old_lines[first], []).append(index)
        self.offset = previous.body_line - 1
        starts = [first for first, _end in self.tops]
        self.headings: dict[int, list[Heading]] = {}
        self.blocks: dict[int, list[Block]] = {}
        for heading in previous.headings:
            self.headings.setdefault(bisect_right(starts, heading.line - 1 - self.offset) - 1, []).append(
                heading
            )
        for block in previous.blocks:
            self.blocks.setdefault(bisect_right(starts, block.line - 1 - self.offset) - 1, []).append(block)

    def at(self, line: int) -> int | None:
        """The old block that starts a block on ``line`` of the new text, if any: one
        whose lines, and those it read past its end, the new text has from there."""
        old, new = self.old_lines, self.new_lines
        for index in self.starting.get(new[line], ()):
            first, end = self.tops[index]
            read = _read_up_to(old, end) + 1
            if read >= len(old):
                if old[first:] == new[line:]:
                    return index
            elif old[first:read] == new[line : line + read - first]:
                return index
        return None

    def moved(self, index: int, lines: int) -> tuple[list[Heading], list[Block], list[tuple[int, int]]]:
        first, end = self.tops[index]
        return (
            [_moved_heading(heading, lines) for heading in self.headings.get(index, [])],
            [_moved_block(block, lines) for block in self.blocks.get(index, [])],
            [(first + lines, end + lines)],
        )


def _state(body: str, tokens: list[Token]) -> StateBlock:
    return StateBlock(body, parser(), {}, tokens)


def _tokenize(state: StateBlock, taken: _Taken) -> list[tuple[int, int, int | None, int]]:
    """markdown-it's top-level block loop (`ParserBlock.tokenize`), taking a block from
    ``taken`` where one starts instead of running the rules: its segments, each
    (first token, end token, None) for a block parsed or (0, 0, old block, lines moved)
    for one taken."""
    rules = state.md.block.ruler.getRules("")
    end = state.lineMax
    empty_before = False
    segments: list[tuple[int, int, int | None, int]] = []
    line = 0
    while line < end:
        state.line = line = state.skipEmptyLines(line)
        if line >= end:
            break
        index = taken.at(line)
        if index is not None:
            moved = line - taken.tops[index][0]
            segments.append((0, 0, index, moved))
            state.line = taken.tops[index][1] + moved
        else:
            mark = len(state.tokens)
            for rule in rules:
                if rule(state, line, end, False):
                    break
            segments.append((mark, len(state.tokens), None, 0))
        state.tight = not empty_before
        line = state.line
        if line - 1 < end and state.isEmpty(line - 1):
            empty_before = True
        if line < end and state.isEmpty(line):
            empty_before = True
            line += 1
            state.line = line
    return segments


def _moved_heading(heading: Heading, lines: int) -> Heading:
    if not lines:
        return heading
    return heading._replace(line=heading.line + lines, end_line=heading.end_line + lines)


def _moved_block(block: Block, lines: int) -> Block:
    if not lines:
        return block
    items = tuple((a + lines, b + lines) for a, b in block.items)
    return block._replace(line=block.line + lines, end_line=block.end_line + lines, items=items)


def _read_up_to(lines: list[str], end: int) -> int:
    """The last line markdown-it may have read to end a block at ``end``: an indented
    code block (in a list item too) reads on over blank lines to the next line that is
    not, and a paragraph asks whether that line and the next open a table."""
    while end < len(lines) and not lines[end].strip():
        end += 1
    return end + _LOOKAHEAD - 1


def _parented(headings: list[Heading]) -> list[Heading]:
    """``headings`` with each one's parent: the nearest heading before it of a lower level."""
    found: list[Heading] = []
    open_headings: list[int] = []
    for heading in headings:
        while open_headings and found[open_headings[-1]].level >= heading.level:
            open_headings.pop()
        parent = open_headings[-1] if open_headings else None
        found.append(heading if heading.parent == parent else heading._replace(parent=parent))
        open_headings.append(len(found) - 1)
    return found
