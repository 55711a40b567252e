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
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, NamedTuple

from harnessgit.checks.text import split_frontmatter

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

BlockKind = Literal["paragraph", "fence", "code", "table", "html"]

# "## 1. Setup", "## Step 2: Setup", "## 2) Setup", "## A. Setup": numbering is not content.
_NUMBERING = re.compile(
    r"^(?:(?:step|part|phase|section|stage)\s+(?:\d+(?:\.\d+)*|[a-z])[.):]?|(?:\d+(?:\.\d+)*|[a-z])[.):])\s+",
    re.I,
)
_MARKUP = str.maketrans("", "", "*_`")


# Headings, blocks and sections are NamedTuples (immutable records, cheaper to create
# than frozen dataclasses at the hook's start-up: harnessgit.check_rules says why).
class Heading(NamedTuple):
    """One ATX or setext heading."""

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


class Block(NamedTuple):
    """One leaf block of the Markdown body: a paragraph, code, HTML, a table, ..."""

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


class Section(NamedTuple):
    """A heading and the lines under it."""

    heading: int  # index in Document.headings
    line: int  # the heading's line
    end_line: int  # last non-blank line before the next heading of the same or a higher level
    body: str  # the lines after the heading, up to end_line


class Document(NamedTuple):
    """A Markdown file parsed into headings and blocks (`parse`)."""

    lines: list[str]  # the whole file, frontmatter included
    headings: list[Heading]
    blocks: list[Block]
    body_line: int  # where the Markdown starts (after a YAML frontmatter)
    # The top-level blocks' lines in the body (0-based, end exclusive, as markdown-it maps
    # them): where `markdown_edit.parse_edit` may take up the parse of an edited version.
    tops: tuple[tuple[int, int], ...]

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
def parser() -> MarkdownIt:
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


def cached(text: str) -> Document | None:
    """The Document `parse` keeps for ``text``, if it keeps one (not moved up the queue)."""
    return _PARSED.get(text)


def keep(text: str, document: Document) -> None:
    """Keep ``document`` as `parse`'s for ``text``, parsed elsewhere (`markdown_edit`)."""
    _parsed_chars[0] += len(text)
    _remember(text, document)


def _remember(text: str, document: Document) -> None:
    """Keep ``document`` (its text's characters counted by the caller that parsed it)."""
    _PARSED[text] = document  # the most recently used last
    while _PARSED and _parsed_chars[0] > _PARSED_CHARS:
        _parsed_chars[0] -= len(next(iter(_PARSED)))
        del _PARSED[next(iter(_PARSED))]


def _parse(text: str) -> Document:
    lines = text.splitlines()
    front = split_frontmatter(text)
    headings, blocks, tops = walk(parser().parse(front.body), lines, front.body_line - 1)
    return Document(lines, headings, blocks, front.body_line, tuple(tops))


def walk(
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
    return block._replace(quoted=quoted, in_list=bool(items), items=items)


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
