"""Reading harness text: frontmatter, lines, short forms for messages.

Pure functions over strings; the rules build on them. Markdown structure (fences,
headings, sections, tables) is `harnessgit.checks.markdown`'s, read by a CommonMark parser.
"""

from __future__ import annotations

from typing import NamedTuple


class Frontmatter(NamedTuple):
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


def count_lines(text: str) -> int:
    return len(text.splitlines())


def shorten(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."
