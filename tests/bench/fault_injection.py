"""Kill harnessgit at random moments of every writing step, then see what is left.

    .venv/bin/python tests/bench/fault_injection.py [--kills 8] [--seed 0] [--steps propose,eval,...]
    .venv/bin/python tests/bench/fault_injection.py --targeted
    .venv/bin/python tests/bench/fault_injection.py --index-lock [--steps merge,revert]

With --targeted the kills are not random: a `git` shim on PATH counts the step's
`git update-ref` calls (every ref and note harnessgit writes goes through one) and, for
each call, kills the process group just before it, just after it, and while it runs (a
few milliseconds in): every commit point of every step.

With --index-lock the shim counts instead the gits that write the checkout's own index
(`update-index`, `read-tree`, `status`) and kills around each the same way: a kill while
one runs leaves `.git/index.lock` (issue 28, defect 2).

A repository is built once from templates/triage (the demo's harness, evaluator and
simulated proposer). For each step (propose, eval, gate, merge, revert --no-gate,
label, evolve) the step is first run whole, to time it; then, on a fresh copy of the
repository each time, the step is started as a real process in its own session and
its whole process group gets SIGKILL after a random delay within that time (a CI
cancel, a container stop). After each kill:

- clean: the repository is consistent as it is (below);
- repaired by rerun: running the same command again (and `harnessgit doctor --fix`
  where that command exists) succeeds and leaves it consistent;
- needs manual repair: still inconsistent after that;
- lost: a record visible right after the kill is gone after the rerun.

Consistent means: `git fsck` is clean, no `*.lock` file is left in the git directory,
no candidate is both live and archived, no harnessgit journal entry is pending, and
the index equals HEAD outside the files the step's user had edited.

Which code runs is whatever `python -m harnessgit` imports: set PYTHONPATH to a
checkout to measure it. Prints one line per step and the totals.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parents[2] / "templates" / "triage"
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "fault",
    "GIT_AUTHOR_EMAIL": "fault@example.invalid",
    "GIT_COMMITTER_NAME": "fault",
    "GIT_COMMITTER_EMAIL": "fault@example.invalid",
}


def run(repo: Path, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=repo, env=ENV, capture_output=True, text=True, check=check)


def hg(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run(repo, sys.executable, "-m", "harnessgit", *args, check=check)


def git(repo: Path, *args: str) -> str:
    return run(repo, "git", *args).stdout.strip()


@dataclass
class Step:
    name: str
    argv: list[str]
    prepare: list[list[str]] = field(default_factory=list)  # harnessgit commands run first, unkilled
    edits: bool = False  # the step starts from a user's edit to SKILL.md in the working tree


# Rules the demo's evolve run found (+22.5 points together): a candidate the gate passes.
RULES = [
    ("change", "account"),
    ("email", "account"),
    ("blocking", "account"),
    ("error", "bug"),
    ("dashboard", "bug"),
    ("extra", "billing"),
    ("ownership", "account"),
    ("changed", "billing"),
    ("freezes", "bug"),
    ("duplicated", "bug"),
]
ANCHOR = '- If the ticket mentions "crash", route to bug.\n'


def build(base: Path) -> None:
    """The demo's harness repository, its base evaluated, with one ungated direct commit
    on main for `revert --no-gate` to revert."""
    shutil.copytree(TEMPLATE, base)
    git(base, "init", "-q", "-b", "main")
    git(base, "add", "-A")
    git(base, "commit", "-qm", "The triage skill")
    (base / "SKILL.md").write_text((base / "SKILL.md").read_text() + "\nKeep answers short.\n")
    git(base, "commit", "-qam", "Hotfix: keep answers short")
    hg(base, "eval", "main")


def edit_skill(repo: Path) -> None:
    path = repo / "SKILL.md"
    text = path.read_text()
    assert ANCHOR in text, "the template's rules changed: update ANCHOR"
    extra = "".join(f'- If the ticket mentions "{word}", route to {queue}.\n' for word, queue in RULES)
    path.write_text(text.replace(ANCHOR, ANCHOR + extra))


def steps() -> list[Step]:
    propose = ["propose", "-m", "Ten routing rules from the failures"]
    return [
        Step("propose", propose, edits=True),
        Step("eval", ["eval", "@cand"], [propose], edits=True),
        Step("gate", ["gate", "@cand"], [propose, ["eval", "@cand"]], edits=True),
        Step("merge", ["merge", "@cand"], [propose, ["eval", "@cand"]], edits=True),
        Step("revert", ["revert", "main", "--no-gate", "--reason", "fault injection"]),
        Step("label", ["label", "production", "main", "--reason", "fault injection"]),
        Step("evolve", ["evolve", "--max-proposals", "2", "--seed", "1"]),
    ]


def candidate(repo: Path) -> str:
    out = git(repo, "for-each-ref", "--format=%(refname:strip=4)", "refs/heads/harnessgit/cand/")
    return out.split()[-1] if out else ""


def resolved(repo: Path, argv: list[str]) -> list[str]:
    cand = candidate(repo)
    return [cand if arg == "@cand" else arg for arg in argv]


def fresh(base: Path, where: Path, step: Step) -> Path:
    repo = where / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(base, repo, symlinks=True)
    if step.edits:
        edit_skill(repo)
    for argv in step.prepare:
        hg(repo, *resolved(repo, argv))
    # Packed refs, as in any repository that has seen `git gc`: deleting one (retiring a
    # candidate) then rewrites packed-refs under its lock, the widest window there is.
    git(repo, "pack-refs", "--all")
    return repo


def records(repo: Path) -> set[str]:
    """Every record line in every harnessgit notes ref, with the commit it annotates."""
    found: set[str] = set()
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/notes/harnessgit/").split()
    for ref in refs:
        for line in git(repo, "notes", "--ref", ref, "list").splitlines():
            _blob, target = line.split()
            for record in git(repo, "notes", "--ref", ref, "show", target).splitlines():
                found.add(f"{target} {record}")
    return found


def problems(repo: Path) -> list[str]:
    found = []
    if run(repo, "git", "fsck", "--no-dangling", check=False).returncode != 0:
        found.append("fsck")
    gitdir = repo / ".git"
    locks = [str(p.relative_to(gitdir)) for p in gitdir.rglob("*.lock")]
    if locks:
        found.append(f"locks {locks[:3]}")
    live = set(
        git(repo, "for-each-ref", "--format=%(refname:strip=4)", "refs/heads/harnessgit/cand/").split()
    )
    archived = set(
        git(repo, "for-each-ref", "--format=%(refname:strip=3)", "refs/harnessgit/archive/").split()
    )
    if live & archived:
        found.append(f"live and archived {sorted(live & archived)[:2]}")
    journal = gitdir / "harnessgit" / "journal"
    if journal.is_dir() and any(journal.iterdir()):
        found.append("journal pending")
    # The user edits the working tree and never stages: a finished step leaves the index
    # at HEAD (a merge stages what it lands, as a fast-forward would).
    staged = git(repo, "diff", "--cached", "--name-only", "HEAD").split()
    if staged:
        found.append(f"index differs from HEAD {staged[:3]}")
    return found


def settle(repo: Path, argv: list[str]) -> bool:
    """Rerun the step (and doctor --fix when there is one); True when the rerun succeeded.

    ``argv`` is the step as resolved before the kill: resolved again, ``@cand`` would
    name no candidate (the killed merge may have archived it) and ``revert main`` the
    tip the killed revert made, so the rerun would be a different step."""
    hg(repo, "doctor", "--fix", check=False)  # an older harnessgit has none: the rerun must repair
    rerun = hg(repo, *argv, check=False)
    if rerun.returncode in (0, 1):  # 1: the gate's honest "no" is a finished step
        return True
    said = (rerun.stderr.strip().splitlines() or [""])[-1]
    print(f"    rerun of {' '.join(argv[:2])} exited {rerun.returncode}: {said[:300]}", flush=True)
    return False


SHIM = """#!/bin/sh
# fault_injection.py: kill this process group around the FAULT_CALL-th `git update-ref`.
case " $* " in
*" update-ref "*)
    n=$(( $(cat "$FAULT_COUNTER" 2>/dev/null || echo 0) + 1 ))
    echo "$n" > "$FAULT_COUNTER"
    if [ "$n" = "$FAULT_CALL" ]; then
        case "$FAULT_WHEN" in
        before) kill -KILL 0 ;;
        after) "$REAL_GIT" "$@"; kill -KILL 0 ;;
        during) "$REAL_GIT" "$@" <&0 & sleep "$FAULT_DELAY"; kill -KILL 0 ;;
        esac
    fi ;;
