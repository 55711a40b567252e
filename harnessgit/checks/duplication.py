"""The duplication rule: lines and bullets that repeat, or nearly repeat, an earlier one.

Optimisers that append a lesson per failure often restate a rule the text already
holds, in new words: appending without merging is how bloat grows. Lines compare after
normalisation (list markers, case, spacing and closing punctuation dropped); a
near duplicate shares at least ``near_duplicate`` of its words (Jaccard).
Code blocks, headings and short lines (a label such as "Example:") are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harnessgit.checks.models import Finding
from harnessgit.checks.text import code_fences, shorten

_MARKER = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")
_WORD = re.compile(r"\w+")
_MIN_WORDS = 4
_MIN_CHARS = 20
# Pairwise comparison is quadratic: above this many candidate lines only exact
# repeats are looked for (a harness file that long already fails its length limit).
_NEAR_UP_TO = 3000
_MAX_DETAILS = 10


@dataclass(frozen=True)
class Repeat:
    line: int  # 1-based
    first: int  # the earlier line it repeats
    text: str
    exact: bool


def _normalise(line: str) -> str:
    return " ".join(_MARKER.sub("", line).lower().split()).rstrip(".,;:!")


def find_repeats(text: str, near: float) -> list[Repeat]:
    lines = text.splitlines()
    fenced = code_fences(lines).inside
    seen: dict[str, int] = {}
    unique: list[tuple[int, frozenset[str], str]] = []  # (line, words, original)
    repeats = []
    for number, (line, in_code) in enumerate(zip(lines, fenced, strict=True), start=1):
        if in_code or line.lstrip().startswith("#"):
            continue
        key = _normalise(line)
        words = _WORD.findall(key)
        if len(key) < _MIN_CHARS or len(words) < _MIN_WORDS:
            continue
        if key in seen:
            repeats.append(Repeat(number, seen[key], line.strip(), exact=True))
            continue
        seen[key] = number
        unique.append((number, frozenset(words), line.strip()))
    if near < 1 and len(unique) <= _NEAR_UP_TO:
        repeats += _near_repeats(unique, near)
    return sorted(repeats, key=lambda repeat: repeat.line)


def _near_repeats(unique: list[tuple[int, frozenset[str], str]], near: float) -> list[Repeat]:
    # Jaccard(a, b) <= min(|a|, |b|) / max(|a|, |b|): only lines of similar word
    # counts can match, so compare each line with the next ones in size order.
    by_size = sorted(unique, key=lambda item: len(item[1]))
    found: dict[int, Repeat] = {}
    for i, (line_a, words_a, text_a) in enumerate(by_size):
        for line_b, words_b, text_b in by_size[i + 1 :]:
            if len(words_a) < near * len(words_b):
                break
            if len(words_a & words_b) / len(words_a | words_b) < near:
                continue
            later, earlier, text = (line_b, line_a, text_b) if line_b > line_a else (line_a, line_b, text_a)
            if later not in found:
                found[later] = Repeat(later, earlier, text, exact=False)
    return list(found.values())


def check_duplication(path: str, text: str, near: float, max_duplicates: int) -> list[Finding]:
    repeats = find_repeats(text, near)
    if len(repeats) <= max_duplicates:
        return []
    exact = sum(1 for repeat in repeats if repeat.exact)
    kinds = ", ".join(
        part
        for part in (
            f"{exact} exact" if exact else "",
            f"{len(repeats) - exact} near" if len(repeats) > exact else "",
        )
        if part
    )
    details = [
        f"line {repeat.line} {'repeats' if repeat.exact else 'nearly repeats'} line {repeat.first}: "
        f"{shorten(repeat.text, 60)}"
        for repeat in repeats[:_MAX_DETAILS]
    ]
    if len(repeats) > _MAX_DETAILS:
        details.append(f"... and {len(repeats) - _MAX_DETAILS} more")
    return [
        Finding(
            path=path,
            rule="duplication",
            level="warning",
            measure="repeated lines",
            value=len(repeats),
            limit=max_duplicates,
            message=f"{len(repeats)} lines repeat an earlier line ({kinds})",
            hint="merge the repeats into one statement: repeated rules cost tokens and drift apart",
            details=details,
        )
    ]
