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

    .venv/bin/python tests/bench/fault_injection.py --recorder [--kills 270] [--targeted] [--workers 2]

With --recorder the steps are not harnessgit commands but a script recording a real
`gepa.optimize` run through `GitRecorder` (the task of tests/integrations/gepa_task.py:
deterministic, its reflection LM simulated by rules, 40 ms of simulated latency per
evaluate call; 400 metric calls) that never calls `close()`, as the README's example.
The script logs each iteration GEPA ended, with its number of proposals, to a file
outside the repository, before the recorder hears of it. Trials, each on a fresh clone:

- ends: the run ends normally: every iteration GEPA ended must be on record, whole,
  with the run record;
- exits: the adapter calls sys.exit at a random evaluate call (no optimization end, no
  close()): every iteration GEPA ended must be on record, whole;
- kills: SIGKILL of the process group at a random moment of GEPA's run; with
  --targeted also before, during (0.2-4 ms in) and after each of the recorder's ref
  transactions. What is on record must be whole iterations, the first m GEPA ended,
  and the repository consistent (as above).

Outcomes: "whole"; "whole after doctor --fix"; "partial" (an iteration on record with
fewer proposals than GEPA made, or one missing before a recorded one); "missing" (ends
and exits: an iteration GEPA ended, or the run record, not on record); "lost" (a
record seen after the kill gone after doctor --fix); "needs manual repair".
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
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


# -- the GEPA recorder (issue 28, defect 1) -----------------------------------------

ROOT = Path(__file__).resolve().parents[2]
# argv: the repository, the checkout to import from, the log of ended iterations, and
# "end", "exit:N" (sys.exit at evaluate call N) or "kill:N:WHEN:DELAY" (SIGKILL of the
# process group before, during or after the recorder's N-th ref transaction).
RECORDER_SCRIPT = """\
import os, signal, sys, threading, time
sys.path.append(sys.argv[2])  # after PYTHONPATH: set it to measure another checkout
import gepa
from harnessgit.integrations.gepa import GitRecorder
from tests.integrations.gepa_task import SEED, TRAIN, VAL, WordAdapter, reflection_lm

log = open(sys.argv[3], "a")
how = sys.argv[4]

class Ended:
    # each iteration GEPA ended and its proposals, logged before the recorder hears of it
    proposals = 0
    def on_optimization_start(self, event):
        log.write("start\\n")
        log.flush()
    def on_proposal_end(self, event):
        self.proposals += 1
    def on_merge_attempted(self, event):
        self.proposals += 1
    def on_iteration_end(self, event):
        log.write(f"{event['iteration']} {self.proposals}\\n")
        log.flush()
        self.proposals = 0

class Slow(WordAdapter):
    def evaluate(self, batch, candidate, capture_traces=False):
        if how.startswith("exit:") and self.calls == int(how[5:]):
            sys.exit(0)
        time.sleep(0.04)  # a task model's latency: the run spans several of the writer's seconds
        return super().evaluate(batch, candidate, capture_traces)

class Quiet:
    def log(self, message):
        pass

recorder = GitRecorder(sys.argv[1], {"system_prompt": "prompts/system.md", "style": "prompts/style.md"},
                       adapter=WordAdapter(), valset=VAL)
real_commit, commits = recorder.repo.commit, [0]

def commit(txn):
    # every transaction the recorder writes goes through here (one `git update-ref --stdin`
    # session serves them all, so a shim on git would see one call)
    commits[0] += 1
    log.write(f"commit {commits[0]}\\n")
    log.flush()
    if not how.startswith("kill:") or commits[0] != int(how.split(":")[1]):
        return real_commit(txn)
    when, delay = how.split(":")[2:]
    if when == "before":
        os.killpg(0, signal.SIGKILL)
    if when == "during":
        threading.Timer(float(delay), os.killpg, (0, signal.SIGKILL)).start()
    real_commit(txn)
    os.killpg(0, signal.SIGKILL)  # after it (or, during, if it was faster than the timer)

recorder.repo.commit = commit
gepa.optimize(seed_candidate=dict(SEED), trainset=TRAIN, valset=VAL, adapter=Slow(),
              reflection_lm=reflection_lm, max_metric_calls=400, reflection_minibatch_size=3,
              seed=7, callbacks=[Ended(), recorder], logger=Quiet())
"""