esac
exec "$REAL_GIT" "$@"
"""


def shim(where: Path) -> dict[str, str]:
    """An environment whose `git` is the shim, counting into a fresh counter file."""
    bin_dir = where / "shim"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "git").write_text(SHIM)
    (bin_dir / "git").chmod(0o755)
    counter = where / "counter"
    counter.unlink(missing_ok=True)
    real = shutil.which("git")
    assert real, "git is not on PATH"
    return {"PATH": f"{bin_dir}:{ENV['PATH']}", "REAL_GIT": real, "FAULT_COUNTER": str(counter)}


def trial(base: Path, where: Path, step: Step, delay: float, extra: dict[str, str] | None = None) -> str:
    repo = fresh(base, where, step)
    argv = resolved(repo, step.argv)
    process = subprocess.Popen(
        [sys.executable, "-m", "harnessgit", *argv],
        cwd=repo,
        env={**ENV, **(extra or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    if extra is None:
        time.sleep(delay)
        with contextlib.suppress(ProcessLookupError):  # it may have finished already
            os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    before = records(repo)
    if not problems(repo):
        return "clean"
    settled = settle(repo, argv)
    if not before <= records(repo):
        return "lost"
    left = problems(repo)
    if settled and not left:
        return "repaired by rerun"
    if left:
        print(f"    left after the rerun: {'; '.join(left)}", flush=True)
    return "needs manual repair"


# Around each update-ref: before it, while it runs (its locks are taken within about a
# millisecond; a few delays land at different moments of its commit), and after it.
WHEN = [
    ("before", "0"),
    *(("during", delay) for delay in ("0.0002", "0.0005", "0.001", "0.002", "0.004")),
    ("after", "0"),
]


def update_refs(base: Path, where: Path, step: Step) -> int:
    """How many `git update-ref` calls the step makes, run whole under the shim."""
    repo = fresh(base, where, step)
    env = {**ENV, **shim(where), "FAULT_CALL": "0"}
    subprocess.run(
        [sys.executable, "-m", "harnessgit", *resolved(repo, step.argv)],
        cwd=repo,
        env=env,
        capture_output=True,
    )
    return int((where / "counter").read_text()) if (where / "counter").exists() else 0


def targeted(base: Path, where: Path, chosen: list[Step]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for step in chosen:
        calls = update_refs(base, where, step)
        outcomes: dict[str, int] = {}
        for call in range(1, calls + 1):
            for when, delay in WHEN:
                env = {**shim(where), "FAULT_CALL": str(call), "FAULT_WHEN": when, "FAULT_DELAY": delay}
                outcome = trial(base, where, step, 0.0, env)
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                totals[outcome] = totals.get(outcome, 0) + 1
                if outcome not in ("clean", "repaired by rerun"):
                    print(f"  {step.name}: update-ref {call}/{calls} {when}: {outcome}", flush=True)
        shown = ", ".join(f"{name} {count}" for name, count in sorted(outcomes.items()))
        print(f"{step.name:<8} ({calls} update-ref calls, {len(WHEN) * calls} kills): {shown}", flush=True)
    return totals


# -- kills around the index lock (issue 28, defect 2) ------------------------------

INDEX_SHIM = """#!/bin/sh
# fault_injection.py: kill this process group around the FAULT_CALL-th git that writes
# the checkout's own index (so takes .git/index.lock): update-index, read-tree, status
# (which refreshes the index when it can). A throw-away index (GIT_INDEX_FILE) is not it.
if [ -z "$GIT_INDEX_FILE" ]; then
case " $* " in
*" update-index "*|*" read-tree "*|*" status "*)
    n=$(( $(cat "$FAULT_COUNTER" 2>/dev/null || echo 0) + 1 ))
    echo "$n" > "$FAULT_COUNTER"
    if [ "$n" = "$FAULT_CALL" ]; then
        case "$FAULT_WHEN" in
        before) kill -KILL 0 ;;
        after) "$REAL_GIT" "$@"; kill -KILL 0 ;;
        during) "$REAL_GIT" "$@" <&0 & sleep "$FAULT_DELAY"; kill -KILL 0 ;;
        held)
            # The moment git holds the lock (or, if it never takes it, about 50 ms on).
            "$REAL_GIT" "$@" <&0 &
            i=0
            while [ ! -e .git/index.lock ] && [ "$i" -lt 20000 ]; do i=$((i + 1)); done
            kill -KILL 0 ;;
        esac
    fi ;;
