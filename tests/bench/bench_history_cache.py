"""The history audit's caches (issue 27): `log --all-history` first run, repeat runs, and
the baselines, side by side in one run on one clone.

    python tests/bench/bench_history_cache.py /work/.mirror/Piebald-AI+claude-code-system-prompts/repo \\
        --baseline /tmp/harnessgit-before [--baseline /tmp/another-before]

Clones SOURCE into a temporary directory and commits the harnessgit.toml that
`harnessgit init` writes there (as a team adopting harnessgit would). Every harnessgit
tree timed is compiled to bytecode first (``compileall``), as an installed package is:
with PYTHONDONTWRITEBYTECODE set, each process would otherwise compile every module it
imports. Then, one after the other on that clone: ``git log --first-parent --raw``
(reads what every commit changed, checks nothing); for each ``--baseline``, the audit by
the harnessgit code in that folder (a checkout of an earlier commit, run with it first
on PYTHONPATH, its cache files removed before); the audit by this code with its caches
removed (first run); again with the caches it wrote (repeat run); and again with only
the per-commit cache (the last output removed: what a run after a branch or label
moved pays, less the commits it has not judged); and again with only the per-version
verdict cache (`check-verdicts`: the per-commit cache and the last output removed, as
after a label moved, which changes the per-commit cache's fingerprint). Each is a real
process, start-up included; the short ones (git log and the two repeat runs) run
``--runs`` times and their medians are shown. With ``--repeat-baseline``, that tree's
repeat run too (after one audit of its own writes its caches), before this code's
first run. Prints wall and CPU seconds (user +
system of the process and the git processes it waited for: on a loaded machine wall
time says little), the load average, whether the outputs are identical, and the
ratios. Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(".git/harnessgit/index/history-checks")
OUTPUT = Path(".git/harnessgit/index/history-output")
VERDICTS = Path(".git/harnessgit/index/check-verdicts")


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of one process (its children included), and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def median_of(runs: int, argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """`timed`'s median wall and median CPU over ``runs`` runs (a short process's time on
    a loaded machine varies by tens of milliseconds), and the last output."""
    times = [timed(argv, cwd, env) for _ in range(runs)]
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times), times[-1][2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="a git repository (e.g. a /work/.mirror/OWNER+NAME/repo mirror)")
    parser.add_argument(
        "--baseline", action="append", default=[], help="a folder holding an earlier harnessgit/ package"
    )
    parser.add_argument(
        "--repeat-baseline",
        action="append",
        default=[],
        help="a folder holding an earlier harnessgit/ package whose repeat run (its caches "
        "written by one audit first) is timed too, before this code's",
    )
    parser.add_argument("--runs", type=int, default=7, help="runs of each short process (median)")
    args = parser.parse_args()
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.com"}
    env |= {"GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.com"}
    mine = {**env, "PYTHONPATH": str(ROOT)}
    audit = [sys.executable, "-m", "harnessgit", "log", "--all-history"]
    for tree in [ROOT, *map(Path, args.baseline)]:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "harnessgit")], check=True)
    outputs: dict[str, str] = {}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", args.source, str(clone)], check=True)
        subprocess.run([sys.executable, "-m", "harnessgit", "-q", "init"], cwd=clone, env=mine, check=True)
        subprocess.run(["git", "add", "harnessgit.toml"], cwd=clone, check=True)
        subprocess.run(["git", "commit", "-qm", "harnessgit.toml"], cwd=clone, env=env, check=True)
        count = ["git", "rev-list", "--count", "--first-parent", "HEAD"]
        commits = subprocess.run(count, cwd=clone, capture_output=True, text=True).stdout.strip()
        head = subprocess.run(["git", "rev-parse", "HEAD~1"], cwd=clone, capture_output=True, text=True)
        log = median_of(args.runs, ["git", "log", "--first-parent", "--raw"], clone, env)
        rows = [("git log --first-parent --raw", log[0], log[1])]
        for number, folder in enumerate(args.baseline, start=1):
            for path in (CACHE, OUTPUT, VERDICTS):
                (clone / path).unlink(missing_ok=True)
            base = {**env, "PYTHONPATH": str(Path(folder).resolve())}
            wall, cpu, outputs[f"baseline {number}"] = timed(audit, clone, base)
            rows.append((f"audit, baseline {number}", wall, cpu))
        for number, folder in enumerate(args.repeat_baseline, start=1):
            for path in (CACHE, OUTPUT, VERDICTS):
                (clone / path).unlink(missing_ok=True)
            base = {**env, "PYTHONPATH": str(Path(folder).resolve())}
            timed(audit, clone, base)  # writes that tree's caches
            wall, cpu, outputs[f"repeat baseline {number}"] = median_of(args.runs, audit, clone, base)
            rows.append((f"repeat run, repeat baseline {number}", wall, cpu))
        for path in (CACHE, OUTPUT, VERDICTS):
            (clone / path).unlink(missing_ok=True)
        wall, cpu, outputs["first"] = timed(audit, clone, mine)
        rows.append(("audit, first run (no cache)", wall, cpu))
        wall, cpu, outputs["repeat"] = median_of(args.runs, audit, clone, mine)
        rows.append(("audit, repeat run (caches)", wall, cpu))
        per_commit = []
        for _ in range(args.runs):  # each run writes the last output again: removed before each
            (clone / OUTPUT).unlink(missing_ok=True)
            per_commit.append(timed(audit, clone, mine))
        wall, cpu = statistics.median(t[0] for t in per_commit), statistics.median(t[1] for t in per_commit)
        outputs["per-commit"] = per_commit[-1][2]
        rows.append(("audit, per-commit cache only", wall, cpu))
        for path in (CACHE, OUTPUT):
            (clone / path).unlink(missing_ok=True)
        wall, cpu, outputs["verdicts"] = timed(audit, clone, mine)
        rows.append(("audit, verdict cache only", wall, cpu))
        size = (clone / CACHE).stat().st_size, (clone / VERDICTS).stat().st_size
    source = f"{args.source} at {head.stdout.strip()}"
    print(f"{source}: {commits} first-parent commits; caches {size[0] / 1e6:.2f} MB + {size[1] / 1e6:.2f} MB")
    print(f"load average before and after: {load} -> {os.getloadavg()}")
    for name, text in outputs.items():
        print(f"output of {name}: identical to the first run's: {text == outputs['first']}")
    print(f"{'':32} {'wall s':>8} {'cpu s':>8}")
    for name, wall, cpu in rows:
        print(f"{name:32} {wall:8.2f} {cpu:8.3f}")
    named = {name: (wall, cpu) for name, wall, cpu in rows}
    git_log = named["git log --first-parent --raw"]
    repeats = [f"repeat run, repeat baseline {number}" for number in range(1, len(args.repeat_baseline) + 1)]
    for name in (
        *repeats,
        "audit, repeat run (caches)",
        "audit, per-commit cache only",
        "audit, verdict cache only",
    ):
        wall, cpu = named[name][0] / git_log[0], named[name][1] / max(git_log[1], 1e-3)
        print(f"{name} / git log: wall {wall:.1f}x, cpu {cpu:.1f}x")
    first_run = named["audit, first run (no cache)"]
    for number in range(1, len(args.baseline) + 1):
        baseline = named[f"audit, baseline {number}"]
        wall, cpu = baseline[0] / first_run[0], baseline[1] / first_run[1]
        name = f"baseline {number} ({args.baseline[number - 1]})"
        print(f"{name} / first run: wall {wall:.2f}x, cpu {cpu:.2f}x")
    for number, folder in enumerate(args.repeat_baseline, start=1):
        print(f"repeat baseline {number}: {folder}")


if __name__ == "__main__":
    main()
