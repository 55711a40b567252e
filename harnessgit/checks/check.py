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
    new: str | None = None,
    *,
    source: Source = "tree",
    paths: list[str] | None = None,
    rules: Collection[Rule] | None = None,
    all_files: bool = False,
) -> CheckReport:
    """Check the harness files that differ between ``old`` and the new side: the
    commit (or tree) ``new`` (``source="tree"``, what the gate checks), the index
    (``source="index"``, as the pre-commit hook does) or the working tree
    (``source="worktree"``, untracked harness files included).

    ``old`` None compares with nothing (every file is new). The gate calls
    ``check_change(store, config, base_sha, candidate_sha)`` and refuses the
    candidate when ``report.failed``.
    """
    if (source == "tree") != (new is not None):
        raise ValueError("check_change: pass `new` exactly when source is 'tree'")
    collected = collect(store, config, old, source, new, paths=paths, all_files=all_files)
    return report_for(collected, config, rules)


def report_for(
    collected: Collected, config: CheckSections, rules: Collection[Rule] | None = None
) -> CheckReport:
    report = check_files(collected.versions, config.checks, rules=rules)
    if not collected.notes:
        return report
    return replace(report, notes=[*collected.notes, *report.notes])