esac
fi
exec "$REAL_GIT" "$@"
"""

# Around each index write: before it, the moment it holds index.lock, a few moments
# into it, and after it.
INDEX_WHEN = [
    ("before", "0"),
    ("held", "0"),
    *(("during", delay) for delay in ("0.002", "0.008", "0.03")),
    ("after", "0"),
]


def index_shim(where: Path) -> dict[str, str]:
    """An environment whose `git` is the index shim, counting into a fresh counter file."""
    bin_dir = where / "index-shim"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "git").write_text(INDEX_SHIM)
    (bin_dir / "git").chmod(0o755)
    counter = where / "counter"
    counter.unlink(missing_ok=True)
    real = shutil.which("git")
    assert real, "git is not on PATH"
    return {"PATH": f"{bin_dir}:{ENV['PATH']}", "REAL_GIT": real, "FAULT_COUNTER": str(counter)}


def index_writes(base: Path, where: Path, step: Step) -> int:
    """How many gits that write the checkout's index the step starts, run whole."""
    repo = fresh(base, where, step)
    env = {**ENV, **index_shim(where), "FAULT_CALL": "0"}
    subprocess.run(
        [sys.executable, "-m", "harnessgit", *resolved(repo, step.argv)],
        cwd=repo,
        env=env,
        capture_output=True,
    )
    return int((where / "counter").read_text()) if (where / "counter").exists() else 0


