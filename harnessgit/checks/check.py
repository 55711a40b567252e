"""Checking a change in a repository: the functions the gate and the CLI call.

Each collects the harness files of one change through the store and runs the pure
rules on them (`core.check_files`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from typing import NamedTuple

from harnessgit.check_findings import CheckReport, Rule
from harnessgit.checkconfig import CheckSections
from harnessgit.checks.collect import Collected, Source, collect, missing_file, with_references
from harnessgit.checks.core import check_files
from harnessgit.checks.cumulative import growth_reference
from harnessgit.readstore import Repository


class CheckRequest(NamedTuple):
    """What to check and how: `harnessgit check`'s options, built once at the edge."""

    # The new side: a commit or tree (``new``, what the gate checks), the index (as the
    # pre-commit hook does) or the working tree (untracked harness files included).
    source: Source = "tree"
    paths: list[str] | None = None  # only these files; None: every changed harness file
    rules: Collection[Rule] | None = None  # only these rules; None: all
    all_files: bool = False  # every harness file, changed or not
    # Failures a file already had at ``old`` are "existing" and do not block; False
    # judges every file as it stands (`harnessgit check --all`).
    ratchet: bool = True
    since: str | None = None  # the growth reference commit; None: [checks] growth_since


def check_change(
    store: Repository,
    config: CheckSections,
    old: str | None,
    new: str | None = None,
    request: CheckRequest = CheckRequest(),
) -> CheckReport:
    """Check the harness files that differ between ``old`` and the new side that
    ``request.source`` names: the commit (or tree) ``new``, the index or the working tree.

    ``old`` None compares with nothing (every file is new). The gate calls
    ``check_change(store, config, base_sha, candidate_sha)`` and refuses the
    candidate when ``report.failed``. Cumulative growth is measured against the commit
    ``request.since`` (default: ``[checks] growth_since``).
    """
    source, rules = request.source, request.rules
    if (source == "tree") != (new is not None):
        raise ValueError("check_change: pass `new` exactly when source is 'tree'")
    collected = collect(store, config, old, source, new, paths=request.paths, all_files=request.all_files)
    reference, notes = (
        (None, [])
        if rules and "growth" not in rules
        else growth_reference(store, config, old, new, request.since)
    )
    if reference is not None:
        collected = with_references(store, collected, reference.commit, config.checks.max_file_bytes)
    collected.notes.extend(notes)
    since = reference.name if reference else None
    return report_for(collected, config, rules, ratchet=request.ratchet, since=since)


def report_for(
    collected: Collected,
    config: CheckSections,
    rules: Collection[Rule] | None = None,
    *,
    ratchet: bool = True,
    since: str | None = None,
) -> CheckReport:
    report = check_files(
        collected.versions,
        config.checks,
        rules=rules,
        ratchet=ratchet,
        since=since,
        others=collected.others,
        skill_folders=collected.skill_folders,
    )
    missing = [missing_file(path, where) for path, where in collected.missing]
    if not collected.notes and not missing:
        return report
    return replace(report, findings=[*missing, *report.findings], notes=[*collected.notes, *report.notes])
