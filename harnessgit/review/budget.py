"""Fitting a Markdown document under a size limit, section by section.

GitHub refuses a comment body over 65,536 characters. A review can be far longer
(a diff of thousands of lines), so `review_markdown` builds the comment as sections
that each know what they can lose: a head and a tail that always stay (a title, a
table header, the closing fence of a code block, ``</details>``) and a body whose
lines are cut from the end, with a line that says how much was left out. Sections
are given room in order of importance (the verdict first, the diff last), not in
the order they appear.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# GitHub's limit on an issue or pull-request comment body. Measured here in UTF-8
# bytes, which are never fewer than characters, so the body fits however GitHub counts.
COMMENT_LIMIT = 65_536
MARGIN = 256  # room for a final note about sections that had to go


@dataclass(frozen=True)
class Section:
    head: list[str]
    body: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)
    priority: int = 0  # lower gets room first
    what: str = "lines"  # what a body line is, for the truncation note

    def full(self) -> list[str]:
        return [*self.head, *self.body, *self.tail]


def size(lines: list[str]) -> int:
    """Bytes of the lines joined by newlines, one newline each."""
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def cut_note(count: int, what: str) -> str:
    return (
        f"_… {count:,} more {what} not shown here (GitHub caps a comment at {COMMENT_LIMIT:,} "
        "characters): run `harnessgit review` locally for all of it._"
    )


def fit(section: Section, budget: int) -> list[str] | None:
    """The section in at most ``budget`` bytes, its body cut from the end; None if
    not even its head and tail fit."""
    full = section.full()
    if size(full) <= budget:
        return full
    note = cut_note(len(section.body), section.what)  # the longest note it could need
    room = budget - size([*section.head, *section.tail, "", note])
    if room < 0:
        return None
    kept: list[str] = []
    used = 0
    for line in section.body:
        cost = len(line.encode("utf-8")) + 1
        if used + cost > room:
            break
        kept.append(line)
        used += cost
    return [*section.head, *kept, *section.tail, "", cut_note(len(section.body) - len(kept), section.what)]


def assemble(sections: list[Section], limit: int = COMMENT_LIMIT) -> str:
    """The sections in document order, each given room in priority order; the
    result is at most ``limit`` bytes."""
    budget = limit - MARGIN
    floors = [
        min(size(s.full()), size([*s.head, *s.tail, "", cut_note(len(s.body), s.what)])) for s in sections
    ]
    spare = budget - sum(floors)
    rooms = list(floors)
    for i in sorted(range(len(sections)), key=lambda i: sections[i].priority):
        extra = max(0, min(size(sections[i].full()) - floors[i], spare))
        rooms[i] += extra
        spare -= extra
    dropped = 0
    if spare < 0:  # even the floors do not fit: drop the least important sections whole
        for i in sorted(range(len(sections)), key=lambda i: -sections[i].priority):
            if spare >= 0:
                break
            spare += rooms[i]
            rooms[i] = 0
            dropped += 1
    out: list[str] = []
    for section, room in zip(sections, rooms, strict=True):
        # A room of at least the floor always fits the head, the tail and the note.
        fitted = fit(section, room) if room else None
        out += fitted or []
    if dropped:
        out.append(f"_{dropped} section(s) left out to stay under GitHub's comment limit._")
    return "\n".join(out) + "\n"
