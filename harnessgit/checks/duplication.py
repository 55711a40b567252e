"""The duplication rule: lines and bullets that repeat, or nearly repeat, an earlier one.

Optimisers that append a lesson per failure often restate a rule the text already
holds, in new words: appending without merging is how bloat grows. Lines compare after
normalisation (list markers, case, spacing and closing punctuation dropped); a
near duplicate shares at least ``near_duplicate`` of its words (Jaccard).
Code blocks, headings and short lines (a label such as "Example:") are ignored.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from harnessgit.checks.models import Finding
from harnessgit.checks.text import code_fences, listed, shorten

_NUMBERED = re.compile(r"\d+[.)]\s")
_PUNCTUATION = ".,;:!?()[]{}<>\"'`*_~|-+=#/\\"
_MIN_WORDS = 4
_MIN_CHARS = 20
# Even filtered, near-duplicate search can go quadratic on text of few distinct
# words: above this many candidate lines only exact repeats are looked for (a
# harness file that long already fails its length limit).
_NEAR_UP_TO = 3000
_MAX_DETAILS = 10


@dataclass(frozen=True)
class Repeat:
    line: int  # 1-based
    first: int  # the earlier line it repeats
    text: str
    exact: bool


def _words(line: str) -> list[str]:
    """A line's words, lowercased: list markers, spacing and punctuation drop out."""
    words = [word for token in line.lower().split() if (word := token.strip(_PUNCTUATION))]
    if words and line[:1].isdigit() and _NUMBERED.match(line):
        del words[0]  # "3. Check the totals" says what "- Check the totals" says
    return words


def find_repeats(text: str, near: float) -> list[Repeat]:
    lines = text.splitlines()
    fenced = code_fences(lines).inside
    seen: dict[str, int] = {}
    unique: list[tuple[int, frozenset[str], str]] = []  # (line, words, original)
    repeats = []
    for number, (line, in_code) in enumerate(zip(lines, fenced, strict=True), start=1):
        stripped = line.strip()
        if in_code or len(stripped) < _MIN_CHARS or stripped[0] == "#":
            continue
        words = _words(stripped)
        key = " ".join(words)
        if len(words) < _MIN_WORDS or len(key) < _MIN_CHARS:
            continue
        if key in seen:
            repeats.append(Repeat(number, seen[key], stripped, exact=True))
            continue
        seen[key] = number
        unique.append((number, frozenset(words), stripped))
    if near < 1 and len(unique) <= _NEAR_UP_TO:
        repeats += _near_repeats(unique, near)
    return sorted(repeats, key=lambda repeat: repeat.line)


def _near_repeats(unique: list[tuple[int, frozenset[str], str]], near: float) -> list[Repeat]:
    # Prefix filtering (Bayardo et al., "Scaling up all pairs similarity search",
    # WWW 2007): with each line's words ordered rarest first, two lines whose
    # Jaccard similarity reaches `near` share a word among the first
    # |words| - ceil(near * |words|) + 1 of each. Only those pairs are compared.
    frequency = Counter(word for _line, words, _text in unique for word in words)
    rarest_first = sorted(frequency, key=lambda word: (frequency[word], word))
    rank = {word: position for position, word in enumerate(rarest_first)}
    index: dict[str, list[int]] = defaultdict(list)
    found = []
    for position, (line, words, text) in enumerate(unique):
        ordered = sorted(words, key=rank.__getitem__)
        prefix = ordered[: len(ordered) - math.ceil(near * len(ordered)) + 1]
        candidates = {other for word in prefix for other in index[word]}
        for word in prefix:
            index[word].append(position)
        for other in sorted(candidates):
            earlier, other_words, _other_text = unique[other]
            shared = len(words & other_words)
            if shared / (len(words) + len(other_words) - shared) >= near:
                found.append(Repeat(line, earlier, text, exact=False))
                break
    return found


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
    details = listed(
        [
            f"line {repeat.line} {'repeats' if repeat.exact else 'nearly repeats'} line {repeat.first}: "
            f"{shorten(repeat.text, 60)}"
            for repeat in repeats
        ],
        _MAX_DETAILS,
    )
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
