"""The ratchet: in change mode a finding blocks only when the change brings it.

A file's *state* findings (length, format, duplication, growth since a reference)
are computed on both sides of the change. A finding the previous version already
had, under the same rule and measure and at least as bad, is "existing": it is
reported but never blocks, so a one-line fix to a file that was already too long
is not refused (issue 14: 133 of 249 blocked real commits were blocked only by
failures their parent had). A finding the change makes worse (a longer file, one
more repeat) or brings anew stays "new".

Duplication findings are one per repeat, each naming its text (value: the repeated
text's start), so they pair by that text: a repeat the previous version already had
is existing wherever it moved, a new repeat is new, even when an old one went.

Findings about the change itself (growth in one step, collapse, edit size) have
no previous side: the change is what they measure, so they are always new.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

from harnessgit.check_findings import Finding

_Key = tuple[str, str, str]

# Rules whose findings are each one thing, named by their value, rather than a measure
# of the file: a finding is existing only when the previous version had that very one.
_BY_VALUE = frozenset({"duplication"})


def pairing_key(finding: Finding) -> _Key:
    """What a finding is the same finding as, across versions or limits: its rule and
    measure, and for a rule of one finding per thing (duplication) that thing too."""
    return (finding.rule, finding.measure, str(finding.value) if finding.rule in _BY_VALUE else "")


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def badness(finding: Finding) -> float | None:
    """How far past its limit a numeric finding is, larger is worse; None when the
    finding is not a number against a numeric limit (a format verdict)."""
    value, limit = _number(finding.value), _number(finding.limit)
    if value is None or limit is None:
        return None
    # A lower bound (share kept, description length 0) is worse the smaller it gets.
    return value - limit if value > limit else limit - value


def ratchet(new: Sequence[Finding], old: Sequence[Finding], tolerance: float = 0.0) -> list[Finding]:
    """``new`` with each finding the previous version already had marked "existing".

    Findings pair up by (rule, measure), worst with worst: a numeric one is existing
    when its partner is at least as far past the limit; any other one (a format
    verdict: "missing", "invalid YAML", an unclosed fence that moved down a line)
    is existing when the previous version had as many of its kind. A duplication
    finding pairs by (rule, measure, value), as a multiset: the same repeat twice
    before and three times now is two existing and one new.
    """
    before: dict[_Key, list[Finding]] = defaultdict(list)
    for finding in old:
        before[pairing_key(finding)].append(finding)
    after: dict[_Key, list[int]] = defaultdict(list)
    for index, finding in enumerate(new):
        after[pairing_key(finding)].append(index)
    existing: set[int] = set()
    for key, indexes in after.items():
        if key[0] in _BY_VALUE:
            existing.update(indexes[: len(before.get(key, []))])
        else:
            existing |= _pair(new, indexes, before.get(key, []))
    out = []
    for index, finding in enumerate(new):
        if index in existing:
            finding = replace(finding, state="existing")
        elif finding.level == "failure" and (grew := _grew_a_little(finding, before, tolerance)) is not None:
            finding = replace(finding, level="warning", details=[*finding.details, grew])
        out.append(finding)
    return out


def _grew_a_little(finding: Finding, before: dict[_Key, list[Finding]], tolerance: float) -> str | None:
    """Why ``finding`` only warns: its file was already past the same numeric limit and
    went further by at most ``tolerance`` of it ([checks] over_limit_tolerance)."""
    value, limit = _number(finding.value), _number(finding.limit)
    if value is None or limit is None or value <= limit or not tolerance:
        return None
    previous = [v for f in before.get(pairing_key(finding), []) if (v := _number(f.value)) is not None]
    if not previous or max(previous) <= limit:
        return None
    grew = value - max(previous)
    if grew > tolerance * limit:
        return None
    return (
        f"already over the limit before this change ({max(previous):,.0f}); it grew by {grew:,.0f}, "
        f"within [checks] over_limit_tolerance ({tolerance:.0%} of the limit): a warning"
    )


def _pair(new: Sequence[Finding], indexes: list[int], old: list[Finding]) -> set[int]:
    if not old:
        return set()
    numeric = [index for index in indexes if badness(new[index]) is not None]
    other = [index for index in indexes if badness(new[index]) is None]
    existing: set[int] = set()
    old_numbers = sorted((b for f in old if (b := badness(f)) is not None), reverse=True)
    numeric.sort(key=lambda index: badness(new[index]) or 0.0, reverse=True)
    for index, previous in zip(numeric, old_numbers, strict=False):
        if previous >= (badness(new[index]) or 0.0):
            existing.add(index)
    # Verdicts: the same value first (the same bad name), then any left of the kind.
    old_values = [str(f.value) for f in old if badness(f) is None]
    unmatched = []
    for index in other:
        value = str(new[index].value)
        if value in old_values:
            old_values.remove(value)
            existing.add(index)
        else:
            unmatched.append(index)
    existing.update(unmatched[: len(old_values)])
    return existing
