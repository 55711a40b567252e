"""Wall time and evaluator starts of a failing evaluation (issue 12, finding 7).

    .venv/bin/python tests/bench/bench_eval_failures.py [--timeout 5] [--jobs 1]

Builds a throwaway repository with 12 selection instances in 4 batches of 3 and
an evaluator that appends a line to a file outside the repository each time it
starts, then hangs (or crashes). Prints the wall time of `evaluate` until it
raises, its ratio to the timeout (the baseline: a failure should cost one timeout
plus a small grace, not one per batch), and how many evaluator processes were
started (one: a failed batch cancels the batches not started).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import Execution, evaluate
from harnessgit.store import Store

BODIES = {
    "hang": "import time; time.sleep(3600)",
    "crash": "sys.exit('the grader crashed')",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=5)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--case", choices=sorted(BODIES), default="hang")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo, calls = Path(tmp) / "repo", Path(tmp) / "calls.txt"
        repo.mkdir()
        script = (
            "import os, sys\n"
            "open(os.environ['CALLS_FILE'], 'a').write('start\\n')\n"
            "sys.stdin.read()\n" + BODIES[args.case] + "\n"
        )
        files = {
            "SKILL.md": "# Demo\n",
            "eval.py": script,
            "splits.json": json.dumps(
                {"train": ["t-0"], "selection": [f"s-{i}" for i in range(12)], "test": ["x-0"]}
            ),
            "harnessgit.toml": (
                '[harness]\npaths = ["SKILL.md"]\nbase = "main"\n\n'
                '[evaluator]\ncommand = ["python3", "eval.py"]\nmodel = "sim-1"\n'
                f'batch_size = 3\ntimeout = {args.timeout}\nenv = ["CALLS_FILE"]\n'
            ),
        }
        for name, text in files.items():
            (repo / name).write_text(text)
        env = dict(
            os.environ,
            GIT_AUTHOR_NAME="b",
            GIT_AUTHOR_EMAIL="b@x",
            GIT_COMMITTER_NAME="b",
            GIT_COMMITTER_EMAIL="b@x",
        )
        for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "harness"]):
            subprocess.run(["git", *argv], cwd=repo, env=env, check=True)
        os.environ["CALLS_FILE"] = str(calls)
        with Store.discover(repo) as store:
            config = load_config(repo)
            started = time.monotonic()
            try:
                evaluate(store, config, "main", execution=Execution(jobs=args.jobs))
            except HarnessgitError as exc:
                message = str(exc)
            wall = time.monotonic() - started
        starts = len(calls.read_text().splitlines()) if calls.exists() else 0
        print(
            f"case={args.case} timeout={args.timeout:g}s jobs={args.jobs} batches=4: "
            f"failed after {wall:.2f}s, {starts} evaluator start(s): {message}"
        )
        if args.case == "hang":
            print(f"wall time / timeout = {wall / args.timeout:.2f}x (1.00x: the failure cost one timeout)")


if __name__ == "__main__":
    main()
