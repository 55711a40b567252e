"""The user's programs against harnessgit (issue 15, defects 5, 6 and 13): escaped
daemons, floods of output, SIGTERM.

    .venv/bin/python tests/bench/bench_processes.py [--only hang,memory,signals] [--mib 200]
    PYTHONPATH=<a checkout of another commit> .venv/bin/python tests/bench/bench_processes.py

Runs `python -m harnessgit` as a real process on throwaway repositories, from the
harnessgit that PYTHONPATH (or the installed package) gives, and prints each figure
beside a baseline measured in the same run:

- hang: a program (timeout 5 s) that starts a daemon in a session of its own, which
  holds its stdout and stderr for 300 s, and then either prints its answer and exits or
  hangs too. Wall time (cut off at 60 s) and what came of it, for `harnessgit eval`
  and for the command proposer. The baseline is Python's own
  `subprocess.run(timeout=5, capture_output=True)` on the same evaluator: it reads
  until EOF or the deadline, then kills the program and waits for it alone (POSIX), so
  it costs the timeout and loses the answer when a daemon holds the pipes.
- memory: peak RSS (os.wait4, the process and those it waited for) while an evaluator
  floods its output with ``--mib`` MiB: lines that are not JSON, valid results (long
  trajectories), one line on stderr. The baseline: a plain unbounded read of the same
  evaluator (`subprocess.run(capture_output=True)`, what reading it whole costs), and
  `harnessgit eval` on an evaluator that prints 100 small results. Also the bytes of
  stderr that reached the terminal and the bytes .git grew.
- signals: ``--trials`` evaluations, each signalled while 2 evaluators run: SIGINT (the
  baseline: Ctrl-C was always cleaned up), SIGTERM, and SIGKILL followed by one more
  `eval`. Exit statuses, temporary directories left in TMPDIR and evaluators still
  running a second later.

The repositories use only configuration keys every version knows, so the same script
measures the code before the change.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

CUTOFF = 60.0
MB = 1024 * 1024

RESULTS = "for i in ids:\n    out.write(json.dumps({'instance': i, 'score': 1.0}) + '\\n')\n"


def floods(mib: int) -> dict[str, str]:
    """Evaluator bodies: `ids` are the instances, `out` is stdout."""
    return {
        f"{mib} MiB of lines that are not JSON": (
            f"for _ in range({mib} * 1024):\n    out.write('x' * 1023 + '\\n')\n"
        ),
        f"{mib} MiB of valid results": (
            f"per = {mib} * 1024 * 1024 // len(ids) // 3\n"
            "for i in ids:\n"
            "    out.write(json.dumps({'instance': i, 'score': 1.0, 'trajectory': [1] * per}) + '\\n')\n"
        ),
        f"one {mib} MiB line on stderr": (
            f"for _ in range({mib}):\n    sys.stderr.write('e' * MB)\nsys.stderr.write('\\n')\n" + RESULTS
        ),
    }


def make_repo(root: Path, evaluator: str, extra: str = "", instances: int = 100, batch: int = 100) -> Path:
    repo = root / "repo"
    repo.mkdir(parents=True)
    selection = [f"i{n}" for n in range(instances)]
    files = {
        "harnessgit.toml": (
            '[harness]\npaths = ["SKILL.md"]\nbase = "main"\n\n'
            '[evaluator]\ncommand = ["python3", "eval.py"]\n'
            f"batch_size = {batch}\n{extra}"
        ),
        "splits.json": json.dumps({"train": ["t"], "selection": selection, "test": ["x"]}),
        "SKILL.md": "# Skill\n",
        "eval.py": (
            "import json, os, sys, time\nMB = 1024 * 1024\n"
            "ids = sys.stdin.read().split()\nout = sys.stdout\n" + evaluator
        ),
    }
    for name, text in files.items():
        (repo / name).write_text(text)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x"}
    env.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@x")
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "harness"]):
        subprocess.run(["git", *argv], cwd=repo, env=env, check=True)
    return repo


def harnessgit(
    repo: Path, *args: str, stderr: int | IO[bytes], tmpdir: Path | None = None
) -> subprocess.Popen[bytes]:
    env = dict(os.environ, **({"TMPDIR": str(tmpdir)} if tmpdir else {}))
    argv = [sys.executable, "-m", "harnessgit", *args]
    return subprocess.Popen(argv, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=stderr)


def kill_pidfile(path: Path) -> None:
    with contextlib.suppress(OSError, ValueError):
        os.kill(int(path.read_text()), signal.SIGKILL)


def daemon_lines(pidfile: Path) -> str:
    code = "import time; time.sleep(300)"
    return (
        "import subprocess\n"
        f"d = subprocess.Popen([sys.executable, '-c', {code!r}], start_new_session=True)\n"
        f"open({str(pidfile)!r}, 'w').write(str(d.pid))\n"
    )


def timed(argv: list[str], cwd: Path | None = None) -> tuple[float, str]:
    """Wall time of ``argv`` (cut off at CUTOFF) and the last line it printed. Its
    output goes to a file: a pipe would be held by the daemon, here too."""
    with tempfile.TemporaryFile() as sink:
        started = time.monotonic()
        proc = subprocess.Popen(argv, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT)
        try:
            proc.wait(CUTOFF)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return time.monotonic() - started, "still waiting: killed"
        wall = time.monotonic() - started
        sink.seek(0)
        lines = sink.read().decode("utf-8", "replace").strip().splitlines() or [""]
    return wall, f"exit {proc.returncode}: {lines[-1][:100]}"


PLAIN_READ = (
    "import subprocess, sys\n"
    "try:\n"
    "    out = subprocess.run(sys.argv[1:], input=b'i0\\ni1\\n', capture_output=True, timeout=5)\n"
    "    print('read', len(out.stdout), 'bytes')\n"
    "except subprocess.TimeoutExpired:\n"
    "    print('TimeoutExpired')\n"
)

PROPOSE = (
    "import sys\nfrom harnessgit.config.proposer import CommandProposerSection\n"
    "from harnessgit.errors import ProposerFailed\n"
    "from harnessgit.proposers.command import CommandProposer\n"
    "from harnessgit.proposers.protocol import ProposalRequest\n"
    "section = CommandProposerSection(command=[sys.executable, sys.argv[1]], timeout=5)\n"
    "request = ProposalRequest(component='SKILL.md', current_text='# s\\n', examples=[])\n"
    "try:\n"
    "    print(type(CommandProposer(section).propose(request)).__name__)\n"
    "except ProposerFailed as exc:\n"
    "    print('ProposerFailed:', str(exc)[:80])\n"
)


def bench_hang(root: Path) -> None:
    print("## hang: a daemon in its own session holds stdout and stderr for 300 s; timeout 5 s")
    print(f"{'reader':44} {'program':26} {'wall':>8}  outcome")
    for ending, body in (("prints its answer, exits", RESULTS), ("hangs", "time.sleep(300)\n")):
        where = root / f"hang-{len(body)}"
        pidfile = where / "daemon.pid"
        repo = make_repo(where, daemon_lines(pidfile) + body, "timeout = 5\n", instances=2, batch=2)
        readers: list[tuple[str, list[str]]] = [
            (
                "subprocess.run(timeout=5) (baseline)",
                [sys.executable, "-c", PLAIN_READ, "python3", "eval.py"],
            ),
            ("harnessgit eval", [sys.executable, "-m", "harnessgit", "eval", "main"]),
        ]
        for reader, argv in readers:
            wall, said = timed(argv, cwd=repo)
            print(f"{reader:44} {ending:26} {wall:6.2f} s  {said}")
            kill_pidfile(pidfile)
        proposer = where / "propose.py"
        answer = "json.dump({'text': request['current_text'] + 'more\\n'}, sys.stdout)\n"
        proposer.write_text(
            "import json, sys, time\nrequest = json.load(sys.stdin)\n"
            + daemon_lines(pidfile)
            + (answer if body == RESULTS else body)
        )
        wall, said = timed([sys.executable, "-c", PROPOSE, str(proposer)])
        print(f"{'command proposer':44} {ending:26} {wall:6.2f} s  {said}")
        kill_pidfile(pidfile)


def peak_rss(argv: list[str], cwd: Path, stderr: IO[bytes]) -> tuple[int, int, float]:
    """(peak RSS in bytes of ``argv`` and the processes it waited for, exit status, wall)."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr)
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss * 1024, proc.returncode, time.monotonic() - started


