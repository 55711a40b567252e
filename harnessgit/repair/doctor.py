"""`harnessgit doctor`: what a killed harnessgit (or git) left behind, and the repair.

A list of checks, each a pair of functions: ``find`` looks (changing nothing) and
returns findings, ``fix`` repairs one finding and says what it did, or raises
`CannotRepair` when that would take a guess. The checks run in order, each looking
after the fixes of those before it: rolling a transaction forward removes its own lock
files, so the lock check that follows sees only the others. A new check is one more
`Check` in `CHECKS`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from harnessgit import layout
from harnessgit.candidates import history_verdicts
from harnessgit.config import Config, load_config
from harnessgit.errors import HarnessgitError
from harnessgit.gate import pool_cache
from harnessgit.gate.checkout import describe, finish_checkout, finished_line, unfinished_checkout
from harnessgit.processes import scratch as scratch_dirs
from harnessgit.render import listing, plural, short
from harnessgit.store import Store, retired
from harnessgit.store import index as notes_index
from harnessgit.store import journal as journals
from harnessgit.store.locks import INDEX_LOCK, STALE_AFTER, age_text, find_locks, index_lock, read_lock
from harnessgit.store.recovery import Recovery, Step, classify, inspect, lock_paths, roll_forward
from harnessgit.targets import candidate_tips


class CannotRepair(HarnessgitError):
    """A fix that would have to guess: the finding stays, with this as the reason."""


@dataclass(frozen=True)
class Finding:
    check: str  # the name of the check that found it
    subject: str  # what it is about: a path, relative to the repository where it lies inside
    problem: str  # what is wrong, one line
    fix: str  # what `--fix` does about it, or what to do by hand
    fixable: bool  # whether `--fix` repairs it without guessing
    details: tuple[str, ...] = ()  # more lines: a transaction's ref updates
    fixed: bool = False  # repaired by this run's --fix
    outcome: str = ""  # what --fix did, or why it could not


@dataclass(frozen=True)
class Check:
    name: str
    about: str  # what it looks for, one line (docs/cli.md lists them)
    find: Callable[[Store], list[Finding]]
    fix: Callable[[Store, Finding], str]


@dataclass(frozen=True)
class DoctorReport:
    checks: tuple[str, ...]  # the checks that ran, in order
    fixing: bool  # --fix
    findings: tuple[Finding, ...]

    JSON_EXTRA = ("healthy",)

    @property
    def healthy(self) -> bool:
        """Nothing found, or everything found repaired."""
        return all(finding.fixed for finding in self.findings)


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


def shown(store: Store, path: Path) -> str:
    """A path as findings name it: relative to the repository when inside it."""
    try:
        return str(path.relative_to(store.root))
    except ValueError:
        return str(path)


# -- interrupted transactions ------------------------------------------------


def find_transactions(store: Store) -> list[Finding]:
    found = []
    for entry in journals.entries(store.journal_dir):
        if entry.interrupted():
            try:
                found.append(_interrupted(store, inspect(store.refs, entry)))
            except journals.JournalError as exc:
                subject = shown(store, entry.path)
                fix = f"none without guessing: read it, then delete {subject}"
                found.append(Finding("transactions", subject, str(exc), fix, fixable=False))
        elif entry.age() >= journals.FOREIGN_HOST_AFTER:
            where = f"process {entry.owner.pid}" + (
                f" on {entry.owner.host}" if entry.owner.alive() is None else ", still running"
            )
            found.append(
                Finding(
                    "transactions",
                    shown(store, entry.path),
                    f"a transaction in flight for {age_text(entry.age())} in {where}",
                    "if that process hangs, stop it, then run `harnessgit doctor --fix`",
                    fixable=False,
                )
            )
    for scratch in journals.scratch_files(store.journal_dir):
        lock = read_lock(scratch)
        if lock is not None and lock.stale:
            found.append(
                Finding(
                    "transactions",
                    shown(store, scratch),
                    "half-written journal of a transaction killed before it started",
                    "remove it",
                    fixable=True,
                )
            )
    return found


def _interrupted(store: Store, recovery: Recovery) -> Finding:
    if recovery.verdict == "blocked":
        fix = f"none without guessing: check the refs above, then delete {shown(store, recovery.journal)}"
    elif recovery.verdict == "discard":
        fix = "drop its journal (it changed no ref)"
    elif recovery.pending:
        fix = f"roll it forward: apply the {plural(len(recovery.pending), 'pending update')}"
    else:
        fix = "remove its journal (every update landed)"
    if recovery.locks:
        fix += f", removing the {plural(len(recovery.locks), 'lock file')} the killed git left"
    return Finding(
        "transactions",
        shown(store, recovery.journal),
        recovery.summary(),
        fix,
        fixable=recovery.verdict != "blocked",
        details=tuple(_step_line(step) for step in recovery.steps)
        + tuple(f"lock {shown(store, lock.path)} ({age_text(lock.age)} old)" for lock in recovery.locks),
    )


def _step_line(step: Step) -> str:
    def value(sha: str | None) -> str:
        return short(sha) if sha and sha.strip("0") else "(none)"

    wanted = "(any)" if step.old is None else value(step.old)
    return f"{step.ref}: {wanted} -> {value(step.new)}, now {value(step.now)}: {step.state}"


def fix_transaction(store: Store, finding: Finding) -> str:
    path = Path(store.root, finding.subject)
    if path.name.endswith(".tmp"):
        path.unlink(missing_ok=True)
        return f"removed {finding.subject}"
    entry = next((e for e in journals.entries(store.journal_dir) if e.path == path), None)
    if entry is None:
        return "already finished by another process"
    recovery = roll_forward(store.refs, entry)
    if recovery is None:
        return "already taken over by another process"
    if not recovery.finished:
        why = f"; git would not apply the rest: {recovery.refused}" if recovery.refused else ""
        raise CannotRepair(recovery.summary() + why)
    if recovery.verdict == "discard":
        return "dropped its journal"
    return f"applied {plural(len(recovery.pending), 'pending update')}, removed its journal"


# -- stale locks -------------------------------------------------------------


def find_locks_left(store: Store) -> list[Finding]:
    """Stale locks, but those of an interrupted transaction that can be finished: rolling
    it forward removes them (the transactions check lists them with it)."""
    owned: set[Path] = set()
    for entry in journals.entries(store.journal_dir):
        if entry.interrupted():
            try:
                moves = entry.read().moves
            except journals.JournalError:
                continue
            if classify(store.refs, moves)[1] != "blocked":
                owned.update(lock_paths(store.refs, moves))
    found = [
        Finding(
            "locks",
            shown(store, lock.path),
            f"stale lock, {age_text(lock.age)} old: no live git holds a ref lock that long, "
            "and it blocks every write to its ref",
            "remove it",
            fixable=True,
        )
        for lock in find_locks(store.common_dir, store.git_dir)
        if lock.stale and lock.path not in owned
    ]
    return found + _index_lock_left(store)


def _index_lock_left(store: Store) -> list[Finding]:
    """The checkout's index.lock, when a killed git left it (issue 28, defect 2: a merge
    killed inside its checkout left one, and every later landing failed on it). One a
    running git holds (`git commit` while its editor is open) is no problem."""
    held = index_lock(store.git_dir, store.root)
    if held is not None and held.holders == () and not held.lock.stale:
        # Young, and no git runs here: a git killed just now (doctor right after a kill),
        # or one starting. Wait until it is old enough to judge, as git waits for a ref lock.
        time.sleep(max(0.0, STALE_AFTER - held.lock.age))
        held = index_lock(store.git_dir, store.root)
    if held is None or not held.lock.stale or held.holders:
        return []
    subject, age = shown(store, held.lock.path), age_text(held.lock.age)
    if held.holders is None:
        problem = f"index lock, {age} old: whether a git still holds it cannot be told here"
        return [
            Finding("locks", subject, problem, "if no git runs in this checkout, remove it", fixable=False)
        ]
    problem = (
        f"stale index lock, {age} old, and no git runs in this checkout: every command that "
        "writes the index (git add, git commit, a merge's checkout) fails on it"
    )
    return [Finding("locks", subject, problem, "remove it", fixable=True)]


def remove_lock(store: Store, finding: Finding) -> str:
    path = Path(store.root, finding.subject)
    # Read again: since it was found the lock may have gone, been taken anew, or (the
    # index lock) a git may have started.
    if path == store.git_dir / INDEX_LOCK:
        held = index_lock(store.git_dir, store.root)
        live = None if held is None or held.stale else held.why(store.root)
        return _remove_stale(path, finding, gone=held is None, live=live)
    lock = read_lock(path)
    live = None if lock is None or lock.stale else f"taken anew {age_text(lock.age)} ago, by a live writer"
    return _remove_stale(path, finding, gone=lock is None, live=live)


def _remove_stale(path: Path, finding: Finding, *, gone: bool, live: str | None) -> str:
    """Remove a lock read again just now, unless it is gone or ``live`` says who holds it."""
    if gone:
        return "already gone"
    if live is not None:
        raise CannotRepair(f"{live}: left alone")
    path.unlink(missing_ok=True)
    return f"removed {finding.subject}"


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
