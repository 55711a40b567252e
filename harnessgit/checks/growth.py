"""Growth and collapse: a file's size and content against its previous version.

Bloat and collapse are the two ways text optimisers fail by size. Bloat: GEPA's
production prompts grew past 5,000 characters (Decagon) and ESPO's three-times-longer
prompts were no more accurate (arXiv 2609.04197). Collapse: ACE saw an 18,282-token
context rewritten in one step to 122 tokens, and accuracy fell from 66.7 to 57.1,
below no adaptation at all (arXiv 2510.04618). Files smaller than
``small_file_chars`` before the edit are exempt from both.
"""

from __future__ import annotations

from harnessgit.checks.compare import Comparison
from harnessgit.checks.models import Finding, Level
from harnessgit.checks.text import heading_key, headings, listed
from harnessgit.config.sections import KindChecks

_GROWTH_HINT = "keep the addition that matters and drop the rest; longer harness text is not better text"
_COLLAPSE_HINT = "restore the lost content, or make the deletion its own small, deliberate change"
_MAX_DETAILS = 50
# Below this many non-blank lines, "share of lines kept" says nothing: rewriting a
# three-line prompt is an edit, not a collapse (its size still counts).
_MIN_LINES = 5


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


def check_collapse(path: str, kind: KindChecks, old: str, new: str, comparison: Comparison) -> list[Finding]:
    if not kind.collapse or len(old) < max(kind.small_file_chars, 1):
        return []
    old_headings = headings(old)
    new_keys = {heading_key(heading) for heading in headings(new)}
    gone = [heading for heading in old_headings if heading_key(heading) not in new_keys]
    size_share = len(new) / len(old)
    section_share = 1 - len(gone) / len(old_headings) if old_headings else 1.0
    # (measure, value, limit, reason): the first that trips is the finding's measure.
    tripped = []
    if size_share < kind.collapse_min_size:
        tripped.append(
            (
                "size / previous size",
                size_share,
                kind.collapse_min_size,
                f"shrank to {size_share:.0%} of its previous size ({len(old):,} -> {len(new):,} characters)",
            )
        )
    if len(old_headings) >= 2 and section_share < kind.collapse_min_kept_sections:
        tripped.append(
            (
                "share of sections kept",
                section_share,
                kind.collapse_min_kept_sections,
                f"{len(gone)} of {len(old_headings)} sections disappeared",
            )
        )
    if comparison.old_lines >= _MIN_LINES and comparison.kept_share < kind.collapse_min_kept_lines:
        tripped.append(
            (
                "share of lines kept",
                comparison.kept_share,
                kind.collapse_min_kept_lines,
                f"{comparison.kept_share:.0%} of its previous lines survive "
                f"({comparison.kept_lines} of {comparison.old_lines})",
            )
        )
    if not tripped:
        return []
    measure, value, limit, _reason = tripped[0]
    details = listed([f"section gone: {heading}" for heading in gone], _MAX_DETAILS, "more sections")
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
            details=details,
        )
    ]
