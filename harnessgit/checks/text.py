"""Reading the structure of harness text: frontmatter, code fences, headings, lines.

Pure functions over strings; the rules build on them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harnessgit.fences import fenced_blocks_in

_HEADING = re.compile(r" {0,3}(?P<level>#{1,6})[ \t]+(?P<title>.*?)(?:[ \t]+#+)?[ \t]*")


@dataclass(frozen=True)
class Frontmatter:
    """A document split at its YAML frontmatter (``---`` ... ``---`` at the very top)."""

    yaml: str | None  # None when the document has no frontmatter
    body: str
    body_line: int  # 1-based line number where the body starts
    unterminated: bool = False  # an opening ``---`` without a closing one


def listed(lines: list[str], limit: int, more: str = "more") -> list[str]:
    """The first ``limit`` lines, then a line saying how many more there are."""
    return lines[:limit] + ([f"... and {len(lines) - limit} {more}"] if len(lines) > limit else [])


def split_frontmatter(text: str) -> Frontmatter:
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return Frontmatter(None, text, 1)
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            return Frontmatter("".join(lines[1:index]), "".join(lines[index + 1 :]), index + 2)
    return Frontmatter(None, text, 1, unterminated=True)


@dataclass(frozen=True)
class Fences:
    inside: list[bool]  # per line: inside a fenced code block (fence lines included)
    unterminated_at: int | None  # 1-based line of a fence that is never closed
    opener: str = ""  # that fence's opening line


def code_fences(lines: list[str]) -> Fences:
    """Which lines are code, and where a fence opens that never closes (CommonMark
    rules, shared with the proposers: `harnessgit.fences`)."""
    inside = [False] * len(lines)
    blocks = fenced_blocks_in(lines)
    for block in blocks:
        for index in range(block.line - 1, block.end):
            inside[index] = True
    if not blocks or blocks[-1].closed:
        return Fences(inside, None)
    return Fences(inside, blocks[-1].line, lines[blocks[-1].line - 1].strip())


def headings(text: str) -> list[str]:
    """ATX headings outside code fences, as written (``## Title``), in order."""
    lines = text.splitlines()
    fenced = code_fences(lines).inside
    found = []
    for line, in_code in zip(lines, fenced, strict=True):
        if in_code:
            continue
        match = _HEADING.fullmatch(line)
        if match and match["title"].strip():
            found.append(f"{match['level']} {match['title'].strip()}")
    return found


def heading_key(heading: str) -> str:
    """Headings compare by their words: ``## Output  format`` == ``### Output format``."""
    return " ".join(heading.lstrip("#").lower().split())


def count_lines(text: str) -> int:
    return len(text.splitlines())


def shorten(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."
