"""The edit-size rule: hunks and changed lines against a budget, per file and per change.

The harness edits that held up were few and small: SkillOpt accepted 1 to 4 edits
per benchmark (arXiv 2605.23904), each checked on instances the optimiser had not
seen. Only files that had content before count: a new file (or one that was empty)
is judged by its length, a deleted one is reported as such.
"""

from __future__ import annotations

from collections.abc import Iterable

from harnessgit.check_findings import Finding, failure
from harnessgit.checks.compare import Comparison

_FILE_HINT = "split the edit into smaller changes that can each be verified (and reverted) alone"
_CHANGE_HINT = "propose fewer edits at once: one change per idea keeps the gate's evidence readable"


def _budget(
    path: str | None, scope: str, hunks: int, changed: int, limits: tuple[int | None, int | None]
) -> list[Finding]:
    max_hunks, max_changed = limits
    hint = _FILE_HINT if path is not None else _CHANGE_HINT
    budgets = (
        (
            "hunks",
            hunks,
            max_hunks,
            f"{scope} touches {hunks} places (hunks), over the budget of {max_hunks}",
        ),
        # changed lines: added + removed
        (
            "changed lines",
            changed,
            max_changed,
            f"{scope} changes {changed} lines, over the budget of {max_changed}",
        ),
    )
    return [
        failure(path, "edit-size", measure, value, limit, message, hint)
        for measure, value, limit, message in budgets
        if limit is not None and value > limit
    ]


def check_file_edit(
    path: str, comparison: Comparison, max_hunks: int | None, max_changed: int | None
) -> list[Finding]:
    return _budget(path, "the edit", comparison.hunks, comparison.changed_lines, (max_hunks, max_changed))


def check_change_edit(
    edits: Iterable[tuple[Comparison, int | None, int | None]], max_hunks: int | None, max_changed: int | None
) -> list[Finding]:
    """The change's budget; ``edits`` are (comparison, file max_hunks, file max_changed_lines)."""
    items = list(edits)
    if not items:
        return []
    if len(items) == 1:
        # One file: where its own (smaller) budget already applies, it speaks for the change.
        _comparison, file_hunks, file_changed = items[0]
        if file_hunks is not None and max_hunks is not None and file_hunks <= max_hunks:
            max_hunks = None
        if file_changed is not None and max_changed is not None and file_changed <= max_changed:
            max_changed = None
    # Every file a change touches takes at least one hunk: the budget grows by one per file
    # after the first (issue 27: upstream syncs of 100+ files failed at 28 hunks over 25).
    if max_hunks is not None:
        max_hunks += len(items) - 1
    hunks = sum(comparison.hunks for comparison, _h, _c in items)
    changed = sum(comparison.changed_lines for comparison, _h, _c in items)
    scope = f"the change ({len(items)} file{'s' if len(items) != 1 else ''})"
    return _budget(None, scope, hunks, changed, (max_hunks, max_changed))
