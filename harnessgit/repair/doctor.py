"""`harnessgit doctor`: what a killed harnessgit (or git) left behind, and the repair.

A list of checks, each a pair of functions: ``find`` looks (changing nothing) and
returns findings, ``fix`` repairs one finding and says what it did, or raises
`CannotRepair` when that would take a guess. The checks run in order, each looking
after the fixes of those before it: rolling a transaction forward removes its own lock
files, so the lock check that follows sees only the others. A new check is one more
`Check` in `CHECKS`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harnessgit import layout
from harnessgit.candidates import history_verdicts
from harnessgit.config import Config, load_config
from harnessgit.errors import HarnessgitError
from harnessgit.gate import pool_cache
from harnessgit.gate.checkout import describe, finish_checkout, finished_line, unfinished_checkout
from harnessgit.processes import scratch as scratch_dirs
from harnessgit.render import listing, plural, short
from harnessgit.repair.findings import CannotRepair, Check, DoctorReport, Finding, shown
from harnessgit.repair.transactions import find_locks_left, find_transactions, fix_transaction, remove_lock
from harnessgit.store import Store, retired
from harnessgit.store import index as notes_index
from harnessgit.store.locks import age_text
from harnessgit.targets import candidate_tips

__all__ = ["CHECKS", "CannotRepair", "Check", "DoctorReport", "Finding", "diagnose", "shown"]


def diagnose(store: Store, *, fix: bool = False, checks: tuple[Check, ...] | None = None) -> DoctorReport:
    chosen = CHECKS if checks is None else checks
    findings: list[Finding] = []
    for check in chosen:
        for finding in check.find(store):
            findings.append(_repair(store, check, finding) if fix and finding.fixable else finding)
    return DoctorReport(tuple(check.name for check in chosen), fix, tuple(findings))


def _repair(store: Store, check: Check, finding: Finding) -> Finding:
    try:
        outcome = check.fix(store, finding)
    except CannotRepair as exc:
        return replace(finding, outcome=str(exc))
    return replace(finding, fixed=True, outcome=outcome)


# -- a landing whose working tree did not follow -----------------------------


def find_unfinished_checkout(store: Store) -> list[Finding]:
    """A merge or `revert --no-gate` killed between moving the checked-out branch and
    moving its index and files (gate/checkout.py): `git status` shows the reverse of
    the landed edit staged, and committing it would undo the landing."""
    unfinished = unfinished_checkout(store)
    if unfinished is None:
        return []
    details: tuple[str, ...] = ()
    if unfinished.edited:
        details = (f"changed since, by hand: {listing(unfinished.edited)}",)
        fix = (
            f"none without guessing: set your changes to {listing(unfinished.edited)} aside, "
            f"then `{unfinished.rerun}` or `harnessgit doctor --fix`"
        )
    else:
        fix = f"bring the index and files to {short(unfinished.merge)}, as `{unfinished.rerun}` would"
    return [
        Finding(
            "checkout",
            unfinished.branch,
            describe(unfinished) + "; do not commit that",
            fix,
            fixable=not unfinished.edited,
            details=details,
        )
    ]


def finish_unfinished_checkout(store: Store, finding: Finding) -> str:
    unfinished = unfinished_checkout(store)  # again: the branch may have moved since
    if unfinished is None:
        return "already finished"
    try:
        finish_checkout(store, unfinished)
    except HarnessgitError as exc:  # edited since, the index locked: the user's to settle
        raise CannotRepair(str(exc)) from None
    return finished_line(unfinished)


# -- what a killed harnessgit left outside the repository -----------------------


def find_programs_left(store: Store) -> list[Finding]:
    """Evaluators and proposer commands (and what they started) whose harnessgit was
    killed before it could end them: they still spend CPU and may write into scratch
    directories (Linux: found in /proc by the run token each program inherits)."""
    return [
        Finding(
            "programs",
            f"pid {process.pid}",
            f"started by {process.owner}, still running",
            "kill it",
            fixable=True,
        )
        for process in scratch_dirs.stale_processes()
    ]


def kill_program(store: Store, finding: Finding) -> str:
    pid = int(finding.subject.removeprefix("pid "))
    found = [process for process in scratch_dirs.stale_processes() if process.pid == pid]  # again
    if not found:
        return "already gone"
    return f"killed {finding.subject}" if scratch_dirs.kill_processes(found) else "already gone"


def find_scratch_left(store: Store) -> list[Finding]:
    """Temporary directories (checked-out trees, throw-away indexes) whose harnessgit is
    gone; each holds a marker naming its owner, so a live run's are never touched."""
    return [
        Finding(
            "scratch",
            str(found.path),
            f"temporary directory of {found.owner}, {age_text(found.age)} old",
            "remove it",
            fixable=True,
        )
        for found in scratch_dirs.stale_temp_dirs()
    ]


