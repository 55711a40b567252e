"""Evaluation benchmarks (issue 3): parallel speed-up, harnessgit's own overhead, the cache.

    python tests/bench/bench_eval.py [--instances 200] [--sleep 0.1]

A sleep-bound evaluator (SLEEP seconds per instance) runs on INSTANCES selection
instances at --jobs 1 and at --jobs 8, in fresh repositories, then once more
from the cache. Prints wall times, the speed-up, harnessgit's own time per
instance (wall time minus the evaluator processes' time, at --jobs 1) and the
evaluator calls of the cached re-run.

The evaluator is a POSIX sh script by default: its start-up costs about a
millisecond, so the speed-up measures harnessgit's scheduling. With --python
it is a Python script, whose ~50 ms of CPU per start-up also competes for the
machine's cores (2 here) when 8 run at once.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

from harnessgit.config import load_config
from harnessgit.evaluation.eval import Execution, evaluate
from harnessgit.store import Store

SH_EVALUATOR = """\
#!/bin/sh
ids=""; n=0
while read -r id; do [ -n "$id" ] && ids="$ids $id" && n=$((n + 1)); done
echo call >> "$CALLS_FILE"
ms=$((n * SLEEP_MS))
sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
for id in $ids; do printf '{"instance": "%s", "score": 1.0, "feedback": "ok"}\\n' "$id"; done
"""

EVALUATOR = """\
import json, os, sys, time
ids = [line.strip() for line in sys.stdin if line.strip()]
with open(os.environ["CALLS_FILE"], "a") as handle:
    handle.write("call\\n")
time.sleep(float(os.environ["SLEEP"]) * len(ids))
for instance in ids:
    print(json.dumps({"instance": instance, "score": 1.0, "feedback": "ok"}))
"""


def make_repo(root: Path, instances: int, python: bool) -> Path:
    repo = root / "repo"
    repo.mkdir()
    command = '["python3", "eval.py"]' if python else '["sh", "eval.sh"]'
    files = {
        "harnessgit.toml": f'[harness]\npaths = ["SKILL.md"]\n[evaluator]\ncommand = {command}\n'
        'batch_size = 10\ntimeout = 600\nenv = ["CALLS_FILE", "SLEEP", "SLEEP_MS"]\n',
        "SKILL.md": "# Skill\n",
        "eval.py": EVALUATOR,
        "eval.sh": SH_EVALUATOR,
        "splits.json": json.dumps(
            {"train": [], "selection": [f"i{n}" for n in range(instances)], "test": []}
        ),
    }
    for name, text in files.items():
        (repo / name).write_text(text)
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "init"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def run(repo: Path, jobs: int) -> tuple[float, float, int]:
    with Store.discover(repo) as store:
        start = time.perf_counter()
        result = evaluate(store, load_config(repo), "main", execution=Execution(jobs=jobs))
        return time.perf_counter() - start, result.evaluator_time, result.batches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=200)
    parser.add_argument("--sleep", type=float, default=0.1)
    parser.add_argument("--python", action="store_true", help="a Python evaluator instead of sh")
    args = parser.parse_args()
    import os

    os.environ["SLEEP"] = str(args.sleep)
    os.environ["SLEEP_MS"] = str(round(args.sleep * 1000))
    with tempfile.TemporaryDirectory(prefix="hg-bench-eval-") as tmp:
        figures = {}
        for jobs in (1, 8):
            root = Path(tmp) / f"jobs{jobs}"
            root.mkdir()
            repo = make_repo(root, args.instances, args.python)
            os.environ["CALLS_FILE"] = str(root / "calls")
            figures[jobs] = run(repo, jobs)
        calls_before = len((root / "calls").read_text().splitlines())
        cached_wall, _evaluator, _batches = run(repo, 8)
        cached_calls = len((root / "calls").read_text().splitlines()) - calls_before
    wall1, evaluator1, batches1 = figures[1]
    wall8, _evaluator8, batches8 = figures[8]
    ideal = args.instances * args.sleep
    kind = "Python" if args.python else "sh"
    print(
        f"{args.instances} instances, a {kind} evaluator sleeping {args.sleep} s per instance "
        f"(ideal serial {ideal:.1f} s)"
    )
    print(f"--jobs 1: {wall1:6.2f} s wall, {batches1} batches")
    print(f"--jobs 8: {wall8:6.2f} s wall, {batches8} batches   speed-up {wall1 / wall8:.2f}x (target >= 6x)")
    overhead = (wall1 - evaluator1) / args.instances * 1000
    print(
        f"harnessgit's own time at --jobs 1: {overhead:.2f} ms per instance (target <= 5 ms); "
        f"evaluator processes {evaluator1:.2f} s of {wall1:.2f} s"
    )
    print(f"cached re-run: {cached_wall:.2f} s wall, {cached_calls} evaluator calls (target 0)")


if __name__ == "__main__":
    main()