def recorder_base(base: Path) -> None:
    """A harness repository holding the GEPA task's seed prompts."""
    (base / "prompts").mkdir(parents=True)
    (base / "prompts" / "system.md").write_text("You are a careful assistant.\n")
    (base / "prompts" / "style.md").write_text("Be brief.\n")
    (base / "harnessgit.toml").write_text('[harness]\npaths = ["prompts/*.md"]\nbase = "main"\n')
    git(base, "init", "-q", "-b", "main")
    git(base, "add", "-A")
    git(base, "commit", "-qm", "The task's prompts")


@dataclass
class Recorded:
    """What a repository holds of GEPA runs."""

    iterations: dict[int, int] = field(default_factory=dict)  # iteration -> proposals on record
    runs: int = 0
    broken: list[str] = field(default_factory=list)  # records naming what is not there


def recorded(repo: Path) -> Recorded:
    found = Recorded()
    refs = git(
        repo,
        "for-each-ref",
        "--format=%(objectname)",
        "refs/heads/harnessgit/cand/",
        "refs/harnessgit/archive/",
    )
    candidates = set(refs.split())
    proposals: set[str] = set()
    commits: set[str] = set()
    for line in records(repo):
        target, _, text = line.partition(" ")
        record = json.loads(text)
        if record.get("kind") == "proposal":
            proposals.add(target)
        elif record.get("kind") == "run":
            found.runs += 1
        elif record.get("kind") == "evolve-iteration":
            number = int(record["iteration"])
            found.iterations.setdefault(number, 0)
            if record["outcome"] not in ("skipped", "error"):  # a task that proposed nothing
                found.iterations[number] += 1
            if record.get("commit"):
                commits.add(record["commit"])
    if candidates != proposals:
        found.broken.append(f"{len(candidates ^ proposals)} candidates without their proposal record")
    if not commits <= candidates:
        found.broken.append("an iteration record names a commit no candidate holds")
    return found


def ended(log: Path) -> dict[int, int]:
    """The iterations GEPA ended, with their proposals, as the script logged them."""
    found: dict[int, int] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():  # a line cut by the kill is no iteration
            found[int(parts[0])] = int(parts[1])
    return found


def judge(repo: Path, log: Path, complete: bool) -> tuple[str, int]:
    """The trial's outcome, and how many iterations GEPA ended are not on record."""
    reported = ended(log)
    before = records(repo)
    found = recorded(repo)
    outcome = "whole"
    if problems(repo) or found.broken:
        print(f"    left by the kill: {'; '.join(problems(repo) + found.broken)}", flush=True)
        hg(repo, "doctor", "--fix", check=False)
        if not before <= records(repo):
            return "lost", 0
        found = recorded(repo)
        if problems(repo) or found.broken:
            print(f"    {repo}: {'; '.join(problems(repo) + found.broken)}", flush=True)
            return "needs manual repair", 0
        outcome = "whole after doctor --fix"
    on_record = found.iterations
    last = max(on_record, default=0)
    wrong = {
        n: (on_record.get(n), count)
        for n, count in reported.items()
        if n <= last and on_record.get(n) != count
    }
    if wrong or not set(on_record) <= set(reported):
        print(f"    {repo}: iterations (on record, GEPA's): {dict(list(wrong.items())[:4])}", flush=True)
        return "partial", 0
    behind = len(set(reported) - set(on_record))
    if complete and behind:
        return "missing", behind
    if complete and log.name == "ended-end.log" and found.runs != 1:
        return "missing", behind  # the run record
    return outcome, behind