def remove_scratch(store: Store, finding: Finding) -> str:
    path = Path(finding.subject)
    found = [stale for stale in scratch_dirs.stale_temp_dirs(path.parent) if stale.path == path]  # again
    if not found:
        return "already gone"
    done = scratch_dirs.remove_temp_dirs(found)
    if done.failed:
        raise CannotRepair(f"could not remove it: {done.failed[0][1]}")
    return f"removed {finding.subject}"


INDEXED = (layout.NOTES_EVALS, layout.NOTES_EVIDENCE)  # the notes refs with an index


def find_bad_index(store: Store) -> list[Finding]:
    """The notes indexes, the frontier's pool cache and the history audit's verdict
    cache are derived (harnessgit/store/index.py, gate/pool_cache.py,
    candidates/history_verdicts.py): readers rebuild one they cannot
    read, but one edited with its checksum redone is found only by comparing it with a
    rebuild, which this does."""
    found = []
    for ref in INDEXED:
        problem = notes_index.check_index(store, ref)
        if problem is not None:
            path = shown(store, notes_index.index_path(store, ref))
            found.append(Finding("index", path, problem, "rebuild it from the notes", fixable=True))
    config = _config(store)
    problem = pool_cache.check_pool(store, config) if config is not None else None
    if problem is not None:
        path = shown(store, notes_index.index_path(store, pool_cache.NAME))
        found.append(Finding("index", path, problem, "rebuild it from the notes", fixable=True))
    archived = {cid: sha for cid, (state, sha) in candidate_tips(store.refs).items() if state == "archived"}
    problem = retired.check_reasons(store, layout.NOTES_EVIDENCE, archived)
    if problem is not None:
        path = shown(store, notes_index.index_path(store, retired.REASONS))
        found.append(Finding("index", path, problem, "remove it (status counts again)", fixable=True))
    problem = history_verdicts.check_file(store)
    if problem is not None:
        path = shown(store, notes_index.index_path(store, history_verdicts.NAME))
        found.append(Finding("index", path, problem, "remove it (the next audit judges again)", fixable=True))
    return found


def rebuild_index(store: Store, finding: Finding) -> str:
    for removable in (retired.REASONS, history_verdicts.NAME):
        if finding.subject == shown(store, notes_index.index_path(store, removable)):
            notes_index.index_path(store, removable).unlink(missing_ok=True)
            return "removed it"
    config = _config(store)
    if config is not None and finding.subject == shown(store, notes_index.index_path(store, pool_cache.NAME)):
        return f"rebuilt it with the means of {plural(pool_cache.rebuild_pool(store, config), 'cache key')}"
    ref = next(ref for ref in INDEXED if shown(store, notes_index.index_path(store, ref)) == finding.subject)
    index = notes_index.rebuild_index(store, ref)
    return f"rebuilt it from {plural(len(index.entries), 'note')}"


def _config(store: Store) -> Config | None:
    """The configuration the frontier keys its pool cache by; None when it does not
    load (the pool cache is then left unchecked: `frontier` would stop first)."""
    try:
        return load_config(Path(store.root))
    except HarnessgitError:
        return None


# The checks, in order. Transactions first: rolling one forward removes its own locks
# and may move a checked-out branch (whose working tree the checkout check then brings
# along). Programs before scratch directories: a program left running may still write
# into its directory.
CHECKS: tuple[Check, ...] = (
    Check(
        "transactions",
        "ref transactions a kill interrupted (the journal in .git/harnessgit/journal)",
        find_transactions,
        fix_transaction,
    ),
    Check(
        "locks",
        "lock files a killed git left on refs (older than 1 s) and the index (while no git runs there)",
        find_locks_left,
        remove_lock,
    ),
    Check(
        "checkout",
        "a merge or revert --no-gate that moved the checked-out branch but not its working tree",
        find_unfinished_checkout,
        finish_unfinished_checkout,
    ),
    Check(
        "programs",
        "evaluators and proposer commands a killed harnessgit left running",
        find_programs_left,
        kill_program,
    ),
    Check("scratch", "temporary directories a killed harnessgit left", find_scratch_left, remove_scratch),
    Check(
        "index",
        "an index of the notes, or the frontier's pool cache, that does not match them",
        find_bad_index,
        rebuild_index,
    ),
)
