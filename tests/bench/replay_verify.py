"""What `harnessgit verify` makes of a real repository's history (issue 12, finding 4).

    .venv/bin/python tests/bench/replay_verify.py /path/to/clone [--harness GLOB ...]

Replays the first-parent history of a clone (for example of anthropics/skills, which
nobody here wrote) as if harnessgit had been set up after its second commit: a set-up
commit adds harnessgit.toml, a trivial evaluator and a split manifest, and every later
commit's tree is committed again on top with those three files in it. No commit went
through the gate, so each one that changes the harness is an ungated edit; the rest
should be infrastructure. Prints how verify classifies them, in a throwaway copy: the
clone is not touched.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from harnessgit.config import load_config
from harnessgit.config.init import init_repository
from harnessgit.gate.verify import verify
from harnessgit.store import Store

EVALUATOR = """\
import json, sys
for line in sys.stdin:
    if line.strip():
        print(json.dumps({"instance": line.strip(), "score": 1.0}))
"""
SPLITS = {"train": ["t0"], "selection": [f"s{i}" for i in range(40)], "test": ["x0"]}
ADDED = ("harnessgit.toml", "eval.py", "splits.json")


def git(repo: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, input=input
    ).stdout.strip()


def replay(source: Path, repo: Path, harness: list[str]) -> int:
    """The replayed branch `hg` in ``repo``; returns how many commits were replayed."""
    git(repo.parent, "clone", "-q", str(source), str(repo))
    chain = git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").split()
    git(repo, "checkout", "-q", "-b", "hg", chain[1])
    (repo / "eval.py").write_text(EVALUATOR)
    (repo / "splits.json").write_text(json.dumps(SPLITS))
    with Store.discover(repo) as store:
        init_repository(store, harness=harness, evaluator=["python3", "eval.py"], base="hg")
    git(repo, "add", *ADDED)
    git(repo, "commit", "-qm", "Set up harnessgit")
    blobs = {name: git(repo, "hash-object", "-w", name) for name in ADDED}
    for commit in chain[2:]:
        git(repo, "read-tree", commit)
        for name, blob in blobs.items():
            git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}")
        tree = git(repo, "write-tree")
        message = git(repo, "log", "-1", "--format=%B", commit) or "(no message)"
        new = git(repo, "commit-tree", tree, "-p", "HEAD", input=message)
        git(repo, "update-ref", "refs/heads/hg", new)
        git(repo, "reset", "-q", "--hard", "hg")
    return len(chain) - 2


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("source", type=Path, help="a clone of the repository to replay")
    parser.add_argument("--harness", action="append", help="[harness] paths glob (default **/SKILL.md)")
    args = parser.parse_args()
    for key, value in {"NAME": "replay", "EMAIL": "replay@example.invalid"}.items():
        os.environ.setdefault(f"GIT_AUTHOR_{key}", value)
        os.environ.setdefault(f"GIT_COMMITTER_{key}", value)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "replay"
        replayed = replay(args.source.resolve(), repo, args.harness or ["**/SKILL.md"])
        started = time.monotonic()
        with Store.discover(repo) as store:
            report = verify(store, load_config(repo))
        seconds = time.monotonic() - started
    kinds = collections.Counter(
        "harness" if "the harness (" in f.problem else "regrade or settings" for f in report.findings
    )
    beside = [entry for entry in report.infrastructure if entry.beside]
    globs = args.harness or ["**/SKILL.md"]
    print(f"replayed {replayed} commits of {args.source} with [harness] paths = {globs}")
    print(
        f"verify: {len(report.infrastructure)} infrastructure, {kinds['harness']} ungated harness edits, "
        f"{kinds['regrade or settings']} other problems; {len(beside)} infrastructure commits change "
        f"files beside a harness file ({seconds:.2f} s)"
    )


if __name__ == "__main__":
    main()
