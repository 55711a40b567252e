"""The length of each harness file over time, from the history audit (`log --all-history`).

`harness_history` already sizes every harness file at every commit of the base branch
that changed one (characters and tokens as the checks count them); here those changes
become one series per file, and each file gets the limits its kind of the checks sets
(`[checks.kinds]`), so the picture shows how close a file came to them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harnessgit.candidates.history import HistoryResult
from harnessgit.checks.core import kind_of
from harnessgit.config import Config

# The files a length picture draws, largest first: a line each, and a legend row each.
# A collection of 257 rules drew 257 lines and a legend several screens long (issue 27);
# the rest are counted ("and N more"), and `log --all-history` lists every one.
FILES_DRAWN = 10


@dataclass(frozen=True, kw_only=True)
class LengthPoint:
    step: int  # index into LengthSeries' common steps (the commits that changed the harness)
    chars: int | None  # None: unknown (binary, too large to read)
    tokens: int | None


@dataclass(frozen=True, kw_only=True)
class FileLength:
    path: str
    kind: str  # its kind of the checks
    max_chars: int | None
    max_tokens: int | None
    points: list[LengthPoint] = field(default_factory=list)  # a gap where the file did not exist


@dataclass(frozen=True, kw_only=True)
class LengthSteps:
    """Step 0 is the harness before the oldest change shown; step i the i-th change."""

    commits: list[str]
    dates: list[str]
    subjects: list[str]
    tokenizer: str
    files: list[FileLength]  # the `FILES_DRAWN` largest, by path
    left_out: int = 0  # harness files the range changed that are not drawn (smaller ones)


def length_steps(history: HistoryResult, config: Config) -> LengthSteps:
    entries = list(reversed(history.entries))  # oldest first
    series: dict[str, list[LengthPoint]] = {}
    for step, entry in enumerate(entries, start=1):
        for change in entry.files:
            points = series.setdefault(change.path, [])
            if not points and change.bytes_before is not None and change.old_path is None:
                # the file's length before the first change shown
                points.append(
                    LengthPoint(step=step - 1, chars=change.chars_before, tokens=change.tokens_before)
                )
            if change.old_path is not None and change.old_path in series:
                points[:0] = series.pop(change.old_path)  # a rename continues the old name's line
            if change.bytes_after is not None:
                points.append(LengthPoint(step=step, chars=change.chars_after, tokens=change.tokens_after))
    largest = sorted(series, key=lambda path: (-_largest(series[path]), path))[:FILES_DRAWN]
    files = []
    for path in sorted(largest):
        kind = kind_of(path, config.checks)
        limits = config.checks.kinds.get(kind)
        files.append(
            FileLength(
                path=path,
                kind=kind,
                max_chars=limits.max_chars if limits else None,
                max_tokens=limits.max_tokens if limits else None,
                points=series[path],
            )
        )
    return LengthSteps(
        commits=[f"{entries[0].commit}^", *[e.commit for e in entries]] if entries else [],
        dates=[entries[0].date, *[e.date for e in entries]] if entries else [],
        subjects=["before", *[e.subject for e in entries]] if entries else [],
        tokenizer=history.tokenizer,
        files=files,
        left_out=len(series) - len(files),
    )


def _largest(points: list[LengthPoint]) -> int:
    """The most characters a file reached (0 when never known)."""
    return max((point.chars or 0 for point in points), default=0)
