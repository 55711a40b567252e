"""The prose of a Markdown document as sentences a reader would compare.

What the duplication rule reads: paragraphs and list items split into sentences, each
normalised to its words (list markers, case, spacing and edge punctuation dropped; a
leading dot stays: ``.worktrees/`` is not ``worktrees/``), with quotations counted as
one word, and with the branch ("**If ...:**", "### Otherwise") and list items each
sentence sits in. Code, quoted blocks, diagrams and lines that read as JSON, CSS or
JavaScript are not prose.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from harnessgit.checks.markdown import Document

_NUMBERED = re.compile(r"\d+[.)]$")
_LIST_MARK = {"-", "*", "+", ">"}
_LEFT = "([{\"'`*_~<|"  # markup and opening punctuation before a word
_RIGHT = ".,;:!?)]}\"'`*_~>|"  # closing punctuation and markup after it
# "i.e. `JSON`" and "e.g. a table" go on: an abbreviation is no sentence end.
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<![iI]\.[eE]\.)(?<![eE]\.[gG]\.)(?<!\bvs\.)\s+(?=\S)")
# Quoted text (in "...", \"\"\"...\"\"\" or curly quotes) is what someone says or an example of it:
# example dialogues quote the same question in each variant. Code spans first, so the
# quotes of `input("")` stay code.
CODE_SPAN = re.compile(r"(`+).+?\1")
_QUOTED = re.compile(r'"+[^"]*"+|\u201c[^\u201d]*\u201d')
# Box-drawing characters (U+2500-U+257F): a tree or table drawn in text, not prose.
_BOX_DRAWING = re.compile("[\u2500-\u257f]")
_JSON_KEY = re.compile(r"""^["'][^"']+["']\s*:""")
_CSS_RULE = re.compile(r"^[\w.#:\[\]=\"'*>+~, -]+\{")
# "**If using artifacts:**", "### Otherwise": the start of one of several exclusive
# branches, whose steps repeat in each branch by design.
_CONDITION = r"(?:if|when|whenever|otherwise|else|unless|without|with|for|option|case|using)\b"
_BRANCH_LABEL = re.compile(rf"^(\*\*|__)\s*{_CONDITION}[^*_]*?:?\s*\1:?\s*$", re.I)
_BRANCH_HEADING = re.compile(rf"^{_CONDITION}", re.I)
# "- `--json`: print the report as JSON": reference docs for a named option, command or
# field, which parallel text repeats per command by design.
_CODE_TERM = re.compile(r"^`[^`]+`\s*(?:\([^)]*\)\s*)?[:\u2013\u2014-]")


class Unit(NamedTuple):
    """A paragraph or list item's words, where the duplication rule compares passages."""

    line: int
    end_line: int
    words: tuple[str, ...]
    text: str
    branch: int | None = None  # line of the "**If ...:**" label or "### If ..." heading it is under
    items: tuple[tuple[int, int], ...] = ()  # the list items it is in (markdown.Block.items)
    block: int = 0  # the first line of its paragraph


def sentence_words(text: str) -> list[str]:
    """A sentence's words, lowercased: list markers, spacing and edge punctuation drop out."""
    words = [word for token in text.lower().split() if (word := token.lstrip(_LEFT).rstrip(_RIGHT))]
    while words and (words[0] in _LIST_MARK or _NUMBERED.match(words[0])):
        del words[0]  # "3. Check the totals" says what "- Check the totals" says
    return words


def _code_like(line: str) -> bool:
    """A line that reads as JSON, CSS or JavaScript pasted outside a fence, or is code."""
    stripped = line.strip()
    if not stripped or _BOX_DRAWING.search(stripped):
        return True
    if stripped[0] == stripped[-1] == "`" and stripped.count("`") == 2:
        return True  # one inline code span: an expression, not a sentence
    if (
        stripped[0] in "{}[]"
        or stripped[-1] in "{;"
        or _JSON_KEY.match(stripped)
        or _CSS_RULE.match(stripped)
    ):
        return True
    visible = stripped.replace(" ", "")
    return sum(map(str.isalpha, visible)) < 0.5 * len(visible)


