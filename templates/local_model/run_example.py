"""The triage example end to end with a real local model as the agent.

    python3 templates/local_model/fetch_weights.py          # once (about 491 MB)
    python3 templates/local_model/run_example.py /tmp/local-triage

Run it with the Python that has harnessgit installed (``.venv/bin/python``). It builds a
harness repository in DIRECTORY (new or empty; given one it built before, it runs the
steps again there, and evaluations on record are not repeated) from templates/local_model/triage and
the triage example's tickets and proposer, then runs, as a user would:

1. ``harnessgit eval main`` (the selection split) and ``harnessgit test main`` (the
   held-out split, looked at once before and once after),
2. ``harnessgit evolve --max-proposals N --auto-merge`` (each candidate evaluated by
   the real model, then gated),
3. ``harnessgit log`` and ``harnessgit review`` of what reached main,
4. ``harnessgit test main`` again when main moved, and ``harnessgit report``.

What is real and what is simulated: the agent is the real model (Qwen2.5-Coder-0.5B-
Instruct) answering each ticket with SKILL.md as its system prompt; the proposer is
*simulated* (the triage example's propose.py adds keyword rules from the evaluator's
feedback, no LLM), because the 0.5B model could not rewrite a prompt from feedback.

It uses the server at LOCAL_MODEL_URL (default http://127.0.0.1:8089/v1) when one
answers there, and otherwise starts one in this process (serve.py) and stops it at the
end. Exit codes: 0 done, 3 a step failed (its output says why).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRIAGE = HERE.parent / "triage"
SIMULATED = (
    "What is real: the agent is Qwen2.5-Coder-0.5B-Instruct, served on 127.0.0.1, answering under SKILL.md.\n"
    "What is simulated: the proposer (propose.py adds keyword rules from the feedback; no LLM)."
)


def build(target: Path) -> None:
    if (target / ".git").is_dir() and (target / "harnessgit.toml").is_file():
        print(f"{target} holds the example already: running again, from what is on record", flush=True)
        return
    if target.exists() and any(target.iterdir()):
        raise SystemExit(f"run_example: {target} is not empty")
    target.mkdir(parents=True, exist_ok=True)
    for name in ("SKILL.md", "eval.py", "harnessgit.toml", "splits.json"):
        shutil.copy(HERE / "triage" / name, target / name)
    for name in ("tickets.jsonl", "propose.py", "agent.py"):  # propose.py imports agent.py's rule patterns
        shutil.copy(TRIAGE / name, target / name)
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "harnessgit example"],
        ["config", "user.email", "example@harnessgit.invalid"],
        ["add", "-A"],
        ["commit", "-q", "-m", "The triage skill for the local model"],
    ):
        subprocess.run(["git", *args], cwd=target, check=True)
    (target / ".git" / "info" / "exclude").open("a").write("/report.html\n")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=5) as reply:
            json.load(reply)
            return True
    except (urllib.error.URLError, OSError, ValueError):
        return False


def harnessgit(target: Path, *args: str, env: dict[str, str], check: bool = True) -> str:
    """One harnessgit command, its output shown as it comes; the output returned."""
    print(f"\n$ harnessgit {' '.join(args)}", flush=True)
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harnessgit", "-C", str(target), *args],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    code = proc.wait()
    print(f"[{time.monotonic() - started:.0f} s, exit {code}]", flush=True)
    if check and code not in (0, 1):
        raise SystemExit(3)
    return "".join(lines)


def test_mean(output: str) -> str:
    for line in output.splitlines():
        if "mean" in line:
            return line.strip()
    return output.strip().splitlines()[-1] if output.strip() else "?"


def run(target: Path, proposals: int, env: dict[str, str]) -> None:
    first = ["git", "rev-list", "--max-parents=0", "main"]  # the example as built
    start = subprocess.run(first, cwd=target, capture_output=True, text=True).stdout.strip()
    print(SIMULATED)
    harnessgit(target, "eval", "main", env=env)
    before = harnessgit(target, "test", "main", env=env)
    harnessgit(target, "evolve", "--max-proposals", str(proposals), "--auto-merge", env=env)
    harnessgit(target, "log", env=env)
    head = subprocess.run(
        ["git", "rev-parse", "main"], cwd=target, capture_output=True, text=True
    ).stdout.strip()
    if head != start:
        harnessgit(target, "review", start, "main", env=env)
        harnessgit(target, "verify", env=env)
        after = harnessgit(target, "test", "main", env=env)
        print(f"\nheld-out test before: {test_mean(before)}\nheld-out test after:  {test_mean(after)}")
    else:
        harnessgit(target, "status", env=env)
        print(f"\nmain did not move (no candidate passed the gate); held-out test: {test_mean(before)}")
    harnessgit(target, "report", "-o", str(target / "report.html"), env=env)
    print(f"\n{SIMULATED}\nThe repository is in {target}.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="The triage example end to end with the local model as agent."
    )
    parser.add_argument(
        "directory",
        type=Path,
        help="where to build the example repository (new or empty; or one it built, to go on)",
    )
    parser.add_argument("--proposals", type=int, default=2, help="proposals for evolve (default 2)")
    args = parser.parse_args(argv)
    url = os.environ.get("LOCAL_MODEL_URL", "http://127.0.0.1:8089/v1").rstrip("/")
    env = {**os.environ, "LOCAL_MODEL_URL": url}
    build(args.directory)
    server = None
    if not answers(url):
        sys.path.insert(0, str(HERE))
        from serve import start

        port = int(url.rsplit(":", 1)[1].split("/")[0])
        print(f"no server at {url}: starting one (serve.py)", flush=True)
        try:
            server, url = start(port)
        except RuntimeError as error:
            print(f"run_example: {error}", file=sys.stderr)
            return 3
    try:
        run(args.directory, args.proposals, env)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 3
    finally:
        del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
