"""Reading one candidate in a large history (issue 17, item 3).

    python tests/bench/bench_index.py                          # 20,000 candidates x 300 instances
    python tests/bench/bench_index.py --candidates 2000 --runs 3

Builds (once; cached under --cache, default /tmp/hg-bench-index/<candidates>x<instances>)
a repository with a real seed history made by the CLI (main evaluated, two candidates
proposed, evaluated, one gated and merged) and then --candidates more candidate commits
written straight into the object database, each with a proposal record, one evaluation
record of --instances selection instances (the harness tree id and evaluator fingerprint
`eval` would compute) and a pin; all but --live of them archived with a retire record.
Then times, as subprocesses of `python -m harnessgit`, `show`, `scores`, `gate` (all
stored: nothing evaluates), `review` of one live candidate, `status`, `log` and
`frontier`, each beside `git notes show` of one note measured in the same run.
Targets: show/scores/gate/review <= 150 ms, status/log <= 500 ms, frontier <= 1 s.
Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from harnessgit import layout
from harnessgit.config import load_config
from harnessgit.evaluation.context import eval_context
from harnessgit.names import new_candidate_id
from harnessgit.records import EvalRecord, ProposalRecord, Record, RetireRecord
from harnessgit.records.lines import dump_record
from harnessgit.store import Blob, Store
from harnessgit.store.transaction import PINS_PREFIX
from harnessgit.store.trees import note_path

CONFIG = """\
[harness]
paths = ["SKILL.md"]
base = "main"

[evaluator]
command = ["python3", "eval.py"]
model = "sim-1"
batch_size = 100
jobs = 2
"""

# Scores follow the text: instance s-N scores 1.0 when N < LEVEL (tests/gating_fixtures.py).
EVALUATOR = """\
import json, re, sys
from pathlib import Path
skill = Path("SKILL.md").read_text()
level = int(re.search(r"LEVEL: (\\d+)", skill).group(1))
for line in sys.stdin:
    instance = line.strip()
    good = int(instance.split("-")[1]) < level
    print(json.dumps({"instance": instance, "score": 1.0 if good else 0.0}))
