"""The duplication rule's structural part: a section whose body repeats an earlier
section's, and the same heading twice under one parent. The rule, its passages and what
it ignores are described in `harnessgit.checks.duplication`, which calls these.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from typing import Literal, NamedTuple

from harnessgit.checks.markdown import Document

# A passage this long is a statement a reader would notice twice: a restated lesson is
# one or two sentences of 15-40 words. The doc-coauthoring skill's repeated branch step
# ("Inform them that the initial structure with placeholders for all sections will be
# created.") is 14 words, each command's `--json` line in a CLI reference about 10.
MIN_PASSAGE_WORDS = 15
# A section is compared when its body has this many non-blank lines and passage words.
_MIN_SECTION_LINES = 3
_MAX_SECTIONS = 500
# Earlier sections compared with each one: those sharing most lines.
_NEAR_SECTIONS = 16
# The same heading this many times under one parent is a pair a reader cannot tell apart;
# more is a series it labels ("### Prompt" over each example).
_MAX_SAME_HEADINGS = 2

Kind = Literal["passage", "section", "heading"]


class Repeat(NamedTuple):
    """A section, heading or passage that repeats an earlier one in the same file."""

    kind: Kind
    line: int  # 1-based: where the repeat is
    end_line: int
    first: int  # where the earlier occurrence is
    first_end: int
    text: str
    exact: bool
    words: int = 0


def repeated_sections(document: Document, near: float) -> list[Repeat]:
    found: list[Repeat] = []
    bodies: list[tuple[int, int, Counter[str], str]] = []  # (line, end_line, lines, key)
    holding: dict[str, list[int]] = defaultdict(list)  # line -> bodies that hold it
    covered_until = 0
    normal = [_normal(line) for line in document.lines]  # each line once, not once per enclosing section
    for section in document.sections[:_MAX_SECTIONS]:
        heading = document.headings[section.heading]
        body = [line for line in normal[max(heading.line, heading.end_line) : section.end_line] if line[1]]
        if len(body) < _MIN_SECTION_LINES or sum(words for _line, words in body) < MIN_PASSAGE_WORDS:
            continue
        lines = [line for line, _words in body]
        key, counts = "\n".join(lines), Counter(lines)
        match = None
        if section.line > covered_until:  # a section inside a reported copy is part of it
            match = _section_match(section.line, key, counts, bodies, holding, near)
        if match is not None:
            title = f"{'#' * heading.level} {heading.text}"
            found.append(
                Repeat("section", section.line, section.end_line, match[0], match[1], title, match[2])
            )
            covered_until = section.end_line
        else:
            for line in counts:
                holding[line].append(len(bodies))
            bodies.append((section.line, section.end_line, counts, key))
    return found


# A line's words, single-spaced and lowercased, and how many there are, by the line: a
# history audit reads every version of a file, whose lines are mostly the last
# version's. Bounded by count: a few MB.
_NORMAL: dict[str, tuple[str, int]] = {}
_NORMAL_MAX = 1 << 17


def _normal(line: str) -> tuple[str, int]:
    found = _NORMAL.get(line)
    if found is None:
        if len(_NORMAL) >= _NORMAL_MAX:
            _NORMAL.clear()
        words = line.split()
        found = _NORMAL[line] = (" ".join(words).lower(), len(words))
    return found


def _section_match(
    line: int,
    key: str,
    counts: Counter[str],
    bodies: list[tuple[int, int, Counter[str], str]],
    holding: dict[str, list[int]],
    near: float,
) -> tuple[int, int, bool] | None:
    """The first earlier section body that this one repeats: (line, end_line, exactly)."""
    # A body similar enough shares lines with this one: only those are compared, the
    # ones sharing most first, and a bounded number of them (text that repeats the
    # same few lines in every section must not make this quadratic).
    shared = Counter(index for text in counts for index in holding[text])
    candidates = sorted(shared, key=lambda index: (-shared[index], index))[:_NEAR_SECTIONS]
    size = counts.total()
    matches = []
    for candidate in candidates:
        first, end_line, other, other_key = bodies[candidate]
        if end_line >= line:
            continue  # an enclosing section holds this one: not a copy of it
        other_size = other.total()
        if min(size, other_size) < near * max(size, other_size):
            continue  # sizes too far apart for the similarity to reach `near`
        if other_key == key or _similarity(counts, other) >= near:
            matches.append((first, end_line, other_key == key))
    return min(matches) if matches else None


def _similarity(a: Counter[str], b: Counter[str]) -> float:
    """Jaccard similarity of two multisets of lines."""
    shared = sum((a & b).values())
    return shared / (sum(a.values()) + sum(b.values()) - shared)


def repeated_headings(document: Document, covered: set[int], branches: dict[int, int]) -> list[Repeat]:
    """Headings that repeat an earlier one at the same level under the same parent.

    Not when they are in exclusive branches ("### Step 1: Predict Reader Questions" under
    "**If access to sub-agents:**" and under "**If no access:**"), nor when the heading
    comes three or more times there: then it labels each item of a series ("### Prompt"
    over each example prompt), and the series is how a reader tells them apart. Nor when
    the repeat has no prose and no subsections under it: "### Examples" over a code
    block after each principle names that example."""
    seen: dict[tuple[int, str, int | None], list[int]] = defaultdict(list)
    for heading in document.headings:
        seen[(heading.level, heading.words, heading.parent)].append(heading.line)
    by_line = {heading.line: heading for heading in document.headings}
    paragraphs = sorted(block.line for block in document.blocks if block.kind == "paragraph")
    starts = [heading.line for heading in document.headings]
    prose = {  # the headings with prose or subsections in their section
        section.line
        for section in document.sections
        if bisect.bisect_right(paragraphs, section.end_line) > bisect.bisect_right(paragraphs, section.line)
        or bisect.bisect_right(starts, section.end_line) > bisect.bisect_right(starts, section.line)
    }
    found = []
    for lines in seen.values():
        if len(lines) > _MAX_SAME_HEADINGS:
            continue
        for position, line in enumerate(lines):
            earlier = [
                first
                for first in lines[:position]
                if first not in branches or line not in branches or branches[first] == branches[line]
            ]
            if line not in prose:
                continue
            if earlier and line not in covered:
                heading = by_line[line]
                title = f"{'#' * heading.level} {heading.text}"
                found.append(Repeat("heading", line, line, earlier[0], earlier[0], title, True))
    return found
