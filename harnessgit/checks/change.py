"""Checking a change in a repository: the functions the gate and the CLI call.

Each collects the harness files of one change through the store and runs the pure
rules on them (`core.check_files`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from harnessgit.checks.collect import Collected, Source, collect
from harnessgit.checks.core import check_files
from harnessgit.checks.models import CheckReport, Rule
from harnessgit.config import CheckSections
from harnessgit.store import Store


def check_change(
    store: Store,
    config: CheckSections,
    old: str | None,
    new: str,
    *,
    paths: list[str] | None = None,
    rules: Collection[Rule] | None = None,
    all_files: bool = False,
) -> CheckReport:
    """Check the harness files that differ between two commits (or trees).

    ``old`` None compares with nothing (every file is new). The gate calls
    ``check_change(store, config, base_sha, candidate_sha)`` and refuses the
    candidate when ``report.failed``.
    """
    return _check(store, config, old, "tree", new, paths=paths, rules=rules, all_files=all_files)


def check_staged(
    store: Store,
    config: CheckSections,
    old: str | None,
    *,
    paths: list[str] | None = None,
    rules: Collection[Rule] | None = None,
    all_files: bool = False,
) -> CheckReport:
    """Check the staged content (the index) against ``old``, as a pre-commit hook does."""
    return _check(store, config, old, "index", None, paths=paths, rules=rules, all_files=all_files)


def check_worktree(
    store: Store,
    config: CheckSections,
    old: str | None,
    *,
    paths: list[str] | None = None,
    rules: Collection[Rule] | None = None,
    all_files: bool = False,
) -> CheckReport:
    """Check the working tree's files against ``old`` (untracked harness files included)."""
    return _check(store, config, old, "worktree", None, paths=paths, rules=rules, all_files=all_files)


def _check(
    store: Store,
    config: CheckSections,
    old: str | None,
    source: Source,
    new: str | None,
    *,
    paths: list[str] | None,
    rules: Collection[Rule] | None,
    all_files: bool,
) -> CheckReport:
    collected = collect(store, config, old, source, new, paths=paths, all_files=all_files)
    return report_for(collected, config, rules)


def report_for(
    collected: Collected, config: CheckSections, rules: Collection[Rule] | None = None
) -> CheckReport:
    report = check_files(collected.versions, config.checks, rules=rules)
    if not collected.notes:
        return report
    return replace(report, notes=[*collected.notes, *report.notes])