"""

TARGETS = {
    "show": 0.15,
    "scores": 0.15,
    "gate": 0.15,
    "review": 0.15,
    "status": 0.5,
    "log": 0.5,
    "frontier": 1.0,
}


def git(repo: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, input=input
    ).stdout.strip()


def harnessgit(repo: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    result = subprocess.run(
        [sys.executable, "-m", "harnessgit", "-C", str(repo), *args], capture_output=True, text=True, env=env
    )
    if result.returncode != 0:
        raise SystemExit(f"harnessgit {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result.stdout


def skill(level: int, variant: str) -> str:
    return f"# Skill\n\nLEVEL: {level}\n\n1. Read the task.\n2. Answer it ({variant}).\n"


def seed(repo: Path, instances: int) -> tuple[str, str]:
    """main evaluated; candidate A gated and merged; candidate B proposed and evaluated.
    Returns (B's id, main's tip before the bulk)."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@example.invalid")
    splits = {
        "train": [f"t-{i}" for i in range(10)],
        "selection": [f"s-{i}" for i in range(instances)],
        "test": [f"x-{i}" for i in range(10)],
    }
    (repo / "splits.json").write_text(json.dumps(splits))
    (repo / "harnessgit.toml").write_text(CONFIG)
    (repo / "eval.py").write_text(EVALUATOR)
    (repo / "SKILL.md").write_text(skill(instances // 3, "seed"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Initial harness")
    harnessgit(repo, "eval", "main", "--split", "selection")
    (repo / "SKILL.md").write_text(skill(instances // 2, "better"))
    first = json.loads(harnessgit(repo, "propose", "-m", "Cover more instances", "--json"))["candidate"]
    git(repo, "checkout", "-q", "--", "SKILL.md")
    harnessgit(repo, "eval", first, "--split", "selection")
    harnessgit(repo, "merge", first)
    (repo / "SKILL.md").write_text(skill(instances // 2 + 10, "best"))
    second = json.loads(harnessgit(repo, "propose", "-m", "Cover ten more", "--json"))["candidate"]
    git(repo, "checkout", "-q", "--", "SKILL.md")
    harnessgit(repo, "eval", second, "--split", "selection")
    return second, git(repo, "rev-parse", "main")


def bulk(repo: Path, candidates: int, instances: int, live: int) -> None:
    """``candidates`` more candidates on main, written as propose, eval and a frontier
    update would write them, but in one notes commit per notes ref."""
    rng = random.Random(17)
    config = load_config(repo)
    manifest = json.loads((repo / "splits.json").read_text())
    ids = manifest["selection"]
    with Store.discover(repo) as store:
        tip = store.refs.resolve("main")
        base = eval_context(store.objects, config, tip)
        template = next(
            r
            for records in store.notes.records(layout.NOTES_EVALS).values()
            for r in records
            if isinstance(r, EvalRecord) and r.harness == base.key.harness
        )
        main_tree = store.objects.commit_info(tip).tree
        start = datetime(2026, 1, 1, tzinfo=timezone.utc)
        evidence: dict[str, Blob] = {}
        evals: dict[str, Blob] = {}
        refs: list[str] = []
        for i in range(candidates):
            level = rng.randrange(instances // 4, instances)
            blob = store.objects.write_blob(skill(level, f"variant {i}").encode())
            tree = store.objects.edit_tree(main_tree, {"SKILL.md": Blob(blob)})
            cid = new_candidate_id()
            commit = store.objects.write_commit(
                tree, [tip], f"Variant {i}\n\n{layout.CANDIDATE_TRAILER}: {cid}"
            )
            key = eval_context(store.objects, config, commit).key if i < 3 else base.key
            harness = key.harness if i < 3 else store.objects.edit_tree(None, {"SKILL.md": Blob(blob)})
            assert i >= 3 or harness == store.objects.edit_tree(None, {"SKILL.md": Blob(blob)})
            ts = start + timedelta(seconds=i)
            mine: list[Record] = [
                ProposalRecord(
                    ts=ts,
                    candidate=cid,
                    parent=tip,
                    components=["SKILL.md"],
                    rationale=f"Variant {i}",
                    source="api",
                )
            ]
            archived = i < candidates - live
            if archived:
                mine.append(RetireRecord(ts=ts, candidate=cid, commit=commit, reason="dominated"))
            record = template.model_copy(
                update={
                    "id": f"{rng.getrandbits(128):032x}",
                    "ts": ts,
                    "commit": commit,
                    "harness": harness,
                    "instances": ids,
                    "repeats": [0] * len(ids),
                    "scores": [1.0 if int(s.split("-")[1]) < level else 0.0 for s in ids],
                }
            )
            evidence[note_path(commit)] = Blob(
                store.objects.write_blob(b"".join(dump_record(r) + b"\n" for r in mine))
            )
            evals[note_path(commit)] = Blob(store.objects.write_blob(dump_record(record) + b"\n"))
            ref = layout.archive_ref(cid) if archived else layout.candidate_ref(cid)
            refs += [f"create {ref} {commit}", f"create {PINS_PREFIX}{commit} {commit}"]
            if i % 1000 == 999:
                print(f"  {i + 1} candidates written", flush=True)
        for notes_ref, changes in ((layout.NOTES_EVIDENCE, evidence), (layout.NOTES_EVALS, evals)):
            old = store.refs.value(notes_ref)
            tree = store.objects.edit_tree(store.objects.commit_info(old).tree if old else None, changes)
            refs.append(
                f"update {notes_ref} {store.objects.write_commit(tree, [old] if old else [], 'bench')}"
            )
    git(repo, "update-ref", "--stdin", input="\n".join(refs) + "\n")
    git(repo, "pack-refs", "--all")


def build(path: Path, candidates: int, instances: int, live: int) -> tuple[Path, str]:
    repo = path / "harness"
    done = path / "built.json"
    if done.exists():
        return repo, json.loads(done.read_text())["candidate"]
    shutil.rmtree(path, ignore_errors=True)
    started = time.perf_counter()
    candidate, _tip = seed(repo, instances)
    bulk(repo, candidates, instances, live)
    done.write_text(json.dumps({"candidate": candidate}))
    print(f"built {repo} in {time.perf_counter() - started:.0f} s")
    return repo, candidate


def timed(argv: list[str], cwd: Path, runs: int, ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """(median wall time, median CPU time of the process and its children): on a shared
    machine the wall time moves with the load, the CPU time much less."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        result = subprocess.run(argv, cwd=cwd, capture_output=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if result.returncode not in ok:
            raise SystemExit(f"{argv} exited {result.returncode}: {result.stderr.decode()[-2000:]}")
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=20000)
    parser.add_argument("--instances", type=int, default=300)
    parser.add_argument("--live", type=int, default=20, help="candidates left live (the rest archived)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commands", default=",".join(TARGETS), help="comma-separated: which to time")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/hg-bench-index"))
    args = parser.parse_args()
    path = args.cache / f"{args.candidates}x{args.instances}"
    repo, candidate = build(path, args.candidates, args.instances, args.live)

    py = [sys.executable, "-m", "harnessgit"]
    commands = {
        "show": [*py, "show", candidate],
        "scores": [*py, "scores", candidate],
        "gate": [*py, "gate", candidate],
        "review": [*py, "review", "main", candidate],
        "status": [*py, "status"],
        "log": [*py, "log"],
        "frontier": [*py, "frontier"],
    }
    baseline_argv = ["git", "notes", f"--ref={layout.NOTES_EVALS}", "show", f"{layout.CANDIDATES}{candidate}"]
    os.environ["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    # A bytecode cache, as an installed package has (bench_store.py does the same).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(args.cache / "pyc")
    commands = {name: argv for name, argv in commands.items() if name in args.commands.split(",")}
    for name, argv in commands.items():  # warm: page cache, and any index a command builds
        wall, cpu = timed(argv, repo, 1, ok=(0, 1))
        print(f"first {name}: {wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU", flush=True)
    baseline, baseline_cpu = timed(baseline_argv, repo, args.runs * 3)
    evals = int(git(repo, "notes", f"--ref={layout.NOTES_EVALS}", "list").count("\n")) + 1
    print(f"repository: {repo} ({evals} notes on {layout.NOTES_EVALS}, {args.instances} selection instances)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; medians of {args.runs} runs")
    print(f"git notes show of one note (baseline): {baseline * 1000:.1f} ms wall,", end=" ")
    print(f"{baseline_cpu * 1000:.1f} ms CPU")
    for name, argv in commands.items():
        wall, cpu = timed(argv, repo, args.runs, ok=(0, 1))
        verdict = "ok" if wall <= TARGETS[name] else "MISSED"
        print(
            f"harnessgit {name:<9} {wall * 1000:8.1f} ms wall {wall / baseline:6.1f}x baseline,"
            f" {cpu * 1000:8.1f} ms CPU {cpu / baseline_cpu:6.1f}x"
            f"  (target <= {TARGETS[name] * 1000:.0f} ms: {verdict})"
        )


if __name__ == "__main__":
    main()