def branches(document: Document) -> dict[int, int]:
    """For each paragraph's and heading's first line, the branch label it is under (its
    line), if any.

    A label paragraph opens a branch that lasts until the next label or a heading above
    the section it sits in; a conditional heading, until the next heading of its level."""
    events = sorted(
        [(heading.line, heading.level, heading.text, True) for heading in document.headings]
        + [(block.line, 0, block.text, False) for block in document.blocks if block.kind == "paragraph"]
    )
    branch: tuple[int, int] | None = None  # (label line, level that ends it)
    section_level = 1
    found = {}
    for line, level, text, is_heading in events:
        if is_heading:
            if branch is not None and level <= branch[1]:
                branch = None
            section_level = level + 1
            if _BRANCH_HEADING.match(text):
                branch = (line, level)
        elif _BRANCH_LABEL.match(text.splitlines()[0] if text else ""):
            branch = (line, section_level - 2)  # ends at a heading above its section
        if branch is not None:
            found[line] = branch[0]
    return found


def sentences(document: Document, skip: set[int]) -> list[Unit]:
    """The prose of the document as sentences, each with the lines it spans."""
    labels = branches(document)
    units = []
    for block in document.blocks:
        if block.kind != "paragraph" or block.quoted or block.line in skip:
            continue
        if block.in_list and _CODE_TERM.match(block.text):
            continue
        for first, last, words, sentence in _paragraph(block.text):
            units.append(
                Unit(
                    block.line + first,
                    block.line + last,
                    words,
                    sentence,
                    labels.get(block.line),
                    block.items,
                    block.line,
                )
            )
    return units


# A paragraph's sentences depend on its text alone (lines counted from its first): a
# history audit reads each version of a file, and most of its paragraphs are those of the
# version before, so they are split once. Bounded by count: a few MB.
_SPLIT: dict[str, tuple[tuple[int, int, tuple[str, ...], str], ...]] = {}
_SPLIT_MAX = 65536


def _paragraph(text: str) -> tuple[tuple[int, int, tuple[str, ...], str], ...]:
    """A paragraph's sentences: (first line, last line, counted from 0; words; text)."""
    found = _SPLIT.get(text)
    if found is None:
        if len(_SPLIT) >= _SPLIT_MAX:
            _SPLIT.clear()
        found = _SPLIT[text] = tuple(_split(text))
    return found


def _split(text: str) -> list[tuple[int, int, tuple[str, ...], str]]:
    # A paragraph's inline source keeps one line per source line.
    kept = [(number, line) for number, line in enumerate(text.splitlines()) if not _code_like(line)]
    if not kept:
        return []
    joined, starts = "", []
    for number, line in kept:
        starts.append((len(joined), number))
        joined += line.strip() + " "
    unquoted = _unquoted(joined)
    position = 0
    found = []
    for sentence in _SENTENCE_END.split(joined.strip()):
        begin = joined.index(sentence, position)
        position = begin + len(sentence)
        first = max(number for offset, number in starts if offset <= begin)
        last = max(number for offset, number in starts if offset < position)
        words = tuple(sentence_words(unquoted[begin:position]))
        if words:
            found.append((first, last, words, sentence))
    return found


def _unquoted(text: str) -> str:
    """``text`` with each quotation one word (same length): a quoted example counts as
    one word, and quoted names ("Key Challenges" / "Available Tools") still differ."""
    masked = CODE_SPAN.sub(lambda match: "x" * len(match.group()), text)
    for match in reversed(list(_QUOTED.finditer(masked))):
        start, end = match.span()
        word = "\u00ab" + "".join(char for char in text[start:end].lower() if char.isalnum())
        text = text[:start] + word[: end - start].ljust(end - start) + text[end:]
    return text