UNBOUNDED_READ = (
    "import subprocess, sys\n"
    "ids = ''.join(f'i{n}\\n' for n in range(100)).encode()\n"
    "out = subprocess.run(sys.argv[1:], input=ids, capture_output=True)\n"
)


def size(count: int) -> str:
    for unit, scale in (("MB", MB), ("KB", 1024)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


def git_size(repo: Path) -> int:
    return sum(path.stat().st_size for path in (repo / ".git" / "objects").rglob("*") if path.is_file())


def bench_memory(root: Path, mib: int) -> None:
    print("## memory: peak RSS while an evaluator floods its output (one batch of 100 instances)")
    print(f"{'evaluator':34} {'reader':24} {'peak RSS':>9} {'stderr shown':>13} {'.git grew':>10}", end="")
    print(f" {'wall':>7}  exit")
    cases = {"100 small results (baseline)": RESULTS, **floods(mib)}
    for number, (name, body) in enumerate(cases.items()):
        repo = make_repo(root / f"memory{number}", body, "timeout = 300\n")
        readers: list[tuple[str, list[str]]] = [
            ("harnessgit eval", [sys.executable, "-m", "harnessgit", "eval", "main", "--no-cache"])
        ]
        if number:
            readers.insert(
                0, ("unbounded read (baseline)", [sys.executable, "-c", UNBOUNDED_READ, "python3", "eval.py"])
            )
        for reader, argv in readers:
            before = git_size(repo)
            errors = root / f"memory{number}.err"
            with errors.open("wb") as sink:
                rss, code, wall = peak_rss(argv, repo, sink)
            shown = errors.stat().st_size if reader == "harnessgit eval" else 0
            grew = git_size(repo) - before
            print(
                f"{name:34} {reader:24} {rss / MB:6.0f} MB {size(shown):>13} "
                f"{size(grew):>10} {wall:5.1f} s  {code}"
            )
            errors.unlink()


def bench_signals(root: Path, trials: int) -> None:
    print(f"## signals: {trials} evaluations each, the signal sent while 2 evaluators run")
    print(f"{'signal':28} {'exit statuses':>14} {'temp dirs left':>15} {'evaluators left':>16}")
    started_dir, slow = root / "signals" / "started", root / "signals" / "slow"
    body = (
        f"open(os.path.join({str(started_dir)!r}, str(os.getpid())), 'w').close()\n"
        f"if os.path.exists({str(slow)!r}):\n    time.sleep(30)\n"
    )
    repo = make_repo(root / "signals", body + RESULTS, "timeout = 60\njobs = 2\n", instances=4, batch=2)
    started_dir.mkdir()
    slow.touch()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        tmpdir = root / "signals" / f"tmp-{signum}"
        tmpdir.mkdir()
        codes, pids = [], []
        for _trial in range(trials):
            known = set(started_dir.iterdir())
            proc = harnessgit(repo, "-q", "eval", "main", tmpdir=tmpdir, stderr=subprocess.DEVNULL)
            while len(set(started_dir.iterdir()) - known) < 2:
                time.sleep(0.02)
            pids += [int(path.name) for path in set(started_dir.iterdir()) - known]
            proc.send_signal(signum)
            proc.wait()
            codes.append(proc.returncode)
        time.sleep(1)
        name = signal.Signals(signum).name
        left = len(list(tmpdir.iterdir()))
        print(f"{name:28} {sorted(set(codes))!s:>14} {left:>15} {count_running(pids):>16}")
        if signum == signal.SIGKILL:
            # The next eval sweeps what the killed ones left (its evaluators answer at once).
            slow.unlink()
            harnessgit(repo, "-q", "eval", "main", tmpdir=tmpdir, stderr=subprocess.DEVNULL).wait()
            time.sleep(1)
            label = "SIGKILL, then one more eval"
            print(f"{label:28} {'':>14} {len(list(tmpdir.iterdir())):>15} {count_running(pids):>16}")
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def count_running(pids: list[int]) -> int:
    count = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except FileNotFoundError:
            continue
        count += stat[stat.rfind(b")") + 2 :][:1] != b"Z"
    return count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="hang,memory,signals")
    parser.add_argument("--mib", type=int, default=200, help="MiB each flood writes")
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    import harnessgit as measured

    print(f"harnessgit from {Path(measured.__file__).parent}")
    with tempfile.TemporaryDirectory(prefix="hg-bench-processes-") as tmp:
        root = Path(tmp)
        for part in args.only.split(","):
            if part == "hang":
                bench_hang(root)
            elif part == "memory":
                bench_memory(root, args.mib)
            elif part == "signals":
                bench_signals(root, args.trials)


if __name__ == "__main__":
    main()
