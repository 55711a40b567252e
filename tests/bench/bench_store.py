"""Store benchmarks (issue 2): bulk record reads, candidate throughput, CLI start-up.

    python tests/bench/bench_store.py [--candidates 2000]

Prints each figure beside a baseline measured in the same run, on the same repository.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.records import EvalRecord
from harnessgit.store import Store, Transaction


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def make_repo(root: Path) -> Path:
    repo = root / "harness"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@example.invalid")
    (repo / "harnessgit.toml").write_text('[harness]\npaths = ["SKILL.md"]\n')
    (repo / "SKILL.md").write_text("# Skill\n\nDo the task.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def eval_record(commit: str, rng: random.Random, instances: int) -> EvalRecord:
    ids = [f"instance-{i:05d}" for i in range(instances)]
    return EvalRecord(
        ts=datetime.now(timezone.utc),
        commit=commit,
        harness=f"{rng.getrandbits(160):040x}",
        fingerprint="f" * 64,
        model="sim-1",
        split="selection",
        split_hash="s" * 64,
        manifest="m" * 64,
        instances=ids,
        repeats=[0] * instances,
        scores=[round(rng.random(), 3) for _ in ids],
        clusters=[f"c{i % 7}" for i in range(instances)],
        wall_time=1.0,
        worker="bench:1",
    )


def median_time(fn: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def raw_read(repo: Path) -> int:
    """The baseline: one `git notes list`, then one `git cat-file --batch` over every note."""
    listing = subprocess.run(
        ["git", "notes", f"--ref={layout.NOTES_EVALS}", "list"], cwd=repo, check=True, capture_output=True
    ).stdout.split()
    blobs = listing[0::2]
    out = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=repo,
        input=b"\n".join(blobs) + b"\n",
        check=True,
        capture_output=True,
    ).stdout
    return len(out)


def store_read(repo: Path) -> int:
    with Store.discover(repo) as store:
        notes = store.notes.records(layout.NOTES_EVALS)
    return sum(len(records) for records in notes.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=2000)
    parser.add_argument("--instances", type=int, default=330, help="per record: about 20 KB of JSON")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="hg-bench-") as tmp:
        repo = make_repo(Path(tmp))
        with Store.discover(repo) as store:
            config = load_config(repo)
            start = time.perf_counter()
            commits = [
                propose(
                    store,
                    config,
                    {"SKILL.md": f"# Skill\n\nDo the task, variant {i}.\n"},
                    rationale=f"variant {i}",
                ).commit
                for i in range(args.candidates)
            ]
            rate = args.candidates / (time.perf_counter() - start)
            # Attach one ~20 KB evaluation record to every candidate (100 per transaction).
            size = len(json.dumps(eval_record(commits[0], rng, args.instances).model_dump(mode="json")))
            for i in range(0, len(commits), 100):
                txn = Transaction("bench")
                for commit in commits[i : i + 100]:
                    txn.append(layout.NOTES_EVALS, commit, [eval_record(commit, rng, args.instances)])
                store.refs.commit(txn)
        raw_read(repo), store_read(repo)  # warm the page cache
        raw, ours = [], []
        for _ in range(args.runs):  # interleaved, so drift hits both alike
            raw.append(median_time(lambda: raw_read(repo), 1))
            ours.append(median_time(lambda: store_read(repo), 1))
        book = median_time(lambda: ScoreBook.load(Store.discover(repo)), args.runs)
        print(f"repository: {args.candidates} candidates, one {size / 1024:.1f} KB evaluation record each")
        print(f"recording candidates through the API: {rate:.0f} candidates/s (target >= 100)")
        print(f"raw git notes list + cat-file --batch:  {statistics.median(raw) * 1000:7.1f} ms")
        print(
            f"store.notes.records() -> parsed records:        {statistics.median(ours) * 1000:7.1f} ms"
            f"  ratio {statistics.median(ours) / statistics.median(raw):.2f}x (target <= 2x)"
        )
        print(f"ScoreBook.load() (records + score index): {book * 1000:5.1f} ms")
    with tempfile.TemporaryDirectory(prefix="harnessgit-pyc-") as pyc:
        # A private bytecode cache, filled by a warm-up run, as an installed package has
        # its .pyc files (a PYTHONDONTWRITEBYTECODE=1 shell would compile every module).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = pyc
        start = [sys.executable, "-c", "pass"]
        helps = [sys.executable, "-m", "harnessgit", "--help"]
        subprocess.run(helps, check=True, capture_output=True, env=env)
        baseline = median_time(lambda: subprocess.run(start, check=True, env=env), 21)
        helptime = median_time(lambda: subprocess.run(helps, check=True, capture_output=True, env=env), 21)
    print(f"python -c pass:          {baseline * 1000:6.1f} ms median")
    print(
        f"harnessgit --help:       {helptime * 1000:6.1f} ms median (target <= 200 ms)"
        f"  ratio {helptime / baseline:.1f}x"
    )


if __name__ == "__main__":
    main()
