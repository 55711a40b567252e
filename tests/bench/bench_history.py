"""`harnessgit log --all-history` on a real history (issue 20).

    python tests/bench/bench_history.py /work/.mirror/obra+superpowers/repo \\
        --paths '**/SKILL.md' 'skills/*/**' '**/AGENTS.md' '**/CLAUDE.md'

Clones SOURCE into a temporary directory, commits a harnessgit.toml with the given
``[harness] paths`` (as a team adopting harnessgit would), then times the audit as a user
runs it (``python -m harnessgit log --all-history --json``, start-up included) beside a
baseline measured in the same run on the same clone: ``git log --first-parent --raw``
over the same chain, which reads what every commit changed and checks nothing; and, in
process, ``check_change`` alone on each harness commit (what the audit cannot avoid:
the rules themselves). Prints the commits examined, those that changed a harness file,
the wall times (median of ``--runs``; the checks once) and the ratios.
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

ROOT = Path(__file__).resolve().parents[2]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def adopt(source: str, root: Path, paths: list[str]) -> Path:
    repo = root / "clone"
    # No checkout: the audit reads harnessgit.toml and git objects only. The commit is
    # written with plumbing, --missing-ok: a mirror may lack a large file's blob
    # (awesome-copilot's website images), which `git commit` would refuse.
    subprocess.run(["git", "clone", "-q", "--no-checkout", source, str(repo)], check=True)
    globs = ", ".join(json.dumps(p) for p in paths)
    branch = git(repo, "branch", "--show-current").strip()
    (repo / "harnessgit.toml").write_text(f'[harness]\npaths = [{globs}]\nbase = "{branch}"\n')
    git(repo, "read-tree", "HEAD")
    git(repo, "update-index", "--add", "harnessgit.toml")
    tree = git(repo, "write-tree", "--missing-ok").strip()
    who = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    commit = git(repo, *who, "commit-tree", tree, "-p", "HEAD", "-m", "adopt").strip()
    git(repo, "update-ref", f"refs/heads/{branch}", commit)
    return repo


def timed(argv: list[str], cwd: Path, runs: int, env: dict[str, str] | None = None) -> tuple[float, bytes]:
    times, out = [], b""
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(argv, cwd=cwd, check=True, capture_output=True, env=env).stdout
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def checks_alone(repo: Path) -> float:
    """``check_change`` on every harness commit of the chain, nothing else."""
    sys.path.insert(0, str(ROOT))
    from harnessgit.candidates.history import _harness
    from harnessgit.checks import check_change
    from harnessgit.config import load_config
    from harnessgit.store import Store

    config = load_config(repo)
    with Store.discover(repo) as store:
        chain = store.history.first_parent_changes(store.refs.resolve(config.harness.base))
        touched = [commit for commit, changes in chain if _harness(changes, config)]
        start = time.perf_counter()
        for commit in touched:
            parents = store.objects.commit_info(commit).parents
            check_change(store, config, parents[0] if parents else None, commit)
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="a repository to clone (a path or URL)")
    parser.add_argument("--paths", nargs="+", default=["**/SKILL.md", "**/AGENTS.md", "**/CLAUDE.md"])
    parser.add_argument("--runs", type=int, default=3, help="median of this many runs each")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        repo = adopt(args.source, Path(tmp), args.paths)
        baseline, _ = timed(
            ["git", "log", "--first-parent", "--diff-merges=first-parent", "--root", "-M", "--raw", "-z"],
            repo,
            args.runs,
        )
        audit, out = timed(
            [sys.executable, "-m", "harnessgit", "log", "--all-history", "--json"], repo, args.runs, env
        )
        checks = checks_alone(repo)
    result = json.loads(out)
    findings = sum(len(entry["findings"]) for entry in result["entries"])
    print(f"source             {args.source}")
    print(f"[harness] paths    {', '.join(args.paths)}")
    print(f"commits examined   {result['examined']} (first-parent chain of {result['base']})")
    print(f"harness commits    {result['harness_commits']} ({findings} findings)")
    print(f"baseline git log   {baseline:.2f} s")
    print(f"log --all-history  {audit:.2f} s ({audit / baseline:.0f}x the baseline)")
    print(f"checks alone       {checks:.2f} s (the audit is {audit / checks:.2f}x that)")
    print(f"per harness commit {audit / max(result['harness_commits'], 1) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