def targeted_index(base: Path, where: Path, chosen: list[Step]) -> dict[str, int]:
    """Kill before, while and after each git that takes the index lock: a kill while it
    runs leaves .git/index.lock, which only `doctor --fix` removes (and `merge` must
    refuse before it moves the branch)."""
    totals: dict[str, int] = {}
    for step in chosen:
        calls = index_writes(base, where, step)
        if not calls:
            continue
        outcomes: dict[str, int] = {}
        for call in range(1, calls + 1):
            for when, delay in INDEX_WHEN:
                env = {**index_shim(where), "FAULT_CALL": str(call), "FAULT_WHEN": when, "FAULT_DELAY": delay}
                outcome = trial(base, where, step, 0.0, env)
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                totals[outcome] = totals.get(outcome, 0) + 1
                if outcome not in ("clean", "repaired by rerun"):
                    print(f"  {step.name}: index write {call}/{calls} {when}: {outcome}", flush=True)
        shown = ", ".join(f"{name} {count}" for name, count in sorted(outcomes.items()))
        print(f"{step.name:<8} ({calls} index writes, {len(INDEX_WHEN) * calls} kills): {shown}", flush=True)
    return totals


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=8, help="kills per step")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", default="", help="comma-separated step names (default: all)")
    parser.add_argument("--targeted", action="store_true", help="kill around every update-ref call")
    parser.add_argument(
        "--index-lock", action="store_true", help="kill around every git that writes the index"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    chosen = [s for s in steps() if not args.steps or s.name in args.steps.split(",")]
    totals: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        build(base)
        if args.targeted:
            totals = targeted(base, Path(tmp), chosen)
        if args.index_lock:
            totals = targeted_index(base, Path(tmp), chosen)
        for step in [] if args.targeted or args.index_lock else chosen:
            repo = fresh(base, Path(tmp), step)
            started = time.monotonic()
            hg(repo, *resolved(repo, step.argv), check=False)
            whole = time.monotonic() - started
            outcomes: dict[str, int] = {}
            for _ in range(args.kills):
                outcome = trial(base, Path(tmp), step, rng.uniform(0.05, whole))
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                totals[outcome] = totals.get(outcome, 0) + 1
            shown = ", ".join(f"{name} {count}" for name, count in sorted(outcomes.items()))
            print(f"{step.name:<8} ({whole:.2f} s whole): {shown}", flush=True)
    shown = ", ".join(f"{name} {count}" for name, count in sorted(totals.items()))
    print(f"total {sum(totals.values())} kills: {shown}")


if __name__ == "__main__":
    main()
