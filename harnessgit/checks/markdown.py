"""The structure of a Markdown text as CommonMark reads it: headings, sections, blocks.

Harness files are Markdown read by a model, and the rules that judge their structure
(unclosed fences, repeated passages, lost sections) must see it as a Markdown reader
does: a fence opened on a list-item line (``2. ```sh``) or inside a blockquote,
indented code, tables, setext headings. Line rules get these wrong (issue 14: a valid
list-item fence reported as never closed; table header rows and quoted code reported as
repeats), so the text is parsed with markdown-it-py, a maintained CommonMark parser
(with the GitHub table extension), and this module turns its tokens into what the
rules need, each with 1-based line numbers in the whole file.

markdown-it-py is imported on the first parse, not with this module: `harnessgit check`
on a file that is not Markdown (a tool's JSON) does not pay for it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from harnessgit.checks.text import split_frontmatter

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock
    from markdown_it.token import Token

BlockKind = Literal["paragraph", "fence", "code", "table", "html"]

# "## 1. Setup", "## Step 2: Setup", "## 2) Setup", "## A. Setup": numbering is not content.
_NUMBERING = re.compile(
    r"^(?:(?:step|part|phase|section|stage)\s+(?:\d+(?:\.\d+)*|[a-z])[.):]?|(?:\d+(?:\.\d+)*|[a-z])[.):])\s+",
    re.I,
)
_MARKUP = str.maketrans("", "", "*_`")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str  # as written, without the # marks: "Output *format*"
    line: int  # 1-based
    parent: int | None  # index of the enclosing heading (lower level) in Document.headings
    end_line: int = 0  # its last line (a setext heading's underline); 0: ``line``

    @property
    def key(self) -> str:
        """What the heading says: words only, lowercase, numbering and emphasis dropped."""
        return heading_key(self.text)

    @property
    def words(self) -> str:
        """The heading as a reader tells it apart: ``Step 1: Setup`` is not ``Step 2: Setup``."""
        return " ".join(self.text.translate(_MARKUP).split()).lower().rstrip(":")


@dataclass(frozen=True)
class Block:
    kind: BlockKind
    line: int  # 1-based, first line
    end_line: int  # 1-based, last line (a fence's closing line included)
    text: str  # a paragraph's inline source, a code block's content, an HTML block's source
    quoted: bool = False  # inside a blockquote
    in_list: bool = False  # inside a list item
    # The list items it is in, outermost first, each as (its list's line, its own line):
    # two blocks in sibling items of one list are parallel, like the steps of a procedure.
    items: tuple[tuple[int, int], ...] = ()
    info: str = ""  # a fence's info string
    closed: bool = True  # a fence ended by its closing line (not by the end of its container)
    opener: str = ""  # a fence's opening line as written


@dataclass(frozen=True)
class Section:
    heading: int  # index in Document.headings
    line: int  # the heading's line
    end_line: int  # last non-blank line before the next heading of the same or a higher level
    body: str  # the lines after the heading, up to end_line


@dataclass(frozen=True)
class Document:
    lines: list[str]  # the whole file, frontmatter included
    headings: list[Heading] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    body_line: int = 1  # where the Markdown starts (after a YAML frontmatter)
    # The top-level blocks' lines in the body (0-based, end exclusive, as markdown-it maps
    # them): where `parse_edit` may take up the parse of an edited version.
    tops: tuple[tuple[int, int], ...] = field(default=(), compare=False, repr=False)

    @property
    def sections(self) -> list[Section]:
        found = []
        last = len(self.lines)
        for index, heading in enumerate(self.headings):
            end = last
            for later in self.headings[index + 1 :]:
                if later.level <= heading.level:
                    end = later.line - 1
                    break
            while end > heading.line and not self.lines[end - 1].strip():
                end -= 1  # the blank lines before the next heading are no part of it
            body = "\n".join(self.lines[max(heading.line, heading.end_line) : end])
            found.append(Section(index, heading.line, end, body))
        return found

    @property
    def fences(self) -> list[Block]:
        return [block for block in self.blocks if block.kind == "fence"]

    def unterminated_fence(self) -> Block | None:
        """The fence that runs unclosed to the end of the file: a truncated text.

        A fence that its container ends (a list item or blockquote that stops) is
        closed by CommonMark, so it is not one."""
        for block in self.fences:
            if not block.closed and block.end_line >= len(self.lines):
                return block
        return None


def heading_key(text: str) -> str:
    """``## 1. Output *format*`` and ``### output format`` say the same."""
    words = " ".join(text.lstrip("#").translate(_MARKUP).split()).lower()
    return _NUMBERING.sub("", words).rstrip(":").strip() or words


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # Block structure only: the rules read headings, fences, tables and paragraphs' source,
    # never the inline markup (parsing it was 40% of a history audit's time).
    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])


# A history audit reads each file version's old and new side several times (sections,
# format, duplication, collapse) across the files of one commit: a release sync touches
# 300+ files, whose old and new sides a count of 256 did not hold (a third of an
# audit's parses were of texts parsed before). Bounded by characters instead: the
# Documents of 8 M characters of text are about 60 MB.
_PARSED: dict[str, Document] = {}  # oldest first (dicts keep insertion order)
_PARSED_CHARS = 8_000_000
_parsed_chars = [0]