def recorder_trial(base: Path, where: Path, how: str, delay: float | None) -> tuple[str, int, float, int]:
    """One run of the recorder script on a fresh clone (``how``: see RECORDER_SCRIPT),
    killed ``delay`` seconds after GEPA started unless None. Returns the outcome, the
    iterations GEPA ended not on record, the seconds GEPA ran and the recorder's ref
    transactions."""
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    repo = where / "repo"
    git(where, "clone", "-q", str(base), str(repo))
    script, log = where / "record.py", where / f"ended-{how.partition(':')[0]}.log"
    script.write_text(RECORDER_SCRIPT)
    process = subprocess.Popen(
        [sys.executable, str(script), str(repo), str(ROOT), str(log), how],
        cwd=where,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    # Delays count from GEPA's start: the imports take seconds on a busy machine.
    while process.poll() is None and not (log.exists() and log.read_text().startswith("start")):
        time.sleep(0.005)
    started = time.monotonic()
    if delay is not None:
        time.sleep(delay)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    code = process.wait()
    seconds = time.monotonic() - started
    outcome, behind = judge(repo, log, complete=code != -signal.SIGKILL)
    commits = sum(1 for line in log.read_text().splitlines() if line.startswith("commit "))
    return outcome, behind, seconds, commits


Trial = tuple[str, str, "float | None"]  # kind, how, delay


def recorder_trials(
    seconds: float, commits: int, kills: int, targeted: bool, rng: random.Random
) -> list[Trial]:
    trials: list[Trial] = [("ends", "end", None)] * max(kills // 20, 2)
    # the task's run makes 75 evaluate calls
    trials += [("exits", f"exit:{rng.randint(2, 74)}", None) for _ in range(max(kills // 10, 3))]
    trials += [("kills", "end", rng.uniform(0.0, seconds)) for _ in range(kills)]
    for number in range(1, commits + 1) if targeted else ():
        for when, delay in WHEN:
            trials.append(("kills at a transaction", f"kill:{number}:{when}:{delay}", None))
    return trials


def recorder_runs(
    base: Path, tmp: Path, kills: int, targeted: bool, workers: int, rng: random.Random
) -> dict[str, int]:
    """Every recorder trial, ``workers`` at a time; prints a line per kind of trial."""
    _outcome, _behind, seconds, commits = recorder_trial(base, tmp / "timing", "end", None)
    trials = recorder_trials(seconds, commits, kills, targeted, rng)
    print(
        f"recorder: GEPA's run takes {seconds:.2f} s, {commits} ref transactions; {len(trials)} trials",
        flush=True,
    )

    def one(index: int) -> tuple[str, str, int]:
        kind, how, delay = trials[index]
        where = tmp / f"trial{index}"
        outcome, behind, _seconds, _commits = recorder_trial(base, where, how, delay)
        shutil.rmtree(where, ignore_errors=True)
        return kind, outcome, behind

    table: dict[str, dict[str, int]] = {}
    lag: dict[str, list[int]] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for kind, outcome, behind in pool.map(one, range(len(trials))):
            table.setdefault(kind, {})[outcome] = table.get(kind, {}).get(outcome, 0) + 1
            lag.setdefault(kind, []).append(behind)
    totals: dict[str, int] = {}
    for kind, outcomes in table.items():
        shown = ", ".join(f"{name} {count}" for name, count in sorted(outcomes.items()))
        late = lag[kind]
        print(
            f"{kind:<22} {sum(outcomes.values()):>4} trials: {shown}; iterations GEPA ended not on"
            f" record: mean {sum(late) / len(late):.2f}, max {max(late)}",
            flush=True,
        )
        for name, count in outcomes.items():
            totals[name] = totals.get(name, 0) + count
    return totals


def recorder_main(kills: int, targeted: bool, workers: int, rng: random.Random) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        recorder_base(base)
        totals = recorder_runs(base, Path(tmp), kills, targeted, workers, rng)
    shown = ", ".join(f"{name} {count}" for name, count in sorted(totals.items()))
    print(f"total {sum(totals.values())} trials: {shown}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=8, help="kills per step")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", default="", help="comma-separated step names (default: all)")
    parser.add_argument("--targeted", action="store_true", help="kill around every update-ref call")
    parser.add_argument(
        "--index-lock", action="store_true", help="kill around every git that writes the index"
    )
    parser.add_argument("--recorder", action="store_true", help="the GEPA recorder, not the steps")
    parser.add_argument("--workers", type=int, default=1, help="recorder trials at a time")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    if args.recorder:
        recorder_main(args.kills, args.targeted, args.workers, rng)
        return
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
