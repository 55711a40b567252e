"""The Ray executor (issue 17): speed-up on two nodes, and what Ray adds per batch.

    python tests/bench/bench_ray.py [--instances 16] [--sleep 0.5] [--batch-size 1]

Starts a local Ray cluster of two nodes, one CPU each (`ray.cluster_utils.Cluster`:
a raylet, an object store and worker processes per node), and evaluates INSTANCES
selection instances with a sleep-bound evaluator (SLEEP seconds per instance, a POSIX
sh script: about a millisecond to start) in fresh repositories:

- local, --jobs 1: one machine with one evaluator slot, the baseline;
- ray, 2 nodes: each batch a Ray task, at most 2 in flight;
- local, --jobs 2: the same parallelism without Ray, for what Ray costs.

Then many empty batches (the evaluator sleeps 0 s) on each executor, for the
overhead per batch: (wall time x slots - summed evaluator time) / batches. What a
command pays once on Ray is timed apart: the connection to the cluster, and the
job's first two tasks (Ray starts the job's worker processes and unpacks
harnessgit's code on each node).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from harnessgit.config import load_config
from harnessgit.evaluation.eval import Evaluation, Execution, evaluate
from harnessgit.evaluation.evaluators import Evaluators
from harnessgit.store import Store

SH_EVALUATOR = """\
#!/bin/sh
ids=""; n=0
while read -r id; do [ -n "$id" ] && ids="$ids $id" && n=$((n + 1)); done
ms=$((n * SLEEP_MS))
sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
for id in $ids; do printf '{"instance": "%s", "score": 1.0}\\n' "$id"; done
"""


def make_repo(root: Path, name: str, instances: int, batch_size: int) -> Path:
    repo = root / name
    repo.mkdir()
    files = {
        "harnessgit.toml": '[harness]\npaths = ["SKILL.md"]\n[evaluator]\ncommand = ["sh", "eval.sh"]\n'
        f'batch_size = {batch_size}\ntimeout = 600\nenv = ["SLEEP_MS"]\n',
        "SKILL.md": "# Skill\n",
        "eval.sh": SH_EVALUATOR,
        "splits.json": json.dumps({"selection": [f"i-{n}" for n in range(instances)]}),
    }
    for path, text in files.items():
        (repo / path).write_text(text)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def run(repo: Path, execution: Execution) -> Evaluation:
    with Store.discover(repo) as store:
        return evaluate(store, load_config(repo), "main", execution=execution)


def measure(root: Path, label: str, executor: str, jobs: int, args: argparse.Namespace) -> None:
    os.environ["SLEEP_MS"] = str(round(args.sleep * 1000))
    repo = make_repo(root, f"{label}-{executor}-{jobs}", args.instances, args.batch_size)
    with Evaluators() as evaluators:
        warm = ""
        if executor == "ray":  # the connection and the job's first workers, timed apart
            started = time.monotonic()
            evaluators.ray.ray()
            connect = time.monotonic() - started
            first = make_repo(root, f"{label}-warm-up", 2, 1)
            started = time.monotonic()
            run(first, Execution(jobs=jobs, executor=executor, evaluators=evaluators))
            warm = f"; connect {connect:.2f} s, first 2 tasks {time.monotonic() - started:.2f} s"
        started = time.monotonic()
        result = run(repo, Execution(jobs=jobs, executor=executor, evaluators=evaluators))
        wall = time.monotonic() - started
    overhead = (wall * jobs - result.evaluator_time) / result.batches
    print(
        f"{label:6} {executor:5} slots={jobs}  {result.evaluated} instances in {result.batches} batches: "
        f"{wall:6.2f} s wall, evaluator {result.evaluator_time:6.2f} s, "
        f"overhead {overhead * 1000:6.1f} ms/batch{warm}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--instances", type=int, default=16)
    parser.add_argument("--sleep", type=float, default=0.5, help="seconds per instance")
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--empty-batches", type=int, default=40)
    args = parser.parse_args()
    from ray.cluster_utils import Cluster

    temp = tempfile.mkdtemp(prefix="hg-ray-", dir="/tmp")  # short: Ray's sockets live under it
    os.environ.update(RAY_TMPDIR=temp, RAY_USAGE_STATS_ENABLED="0")
    started = time.monotonic()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        os.environ["RAY_ADDRESS"] = cluster.address
        print(f"cluster of 2 nodes up in {time.monotonic() - started:.1f} s; cores here: {os.cpu_count()}")
        with tempfile.TemporaryDirectory() as work:
            root = Path(work)
            for executor, jobs in (("local", 1), ("ray", 2), ("local", 2)):
                measure(root, "sleep", executor, jobs, args)
            empty = argparse.Namespace(instances=args.empty_batches, sleep=0.0, batch_size=1)
            for executor, jobs in (("local", 2), ("ray", 2)):
                measure(root, "empty", executor, jobs, empty)
    finally:
        cluster.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