def parse(text: str) -> Document:
    """The structure of ``text`` (a YAML frontmatter at the top is skipped, as an
    Agent Skills reader does; line numbers still count it). Cached: the format,
    duplication and collapse rules read the same text; a Document is never changed."""
    found = _PARSED.pop(text, None)
    if found is None:
        found = _parse(text)
        _parsed_chars[0] += len(text)
    _remember(text, found)
    return found


def _remember(text: str, document: Document) -> None:
    """Keep ``document`` (its text's characters counted by the caller that parsed it)."""
    _PARSED[text] = document  # the most recently used last
    while _PARSED and _parsed_chars[0] > _PARSED_CHARS:
        _parsed_chars[0] -= len(next(iter(_PARSED)))
        del _PARSED[next(iter(_PARSED))]


def _parse(text: str) -> Document:
    lines = text.splitlines()
    front = split_frontmatter(text)
    headings, blocks, tops = _walk(_parser().parse(front.body), lines, front.body_line - 1)
    return Document(lines, headings, blocks, front.body_line, tuple(tops))


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
    previous = _PARSED.get(old)
    front = split_frontmatter(new)
    if new in _PARSED or previous is None or previous.body_line != front.body_line or _ODD.search(new + old):
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
        found = _walk(tokens[first:last], text_lines, offset) if top is None else taken.moved(top, moved)
        headings += found[0]
        blocks += found[1]
        tops += found[2]
    document = Document(text_lines, _parented(headings), blocks, front.body_line, tuple(tops))
    _parsed_chars[0] += len(new)
    _remember(new, document)
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
    from markdown_it.rules_block import StateBlock

    return StateBlock(body, _parser(), {}, tokens)


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
    return replace(heading, line=heading.line + lines, end_line=heading.end_line + lines)


def _moved_block(block: Block, lines: int) -> Block:
    if not lines:
        return block
    items = tuple((a + lines, b + lines) for a, b in block.items)
    return replace(block, line=block.line + lines, end_line=block.end_line + lines, items=items)


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
        found.append(heading if heading.parent == parent else replace(heading, parent=parent))
        open_headings.append(len(found) - 1)
    return found


def _walk(
    tokens: list[Token], lines: list[str], offset: int
) -> tuple[list[Heading], list[Block], list[tuple[int, int]]]:
    """The headings and blocks of markdown-it's ``tokens`` of the text from line
    ``offset`` (0-based) of ``lines`` on, and its top-level blocks' lines."""
    headings: list[Heading] = []
    blocks: list[Block] = []
    tops: list[tuple[int, int]] = []
    open_headings: list[int] = []  # the chain of enclosing headings, by index
    quoted = 0
    lists: list[int] = []  # the lines of the open lists
    items: list[tuple[int, int]] = []  # the open list items: (list line, item line)
    for position, token in enumerate(tokens):
        kind = token.type
        if token.level == 0 and token.nesting >= 0 and token.map is not None:
            tops.append((token.map[0], token.map[1]))
        if kind == "blockquote_open":
            quoted += 1
        elif kind == "blockquote_close":
            quoted -= 1
        elif kind in ("bullet_list_open", "ordered_list_open"):
            lists.append(token.map[0] + 1 + offset if token.map else 0)
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            items.append((lists[-1], token.map[0] + 1 + offset if token.map else 0))
        elif kind == "list_item_close":
            items.pop()
        elif kind == "heading_open" and token.map is not None:
            level = int(token.tag[1])
            while open_headings and headings[open_headings[-1]].level >= level:
                open_headings.pop()
            parent = open_headings[-1] if open_headings else None
            title = tokens[position + 1].content.strip()
            line = token.map[0] + 1 + offset
            headings.append(Heading(level, title, line, parent, token.map[1] + offset))
            open_headings.append(len(headings) - 1)
        elif token.map is not None:
            block = _block(token, tokens, position, lines, offset)
            if block is not None:
                blocks.append(_placed(block, quoted > 0, tuple(items)))
    return headings, blocks, tops


def _placed(block: Block, quoted: bool, items: tuple[tuple[int, int], ...]) -> Block:
    if not quoted and not items:
        return block
    return replace(block, quoted=quoted, in_list=bool(items), items=items)


def _block(token: Token, tokens: list[Token], position: int, lines: list[str], offset: int) -> Block | None:
    assert token.map is not None
    start, end = token.map[0] + 1 + offset, token.map[1] + offset
    if token.type == "paragraph_open":
        return Block("paragraph", start, end, tokens[position + 1].content)
    if token.type == "fence":
        # markdown-it maps a fence to its opening line, its content lines and, when
        # there is one, its closing line: one line more than content + 1 means closed.
        content_lines = token.content.count("\n")
        closed = token.map[1] - token.map[0] >= content_lines + 2
        opener = lines[start - 1].strip() if start - 1 < len(lines) else token.markup
        return Block(
            "fence", start, end, token.content, info=token.info.strip(), closed=closed, opener=opener
        )
    if token.type == "code_block":
        return Block("code", start, end, token.content)
    if token.type == "table_open":
        return Block("table", start, end, "")
    if token.type == "html_block":
        return Block("html", start, end, token.content)
    return None
