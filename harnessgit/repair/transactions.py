"""`harnessgit doctor`'s checks of what a killed write left in .git: a transaction's
journal (rolled forward or dropped, never guessed at) and the lock files of refs and of
the index."""

from __future__ import annotations

import time
from pathlib import Path

from harnessgit.render import plural, short
from harnessgit.repair.findings import CannotRepair, Finding, shown
from harnessgit.store import Store
from harnessgit.store import journal as journals
from harnessgit.store.locks import INDEX_LOCK, STALE_AFTER, age_text, find_locks, index_lock, read_lock
from harnessgit.store.recovery import Recovery, Step, classify, inspect, lock_paths, roll_forward

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
