"""Which sections of a Markdown text an edit added, removed or changed.

A reader of a harness's history asks what each change did to the structure a model
reads: a new "## Examples", a lost "## Constraints", a rewritten "## Output format".
Sections are the CommonMark headings `checks.markdown` parses. A heading is known by its
words and those of the headings above it (`Heading.key`: numbering and emphasis aside),
so renumbering "## 2. Setup" to "## 3. Setup" changes nothing, and the "### Example"
under two different sections are two sections. A section's own text runs from its
heading to the next heading of any level: an edit to a subsection changes that
subsection, not every section around it. The YAML frontmatter (an Agent Skill's name and
description) and the text before the first heading count as sections of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from harnessgit.checks.markdown import Document, parse

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
FRONTMATTER = "(frontmatter)"
INTRO = "(before the first heading)"
Key = tuple[str, ...]
Outline = list[tuple[Key, str, int]]  # (key, title as written, hash of its own text)


@dataclass(frozen=True)
class SectionChanges:
    """Headings as written, with their level's marks ("## Setup"), in document order."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


def is_markdown(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in MARKDOWN_SUFFIXES


def section_changes(old: str | None, new: str | None) -> SectionChanges:
    """The sections ``new`` has that ``old`` had not, the reverse, and those on both
    sides whose own text differs (None: the file is absent on that side)."""
    return compare(outline(old) if old is not None else None, outline(new) if new is not None else None)


def compare(old: Outline | None, new: Outline | None) -> SectionChanges:
    """`section_changes` of two outlines (None: the file is absent on that side)."""
    before, after = old or [], new or []
    unmatched: dict[Key, list[tuple[str, int]]] = {}
    for key, title, body in before:
        unmatched.setdefault(key, []).append((title, body))
    added, changed = [], []
    for key, title, body in after:
        # The n-th section with this key pairs with the n-th one before.
        earlier = unmatched.get(key)
        if not earlier:
            added.append(title)
        elif earlier.pop(0)[1] != body:
            changed.append(title)
    removed = [title for key, title, _ in before if _left(unmatched, key, title)]
    return SectionChanges(added=added, removed=removed, changed=changed)


def _left(unmatched: dict[Key, list[tuple[str, int]]], key: Key, title: str) -> bool:
    """Whether the old section ``title`` found no partner (taking it off the list)."""
    for index, (other, _body) in enumerate(unmatched.get(key, [])):
        if other == title:
            del unmatched[key][index]
            return True
    return False


def outline(text: str) -> Outline:
    """Each section of ``text`` as (key, title, hash of its own text): the key is the
    heading's words and its enclosing headings' words; the own text leaves out blank lines
    and trailing spaces, so reflowing blank lines is no change. Hashes, not texts: a
    caller may keep the outlines of many versions (`log --all-history` keeps each
    file's last one, to compare with the next without parsing it again)."""
    document = parse(text)
    found: Outline = []
    if document.body_line > 1:
        found.append(((FRONTMATTER,), FRONTMATTER, hash(_own(document, 0, document.body_line - 1))))
    first = document.headings[0].line if document.headings else len(document.lines) + 1
    intro = _own(document, document.body_line - 1, first - 1)
    if intro:
        found.append(((INTRO,), INTRO, hash(intro)))
    for index, heading in enumerate(document.headings):
        keys = [heading.key]
        parent = heading.parent
        while parent is not None:
            keys.append(document.headings[parent].key)
            parent = document.headings[parent].parent
        following = document.headings[index + 1] if index + 1 < len(document.headings) else None
        end = following.line - 1 if following else len(document.lines)
        body = _own(document, max(heading.line, heading.end_line), end)
        found.append((tuple(reversed(keys)), f"{'#' * heading.level} {heading.text}", hash(body)))
    return found


def _own(document: Document, start: int, end: int) -> str:
    """Lines ``start`` + 1 to ``end`` (1-based, inclusive), without blank ones."""
    return "\n".join(line.rstrip() for line in document.lines[start:end] if line.strip())
