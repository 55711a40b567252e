"""Growth and collapse: a file's size and content against its previous version.

Bloat and collapse are the two ways text optimisers fail by size. Bloat: GEPA's
production prompts grew past 5,000 characters (Decagon) and ESPO's three-times-longer
prompts were no more accurate (arXiv 2609.04197). Collapse: ACE saw an 18,282-token
context rewritten in one step to 122 tokens, and accuracy fell from 66.7 to 57.1,
below no adaptation at all (arXiv 2510.04618). Files smaller than
``small_file_chars`` before the edit are exempt from both.

Collapse is lost content, and content a change moves to another file is not lost:
a SKILL.md slimmed down with its sections moved to references/ in the same change is
progressive disclosure, what the length rule's hint asks for (issue 14: 85 of 89
collapse findings on real history were such moves). A line moved is a line of the
old text that the new one no longer holds and that the change added to another file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping

from harnessgit.check_findings import Finding, Level
from harnessgit.checkconfig.sections import KindChecks
from harnessgit.checks.compare import Comparison, words
from harnessgit.checks.markdown import Document, parse
from harnessgit.checks.text import listed, split_frontmatter

_GROWTH_HINT = "keep the addition that matters and drop the rest; longer harness text is not better text"
_COLLAPSE_HINT = "restore the lost content, or make the deletion its own small, deliberate change"
_MAX_DETAILS = 50
# Below this many non-blank lines, "share of lines kept" says nothing: rewriting a
# three-line prompt is an edit, not a collapse (its size still counts).
_MIN_LINES = 5
# A change that keeps at least this share of the characters is never a collapse by
# what it rewrote: sections and lines kept count only below it.
KEEPS_CONTENT = 0.5
_MAX_MOVED_DETAILS = 10
# A line of fewer words (a fence, `},`, `## Examples`) is in every Markdown file:
# finding it in another file says nothing about where content went.
_MOVED_MIN_WORDS = 2

# The lines the change added to each of its other files, by path (`added_lines`): asked
# for only when a file shrank enough to be a collapse, since reading them costs.
Moved = Callable[[], Mapping[str, Counter[str]]]


def check_growth(path: str, kind: KindChecks, old: str, new: str) -> list[Finding]:
    if len(old) < max(kind.small_file_chars, 1):
        return []
    ratio = len(new) / len(old)
    thresholds: tuple[tuple[float | None, Level], ...] = (
        (kind.growth_fail, "failure"),
        (kind.growth_warn, "warning"),
    )
    for limit, level in thresholds:
        if limit is not None and ratio > limit:
            return [
                Finding(
                    path=path,
                    rule="growth",
                    level=level,
                    measure="size / previous size",
                    value=round(ratio, 2),
                    limit=limit,
                    message=f"grew {ratio:.2f}x in one change ({len(old):,} -> {len(new):,} characters)",
                    hint=_GROWTH_HINT,
                )
            ]
    return []


def added_lines(old: str | None, new: str) -> Counter[str]:
    """The non-blank lines (spacing aside) that ``new`` holds more often than ``old``."""
    added = _line_counts(new)
    if old is not None:
        added -= _line_counts(old)
    return added


def _only_frontmatter_shrank(old: str, new: str) -> bool:
    """Whether the body kept half its characters and the shrink is in the frontmatter: a
    trimmed `description` (held out: seven agents whose description lost its embedded
    examples shrank to 33-47%, every body line intact) is metadata the format rule
    judges, not lost context."""
    before, after = split_frontmatter(old), split_frontmatter(new)
    if before.yaml is None or after.yaml is None or not before.body.strip():
        return False
    return len(after.body) / len(before.body) >= KEEPS_CONTENT


def check_collapse(
    path: str, kind: KindChecks, old: str, new: str, comparison: Comparison, moved: Moved | None = None
) -> list[Finding]:
    if not kind.collapse or len(old) < max(kind.small_file_chars, 1):
        return []
    size_share = len(new) / len(old)
    if size_share >= max(kind.collapse_min_size, KEEPS_CONTENT):
        return []
    if _only_frontmatter_shrank(old, new):
        return []
    went = moved_out(old, new, moved() if moved else {})
    moved_chars = sum(len(line) * count for lines in went.values() for line, count in lines.items())
    # Collapse is lost content. A change that keeps half the characters, here or moved
    # to its other files, has not lost it, whatever it rewrote or renamed (issue 14: 15
    # of 43 collapse findings in history did not shrink at all): the sections and lines
    # that survive describe a collapse once the size says there is one.
    kept_share = size_share + moved_chars / len(old)
    content_counts = kept_share < KEEPS_CONTENT
    if kept_share >= kind.collapse_min_size and not content_counts:
        return []
    before = parse(old)
    elsewhere = {line for lines in went.values() for line in lines}
    gone = lost_sections(before, parse(new), elsewhere) if before.headings else []
    old_sections = before.headings
    section_share = 1 - len(gone) / len(old_sections) if old_sections else 1.0
    # (measure, value, limit, reason): the first that trips is the finding's measure.
    tripped = []
    if kept_share < kind.collapse_min_size:
        tripped.append(
            (
                "size / previous size",
                size_share,
                kind.collapse_min_size,
                f"shrank to {size_share:.0%} of its previous size ({len(old):,} -> {len(new):,} characters)",
            )
        )
    if content_counts and len(old_sections) >= 2 and section_share < kind.collapse_min_kept_sections:
        tripped.append(
            (
                "share of sections kept",
                section_share,
                kind.collapse_min_kept_sections,
                f"{len(gone)} of {len(old_sections)} sections disappeared",
            )
        )
    kept_lines = min(
        comparison.kept_lines + sum(lines.total() for lines in went.values()), comparison.old_lines
    )
    lines_share = kept_lines / comparison.old_lines if comparison.old_lines else 1.0
    if content_counts and comparison.old_lines >= _MIN_LINES and lines_share < kind.collapse_min_kept_lines:
        tripped.append(
            (
                "share of lines kept",
                lines_share,
                kind.collapse_min_kept_lines,
                f"{lines_share:.0%} of its previous lines survive ({kept_lines} of {comparison.old_lines})",
            )
        )
    if not tripped:
        return []
    measure, value, limit, _reason = tripped[0]
    return [
        Finding(
            path=path,
            rule="collapse",
            level="failure",
            measure=measure,
            value=round(value, 3),
            limit=limit,
            message="; ".join(reason for *_rest, reason in tripped),
            hint=_COLLAPSE_HINT,
            details=_collapse_details(gone, went),
        )
    ]


def _collapse_details(gone: list[tuple[str, int]], went: Mapping[str, Counter[str]]) -> list[str]:
    """The sections lost, then what was counted as kept though this file no longer
    holds it, and where it went."""
    details = listed(
        [f"section gone: {title} (line {line} before)" for title, line in gone], _MAX_DETAILS, "more sections"
    )
    moves = sorted(went.items(), key=lambda item: -item[1].total())
    return details + listed(
        [f"moved to {other}: {lines.total()} of the removed lines" for other, lines in moves],
        _MAX_MOVED_DETAILS,
        "more files",
    )


def moved_out(old: str, new: str, elsewhere: Mapping[str, Counter[str]]) -> dict[str, Counter[str]]:
    """The lines of ``old`` that ``new`` no longer holds and that the change added to
    another file, by that file (each line counted once, in the first file that has it;
    only lines of at least two words)."""
    remaining = Counter(
        {line: count for line, count in (_line_counts(old) - _line_counts(new)).items() if _substantial(line)}
    )
    went = {}
    for other, added in elsewhere.items():
        taken = remaining & added
        if taken:
            went[other] = taken
            remaining -= taken
    return went


def lost_sections(before: Document, after: Document, moved: Collection[str] = ()) -> list[tuple[str, int]]:
    """The sections of ``before`` that ``after`` no longer holds, as (heading, line in ``before``).

    A section survives when a heading of ``after`` says the same (numbering, emphasis,
    case and level aside: ``## Setup`` -> ``### 1. Setup``), or when at least half of
    its own lines are still in ``after`` under whatever heading or were ``moved`` to
    another file (lines as `moved_out` gives them), or when a section nested in it
    survives."""
    new_keys = {heading.key for heading in after.headings}
    new_lines = {_normal(line) for line in after.lines if line.strip()} | set(moved)
    kept = []
    for index, heading in enumerate(before.headings):
        own = _own_lines(before, index)
        survives = heading.key in new_keys or (
            bool(own) and sum(line in new_lines for line in own) >= len(own) / 2
        )
        kept.append(survives)
    # A parent lives on in any of its children (backwards: children come after it).
    for index in range(len(before.headings) - 1, -1, -1):
        parent = before.headings[index].parent
        if kept[index] and parent is not None:
            kept[parent] = True
    return [
        (f"{'#' * heading.level} {heading.text}", heading.line)
        for heading, survives in zip(before.headings, kept, strict=True)
        if not survives
    ]


def _own_lines(document: Document, index: int) -> list[str]:
    """A heading's own text: its lines up to the next heading of any level."""
    heading = document.headings[index]
    start = max(heading.line, heading.end_line)
    end = document.headings[index + 1].line - 1 if index + 1 < len(document.headings) else len(document.lines)
    return [_normal(line) for line in document.lines[start:end] if line.strip()]


def _normal(line: str) -> str:
    return " ".join(line.split())


def _substantial(line: str) -> bool:
    return len(words(line)) >= _MOVED_MIN_WORDS


def _line_counts(text: str) -> Counter[str]:
    return Counter(_normal(line) for line in text.splitlines() if line.strip())
