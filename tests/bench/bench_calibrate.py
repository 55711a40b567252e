"""`harnessgit calibrate` on the demo's triage evaluator and on SIMULATED noisy ones.

    python tests/bench/bench_calibrate.py [--repeats 4] [--draws 200]

Each repository is real (git init, the harness committed) and calibrated through the
CLI (`python -m harnessgit calibrate --json`), so the figures are what a user sees:
flip rate, repeat agreement, per-instance sd, the gate's false-pass rate on A/A pairs
under each policy (with its 95% upper bound; the default settings: alpha 0.05, q 0.1)
and the instances a 5-point gain needs with one repeat.

- triage: templates/triage (the demo's simulated rule-following agent: deterministic);
- noisy-36, noisy-120: a SIMULATED sampled judge, no model called: instance i passes
  with its own probability (uniform in [0.1, 0.9], fixed per instance), drawn afresh
  on every run, as a sampled LLM at temperature > 0 would;
- judge-36: SIMULATED partial credit (0, 0.25, ..., 1: four rubric items, each met
  with the instance's probability) plus a judge that grades at random one time in five.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

NOISY = """\
import json, os, random, sys
rng = random.Random()  # fresh draws every run: the noise being measured
for line in sys.stdin:
    instance = line.strip()
    p = random.Random(instance).uniform(0.1, 0.9)
    print(json.dumps({"instance": instance, "score": 1.0 if rng.random() < p else 0.0}))
"""

JUDGE = """\
import json, random, sys
rng = random.Random()
for line in sys.stdin:
    instance = line.strip()
    p = random.Random(instance).uniform(0.1, 0.9)
    if rng.random() < 0.2:
        score = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0])
    else:
        score = sum(rng.random() < p for _ in range(4)) / 4
    print(json.dumps({"instance": instance, "score": score}))
"""

CONFIG = """\
[harness]
paths = ["SKILL.md"]
[evaluator]
command = ["{python}", "eval.py"]
batch_size = 40
jobs = 1
[splits]
manifest = "splits.json"
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def commit(repo: Path) -> None:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@bench.invalid")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "harness")


def simulated(root: Path, name: str, evaluator: str, n: int) -> Path:
    repo = root / name
    repo.mkdir()
    (repo / "SKILL.md").write_text("# A skill\n\nAnswer the question.\n")
    (repo / "eval.py").write_text(evaluator)
    (repo / "harnessgit.toml").write_text(CONFIG.format(python=sys.executable))
    splits = {"train": ["t-0"], "selection": [f"s-{i:03d}" for i in range(n)], "test": ["x-0"]}
    (repo / "splits.json").write_text(json.dumps(splits))
    commit(repo)
    return repo


def triage(root: Path) -> Path:
    repo = root / "triage"
    shutil.copytree(ROOT / "templates" / "triage", repo)
    commit(repo)
    return repo


def calibrate(repo: Path, repeats: int, draws: int) -> dict[str, object]:
    options = ["--repeats", str(repeats), "--draws", str(draws)]
    ran = subprocess.run(
        [sys.executable, "-m", "harnessgit", "-C", str(repo), "-q", "calibrate", "--json", *options],
        capture_output=True,
        text=True,
        check=False,
    )
    if ran.returncode not in (0, 1):
        raise SystemExit(f"calibrate failed in {repo}: {ran.stderr}")
    result: dict[str, object] = json.loads(ran.stdout)
    return result


def _rate(passes: dict[str, float]) -> str:
    return f"{passes['rate'] * 100:.1f}% ({passes['upper'] * 100:.1f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--draws", type=int, default=200)
    args = parser.parse_args()
    print(
        "| evaluator | instances | flip rate | repeat agreement | per-instance sd (points)"
        " | false-pass rate, strict (95% upper) | bayes | elond | instances for +5 points, 1 repeat | holds |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="hg-calibrate-") as tmp:
        root = Path(tmp)
        repos = [
            ("triage (demo)", triage(root)),
            ("noisy 0/1, 36", simulated(root, "noisy36", NOISY, 36)),
            ("noisy 0/1, 120", simulated(root, "noisy120", NOISY, 120)),
            ("noisy partial-credit judge, 36", simulated(root, "judge36", JUDGE, 36)),
        ]
        for name, repo in repos:
            r = calibrate(repo, args.repeats, args.draws)
            noise, passes, needed = r["noise"], r["false_passes"], r["needed"]
            assert isinstance(noise, dict) and isinstance(passes, dict) and isinstance(needed, list)
            one = needed[0]["instances"]
            rates = {c["policy"]: c["false_passes"] for c in r["policies"]}  # type: ignore[union-attr]
            print(
                f"| {name} | {r['instances']} | {noise['flip_rate'] * 100:.1f}%"
                f" | {noise['agreement'] * 100:.1f}%"
                f" | {noise['within_variance'] ** 0.5 * 100:.1f} | {passes['rate'] * 100:.1f}%"
                f" ({passes['upper'] * 100:.1f}%) | {_rate(rates['bayes'])} | {_rate(rates['elond'])}"
                f" | {one if one is not None else '-'}"
                f" | {r['holds']} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
