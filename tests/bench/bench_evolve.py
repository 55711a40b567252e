"""evolve's own overhead per iteration (issue 7), with 500 candidates in the repository.

    python tests/bench/bench_evolve.py [--candidates 500] [--iterations 20]

Builds a repository holding CANDIDATES live candidates, each with selection scores
on record (written through the store, as `eval` would), then runs evolve for
ITERATIONS proposals with an instant sh evaluator and an instant sh proposer.
Every iteration record carries its wall time and the time spent in evaluator
processes and in the proposer; harnessgit's own overhead is the rest. The same
iterations on a repository with no extra candidates are the baseline.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.evaluation.context import eval_context
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.state import Budget, EvolveRequest
from harnessgit.records import EvalRecord
from harnessgit.store import Store, Transaction

EVALUATOR = """\
#!/bin/sh
# Instant and deterministic: whether an instance passes depends on the number of
# lines of SKILL.md, so every added line changes some scores and many candidates
# win their minibatch and go on to the selection split (the frontier's busy path).
lines=$(wc -l < SKILL.md)
while read -r id; do
  [ -z "$id" ] && continue
  n=${id#i}
  if [ $(( (n * 7 + lines * 3) % 5 )) -lt 2 ]; then s=1.0; else s=0.0; fi
  printf '{"instance": "%s", "score": %s, "feedback": "needs line %s"}\\n' "$id" "$s" "$n"
done
"""

PROPOSER = """\
#!/bin/sh
# Instant: appends one line (the protocol's "append" operation).
cat > /dev/null
printf '{"operations": [{"op": "append", "text": "- step %s"}], "rationale": "add a step"}' "$$"
"""


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir(parents=True)
    train = [f"i{n}" for n in range(0, 300, 10)]
    selection = [f"i{n}" for n in range(300) if n % 10]
    files = {
        "harnessgit.toml": (
            '[harness]\npaths = ["SKILL.md"]\n[evaluator]\ncommand = ["sh", "eval.sh"]\nbatch_size = 300\n'
            '[proposer]\nkind = "command"\ncommand = ["sh", "propose.sh"]\n'
            "[checks.kinds.skill]\nmax_changed_lines = 10000\ngrowth_fail = 100\ngrowth_warn = 100\n"
        ),
        "SKILL.md": "---\nname: repo\ndescription: bench\n---\n# Skill\n"
        + "".join(f"- step {i}\n" for i in range(20)),
        "eval.sh": EVALUATOR,
        "propose.sh": PROPOSER,
        "splits.json": json.dumps({"train": train, "selection": selection, "test": []}),
    }
    for name, text in files.items():
        (repo / name).write_text(text)
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "b"],
        ["config", "user.email", "b@b"],
        ["add", "-A"],
        ["commit", "-q", "-m", "init"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def add_candidates(repo: Path, count: int) -> None:
    rng = random.Random(0)
    with Store.discover(repo) as store:
        config = load_config(repo)
        selection = json.loads((repo / "splits.json").read_text())["selection"]
        from harnessgit.evaluation.splits import load_manifest

        manifest = load_manifest(repo, "splits.json")
        base = (repo / "SKILL.md").read_text()
        for start in range(0, count, 50):
            txn = Transaction("bench scores")
            for i in range(start, min(count, start + 50)):
                cand = propose(
                    store, config, {"SKILL.md": base + f"- variant {i}\n"}, rationale=f"variant {i}"
                )
                key = eval_context(store.objects, config, cand.commit).key
                txn.append(
                    layout.NOTES_EVALS,
                    cand.commit,
                    [
                        EvalRecord(
                            ts=datetime.now(timezone.utc),
                            commit=cand.commit,
                            harness=key.harness,
                            fingerprint=key.fingerprint,
                            model=key.model,
                            split="selection",
                            split_hash=manifest.split_hash("selection"),
                            manifest=manifest.hash,
                            instances=selection,
                            repeats=[0] * len(selection),
                            scores=[float(rng.random() < 0.3) for _ in selection],
                            wall_time=0.0,
                            worker="bench",
                        )
                    ],
                )
            store.refs.commit(txn)


def overhead(repo: Path, iterations: int) -> list[tuple[float, bool]]:
    """(harnessgit's own seconds, whether the iteration reached the selection split) per iteration."""
    with Store.discover(repo) as store:
        report = evolve(
            store, load_config(repo), EvolveRequest(budget=Budget(max_proposals=iterations), seed=0)
        )
    return [
        (
            (r.seconds or 0) - (r.evaluator_seconds or 0) - (r.proposer_seconds or 0),
            r.selection_mean is not None,
        )
        for r in report.iterations
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=500)
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hg-bench-evolve-") as tmp:
        empty = make_repo(Path(tmp) / "empty")
        full = make_repo(Path(tmp) / "full")
        add_candidates(full, args.candidates)
        baseline = overhead(empty, args.iterations)
        loaded = overhead(full, args.iterations)
    for name, runs in (("no other candidates", baseline), (f"{args.candidates} candidates", loaded)):
        busy = sum(1 for _seconds, selection in runs if selection)
        print(
            f"{name:>22}: {busy} of {len(runs)} iterations reached the selection split "
            "(each adds a frontier member: the frontier is rebuilt)"
        )
    for name, runs in (("no other candidates", baseline), (f"{args.candidates} candidates", loaded)):
        values = [seconds for seconds, _selection in runs]
        rest = sorted(values[1:])
        p90 = rest[int(0.9 * (len(rest) - 1))]
        print(
            f"{name:>22}: harnessgit's own time per iteration: "
            f"median {statistics.median(values) * 1000:6.1f} ms,"
            f" 90th percentile {p90 * 1000:6.1f} ms, max {max(rest) * 1000:6.1f} ms after the first;"
            f" the first (indexing the pool once per run) {values[0] * 1000:6.1f} ms"
        )
    ratio = statistics.median(s for s, _ in loaded) / statistics.median(s for s, _ in baseline)
    print(
        f"median ratio {ratio:.2f}x (target: at most 100 ms per iteration with {args.candidates} candidates)"
    )


if __name__ == "__main__":
    main()
