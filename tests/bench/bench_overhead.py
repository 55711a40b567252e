"""evolve's own time per iteration with each kind of evaluator and proposer (issue 13).

    python tests/bench/bench_overhead.py [--iterations 30] [--only NAME]

One simulated task (a SKILL.md of rules; an instance passes when the one of 60 rules
it needs is in the file; 150 train, 36 selection instances, the default batch size of
10 and minibatch of 3; the proposer adds the rule a failure needs about one time in two,
else one that helps no instance of the minibatch), one user evaluator function and
one user proposer function, wired four ways in one run:

- per-batch command evaluator + command proposer (the baseline: a process per batch
  and per proposal, started with this Python);
- persistent command evaluator + command proposer;
- persistent command evaluator + python proposer;
- in-process evaluator + proposer (``[evaluator] python``, ``[proposer] kind = "python"``).

Own time, as issue 13 defines it: wall time minus the time spent inside the user's
functions (each call times itself and notes it in a file). Process start-up, the
interpreter's imports, JSON on pipes and tree copies are harnessgit's time. An
iteration is from its start to its record written; the run's set-up (the base's first
selection scores) is not in it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harnessgit.config import load_config
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.state import Budget, EvolveRequest
from harnessgit.records import IterationRecord
from harnessgit.store import Store

TASK = '''\
"""The user's code: the evaluator and proposer functions, timing themselves."""
import os, re, time

RULES = 60


def _note(started):
    with open(os.environ["BENCH_USER_TIME"], "a") as handle:
        handle.write(f"{started} {time.time() - started}\\n")


def needed(instance):
    return int(instance[1:]) % RULES


def score(skill, instance):
    rule = needed(instance)
    ok = f"- rule {rule}\\n" in skill
    return {"instance": instance, "score": 1.0 if ok else 0.0,
            "feedback": "correct" if ok else f"needs rule {rule}"}


def evaluate(request):
    started = time.time()
    skill = request.harness["SKILL.md"]
    results = [score(skill, instance) for instance in request.instances]
    _note(started)
    return results


def propose(request):
    # Right about one time in two (the rule a failure needs), else a neighbour that helps
    # no one here: a mix of minibatch losses, frontier members and gate runs.
    started = time.time()
    found = [re.search(r"needs rule (\\d+)", e["feedback"] or "") for e in request["examples"]]
    wanted = [int(m.group(1)) for m in found if m]
    rule = wanted[0] if wanted else 0
    if len(request["current_text"]) % 2:
        rule = (rule + 7) % RULES
    _note(started)
    return {"operations": [{"op": "append", "text": f"- rule {rule}"}], "rationale": "add a rule"}
'''

EVAL_COMMAND = """\
import json, sys, os
from pathlib import Path
from task import score, _note
import time
ids = [line.strip() for line in sys.stdin if line.strip()]
started = time.time()
skill = Path("SKILL.md").read_text()
out = [json.dumps(score(skill, i)) for i in ids]
_note(started)
print("\\n".join(out))
"""

EVAL_SERVER = """\
import json, sys, time
from pathlib import Path
from task import score, _note
for line in sys.stdin:
    request = json.loads(line)
    started = time.time()
    skill = (Path(request["harness_dir"]) / "SKILL.md").read_text()
    out = [json.dumps({"batch": request["batch"], **score(skill, i)}) for i in request["instances"]]
    out.append(json.dumps({"batch": request["batch"], "done": True}))
    _note(started)
    print("\\n".join(out), flush=True)
"""

PROPOSE_COMMAND = """\
import json, sys
from task import propose
print(json.dumps(propose(json.load(sys.stdin))))
"""

PYTHON = sys.executable
SETUPS = {
    "per-batch command + command proposer": (
        f'command = ["{PYTHON}", "eval_command.py"]',
        f'kind = "command"\ncommand = ["{PYTHON}", "propose_command.py"]\nenv = ["BENCH_USER_TIME"]',
    ),
    "persistent command + command proposer": (
        f'command = ["{PYTHON}", "eval_server.py"]\npersistent = true',
        f'kind = "command"\ncommand = ["{PYTHON}", "propose_command.py"]\nenv = ["BENCH_USER_TIME"]',
    ),
    "persistent command + python proposer": (
        f'command = ["{PYTHON}", "eval_server.py"]\npersistent = true',
        'kind = "python"\nfunction = "task:propose"',
    ),
    "in-process evaluator + proposer": (
        'python = "task:evaluate"',
        'kind = "python"\nfunction = "task:propose"',
    ),
}


def make_repo(root: Path, evaluator: str, proposer: str) -> Path:
    repo = root / "repo"
    repo.mkdir(parents=True)
    ids = [f"i{n}" for n in range(186)]
    files = {
        "harnessgit.toml": (
            f'[harness]\npaths = ["SKILL.md"]\n[evaluator]\n{evaluator}\nenv = ["BENCH_USER_TIME"]\n'
            f'files = ["task.py", "eval_command.py", "eval_server.py"]\n[proposer]\n{proposer}\n'
        ),
        "SKILL.md": "---\nname: repo\ndescription: bench\n---\n# Rules\n\n- rule 0\n",
        "task.py": TASK,
        "eval_command.py": EVAL_COMMAND,
        "eval_server.py": EVAL_SERVER,
        "propose_command.py": PROPOSE_COMMAND,
        "splits.json": json.dumps({"train": ids[:150], "selection": ids[150:], "test": []}),
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


def measure(root: Path, name: str, iterations: int) -> list[float]:
    """Own milliseconds per iteration."""
    evaluator, proposer = SETUPS[name]
    repo = make_repo(root, evaluator, proposer)
    log = root / "user-time.txt"
    os.environ["BENCH_USER_TIME"] = str(log)
    ends: list[float] = []
    sys.modules.pop("task", None)
    with Store.discover(repo) as store:
        report = evolve(
            store,
            load_config(repo),
            EvolveRequest(budget=Budget(max_proposals=iterations)),
            on_iteration=lambda _record: ends.append(time.time()),
        )
    sys.modules.pop("task", None)
    calls = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
    own = []
    for record, end in zip(report.iterations, ends, strict=True):
        start = end - (record.seconds or 0.0)
        inside = sum(took for began, took in calls if start <= began <= end)
        own.append((end - start - inside) * 1000)
    _outcomes(report.iterations)
    return own


def _outcomes(iterations: list[IterationRecord]) -> None:
    counts: dict[str, int] = {}
    for record in iterations:
        counts[record.outcome] = counts.get(record.outcome, 0) + 1
    print("   outcomes:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--only", choices=list(SETUPS), default=None)
    args = parser.parse_args()
    names = [args.only] if args.only else list(SETUPS)
    heading = f"own ms per iteration: mean  median    p90   ({args.iterations} proposals)"
    print(f"{'evaluator + proposer':>40}  {heading}")
    for name in names:
        with tempfile.TemporaryDirectory(prefix="hg-bench-overhead-") as tmp:
            own = measure(Path(tmp), name, args.iterations)
        p90 = sorted(own)[int(0.9 * (len(own) - 1))]
        print(f"{name:>40}  {statistics.mean(own):25.1f} {statistics.median(own):7.1f} {p90:6.1f}")


if __name__ == "__main__":
    main()
