"""Benchmark `harnessgit check`: one file, and a pre-commit run over 200 files.

Run from the repository root:

    .venv/bin/python tests/bench/bench_checks.py [--runs N]
    .venv/bin/python tests/bench/bench_checks.py --startup   # the hook on one file vs --help
    .venv/bin/python tests/bench/bench_checks.py --startup --baseline /tmp/main-code   # and before
    .venv/bin/python tests/bench/bench_checks.py --startup --baseline /tmp/main-code --instructions

``--startup`` times only what issue 26 asks of the hook: `harnessgit check SKILL.md` on
one small edited SKILL.md against `harnessgit --help`, medians of 9 runs (``--runs``)
measured in one run (the runs of each command taken in turn, so that load changes weigh
on all alike), their ratio (target: 1.5x at most), and the same check with no
bytecode cache at all, each as wall time and as CPU time (the process and its git
processes: steadier than wall time on a loaded machine). It also prints the floor of
that path: the interpreter with the modules every `check FILE` on a Markdown file in a
repository imports today (the CLI, the read-only store, the [harness]/[checks] reader
and markdown-it), to show how much of the ratio the checks themselves can still win.

Prints median wall times (including interpreter start) and ratios to baselines
measured in the same run on the same machine: bare `python -c pass` start-up,
and `git diff --stat` over the same 200 files. When pre-commit is installed beside
this interpreter (the dev extra), it also times a real `pre-commit run` of the
published hook's entry over the 200 staged files, against a hook that does nothing.
Not a test: it asserts nothing.

Bytecode: the timed runs use a private bytecode cache (PYTHONPYCACHEPREFIX), filled
by each measurement's warm-up run, as an installed package has its .pyc files. A
shell with PYTHONDONTWRITEBYTECODE=1 and an editable install would otherwise
compile every harnessgit module from source on every run (~60 ms more); one
row measures the very first run, with no bytecode for any module at all.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Text with the word frequencies of prose: 2,000 made-up words drawn by Zipf's law.
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "si", "de", "pa", "gu", "ze"]


# What `check` pays before any work: the CLI, the store, and [harness]/[checks] read
# by the config reader (harnessgit.checkconfig.reader, no pydantic).
FLOOR = (
    "import harnessgit.cli, harnessgit.store, pathlib; "
    "from harnessgit.config import load_check_config; load_check_config(pathlib.Path('.'))"
)
# What `check` would pay if the one config reader were pydantic (docs/design.md, "One
# reader for harnessgit.toml"): the same floor plus pydantic's import alone, before any
# schema is built.
CONFIG_FLOOR = "import pydantic.main; " + FLOOR
FLOOR_NAME = "floor: import cli + store, read [harness] and [checks]"
CONFIG_FLOOR_NAME = "the floor plus importing pydantic"
PRECOMMIT_NOOP = "pre-commit run, a hook that does nothing (baseline)"
PRECOMMIT_RUN = "pre-commit run, harnessgit-check on the staged files"


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def median_ms(argv: list[str], cwd: Path, env: dict[str, str], runs: int) -> float:
    run(argv, cwd, env)  # warm the page cache and .pyc files
    return 1000 * statistics.median(run(argv, cwd, env) for _ in range(runs))


def vocabulary(rng: random.Random, size: int = 2000) -> list[str]:
    return ["".join(rng.choices(SYLLABLES, k=rng.randint(1, 4))) for _ in range(size)]


def skill(name: str, rng: random.Random, steps: int, words: list[str]) -> str:
    weights = [1 / rank for rank in range(1, len(words) + 1)]
    lines = [f"- {' '.join(rng.choices(words, weights, k=rng.randint(6, 16)))}." for _ in range(steps)]
    return (
        f"---\nname: {name}\ndescription: Skill {name} for the benchmark.\n---\n# {name}\n\n"
        + "\n".join(lines)
        + "\n"
    )


def precommit_configs(repo: Path, env: dict[str, str], python: str) -> tuple[str, str]:
    """Two staged pre-commit configs: harnessgit's published hook run as a local
    system hook (its entry, with this interpreter), and a hook that does nothing
    (`true`), which measures pre-commit's own cost over the same files."""
    hook = shlex.join([python, "-m", "harnessgit", "check", "--staged"])
    for name, entry in (("harnessgit", hook), ("noop", "true")):
        (repo / f".pc-{name}.yaml").write_text(
            "repos:\n- repo: local\n  hooks:\n"
            f"  - id: {name}\n    name: {name}\n    entry: {entry}\n"
            "    language: system\n    require_serial: true\n"
        )
    git(repo, env, "add", ".pc-harnessgit.yaml", ".pc-noop.yaml")
    return ".pc-harnessgit.yaml", ".pc-noop.yaml"


def git(repo: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def build_repo(root: Path, env: dict[str, str], files: int) -> Path:
    """A harness repository of `files` SKILL.md files (~60 lines each), with every one edited and staged."""
    repo = root / "harness"
    repo.mkdir()
    git(repo, env, "init", "-q", "-b", "main")
    rng = random.Random(0)
    words = vocabulary(rng)
    for i in range(files):
        path = repo / "skills" / f"skill-{i}" / "SKILL.md"
        path.parent.mkdir(parents=True)
        path.write_text(skill(f"skill-{i}", rng, 60, words))
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-q", "-m", "base")
    for i in range(files):
        path = repo / "skills" / f"skill-{i}" / "SKILL.md"
        path.write_text(path.read_text().replace("- ", "- Always ", 1))
    git(repo, env, "add", "-A")
    return repo


def cpu_run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system, the process and the git processes it
    waited for: Linux's wait4 counts reaped children) of one run."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(child.pid, 0)
    child.returncode = 0  # reaped above
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def medians_ms(argv: list[str], cwd: Path, env: dict[str, str], runs: int) -> tuple[float, float]:
    """Median wall and median CPU milliseconds of ``runs`` runs, after one warm-up run."""
    cpu_run(argv, cwd, env)  # warm the page cache and .pyc files
    times = [cpu_run(argv, cwd, env) for _ in range(runs)]
    return 1000 * statistics.median(t[0] for t in times), 1000 * statistics.median(t[1] for t in times)


def interleaved_medians_ms(
    commands: dict[str, tuple[list[str], dict[str, str]]], cwd: Path, runs: int
) -> dict[str, tuple[float, float]]:
    """`medians_ms` of several commands, their runs taken in turn (one of each, ``runs``
    times) so that a change in the machine's load weighs on every command alike and the
    ratios between them hold better than the times do."""
    for argv, env in commands.values():
        cpu_run(argv, cwd, env)  # warm the page cache and .pyc files
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (argv, env) in commands.items():
            times[name].append(cpu_run(argv, cwd, env))
    return {
        name: (1000 * statistics.median(t[0] for t in got), 1000 * statistics.median(t[1] for t in got))
        for name, got in times.items()
    }


# What every `check FILE` in a repository loads besides the CLI, whatever the rules do:
# the read-only store and the [harness]/[checks] reader (before issue 26's hook-fast:
# the whole store and configuration, which a PYTHONPATH of older code still measures).
HOOK_FLOOR = """import harnessgit.cli._base, markdown_it
try:
    import harnessgit.readstore, harnessgit.checkconfig
except ImportError:
    import harnessgit.store, harnessgit.config"""


def instructions(argv: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Instructions one run executes in its Python process (valgrind's callgrind; git's
    processes are not followed): the same count on every repeat, whatever the load."""
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return int(re.search(r"Collected : (\d+)", out.stderr).group(1))  # type: ignore[union-attr]


def startup(runs: int, baseline: str | None = None, instructions_wanted: bool = False) -> None:
    """`check SKILL.md` against `--help`, with and without bytecode (issue 26, item 7);
    with ``baseline`` (a checkout of other code), the same commands run on that code too,
    their runs taken in turn with this code's (before and after in one run)."""
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="harnessgit-bench-") as tmp:
        env = dict(os.environ, HOME=tmp, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b")
        env.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b", PYTHONPYCACHEPREFIX=f"{tmp}/pyc")
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # the warm-up run writes the cache the timed runs read
        repo = Path(tmp) / "harness"
        repo.mkdir()
        git(repo, env, "init", "-q", "-b", "main")
        rng = random.Random(0)
        (repo / "SKILL.md").write_text(skill("demo", rng, 20, vocabulary(rng)))
        git(repo, env, "add", "-A")
        git(repo, env, "commit", "-q", "-m", "base")
        with (repo / "SKILL.md").open("a") as out:
            out.write("- One more step.\n")
        check = [python, "-m", "harnessgit", "check", "SKILL.md"]
        trees = {"": env}
        if baseline:
            trees["baseline: "] = dict(env, PYTHONPATH=baseline, PYTHONPYCACHEPREFIX=f"{tmp}/pyc-baseline")
        commands = {}
        for label, tree in trees.items():
            cold = dict(tree, PYTHONPYCACHEPREFIX=f"{tmp}/empty", PYTHONDONTWRITEBYTECODE="1")
            commands |= {
                f"{label}python -c pass": ([python, "-c", "pass"], tree),
                f"{label}harnessgit --help": ([python, "-m", "harnessgit", "--help"], tree),
                f"{label}floor: CLI + the hook's store and config + markdown-it": (
                    [python, "-c", HOOK_FLOOR],
                    tree,
                ),
                f"{label}harnessgit check SKILL.md": (check, tree),
                f"{label}harnessgit check SKILL.md, no bytecode cache": (check, cold),
            }
        figures = interleaved_medians_ms(commands, repo, runs)
        shown = subprocess.run(check, cwd=repo, env=env, capture_output=True, text=True).stdout.strip()
        helped = [python, "-m", "harnessgit", "--help"]
        counted = {
            f"{label}{name}": instructions(argv, repo, tree)
            for label, tree in trees.items()
            for name, argv in (("harnessgit --help", helped), ("check", check))
            if instructions_wanted
        }
    print(
        f"hook start-up: {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, median of {runs} runs, bytecode cached unless said, "
        f"load average {os.getloadavg()[0]:.1f} at the end"
    )
    for label in trees:
        wall, cpu = figures[f"{label}harnessgit --help"]
        header = f"{'wall':>9s} {'ratio':>6s}  {'CPU':>9s} {'ratio':>6s}"
        print(f"  {'':62s} {header}  (ratio: to harnessgit --help)")
        for name, (ms, cpu_ms) in figures.items():
            if name.startswith(label) and (label or not name.startswith("baseline: ")):
                print(f"  {name:62s} {ms:6.1f} ms {ms / wall:5.2f}x  {cpu_ms:6.1f} ms {cpu_ms / cpu:5.2f}x")
    for label in trees:
        if counted:
            help_count, check_count = counted[f"{label}harnessgit --help"], counted[f"{label}check"]
            print(
                f"  {label}instructions (callgrind, the Python process only): "
                f"--help {help_count / 1e6:.1f} M, check SKILL.md {check_count / 1e6:.1f} M, "
                f"{check_count / help_count:.2f}x"
            )
    print(f"  the check's own output: {shown}")
    print("target: harnessgit check SKILL.md <= 1.5x harnessgit --help (bytecode cached). On a loaded")
    print("machine the wall times wait for the CPU; the CPU times are what each run costs.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=None, help="timed runs per measurement (default 21; 9 with --startup)"
    )
    parser.add_argument("--files", type=int, default=200, help="files in the pre-commit run (default 200)")
    parser.add_argument("--startup", action="store_true", help="only `check SKILL.md` against `--help`")
    parser.add_argument(
        "--baseline", metavar="CODE", help="with --startup: also measure this checkout's code, in turn"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="with --startup: also count instructions of --help and the check (needs valgrind)",
    )
    args = parser.parse_args()
    if args.startup:
        startup(args.runs or 9, args.baseline, args.instructions)
        return
    args.runs = args.runs or 21
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="harnessgit-bench-") as tmp:
        env = dict(os.environ, HOME=tmp, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b")
        env.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b", PYTHONPYCACHEPREFIX=f"{tmp}/pyc")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # No bytecode anywhere, none written: what the very first run of a fresh install pays.
        cold = dict(env, PYTHONPYCACHEPREFIX=f"{tmp}/empty", PYTHONDONTWRITEBYTECODE="1")
        repo = build_repo(Path(tmp), env, args.files)
        paths = [f"skills/skill-{i}/SKILL.md" for i in range(args.files)]
        one = [python, "-m", "harnessgit", "check", paths[0]]
        hook = [python, "-m", "harnessgit", "check", "--staged", *paths]
        figures = {
            "python -c pass": median_ms([python, "-c", "pass"], repo, env, args.runs),
            "harnessgit --help": median_ms([python, "-m", "harnessgit", "--help"], repo, env, args.runs),
            FLOOR_NAME: median_ms([python, "-c", FLOOR], repo, env, args.runs),
            CONFIG_FLOOR_NAME: median_ms([python, "-c", CONFIG_FLOOR], repo, env, args.runs),
            "check 1 file": median_ms(one, repo, env, args.runs),
            f"git diff --cached --stat ({args.files} files)": median_ms(
                ["git", "diff", "--cached", "--stat", "--", *paths], repo, env, args.runs
            ),
            f"check --staged ({args.files} files, the hook's entry)": median_ms(hook, repo, env, args.runs),
            "check 1 file, no bytecode cache (first run ever)": median_ms(one, repo, cold, args.runs),
        }
        precommit = Path(python).parent / "pre-commit"
        if precommit.exists():  # the dev extra installs it
            ours, noop = precommit_configs(repo, env, python)
            for name, config in ((PRECOMMIT_NOOP, noop), (PRECOMMIT_RUN, ours)):
                argv = [str(precommit), "run", "-c", config]
                figures[name] = median_ms(argv, repo, env, args.runs)
            # Show that the timed hook did its work (a skipped hook would be fast too).
            verbose = [str(precommit), "run", "-c", ours, "--verbose"]
            shown = subprocess.run(verbose, cwd=repo, env=env, capture_output=True, text=True).stdout
            verdict = [line for line in shown.splitlines() if line.startswith(("harnessgit", "checked", "("))]
    start = figures["python -c pass"]
    floor = figures[FLOOR_NAME]
    diff = figures[f"git diff --cached --stat ({args.files} files)"]
    print(
        f"harnessgit check benchmark: {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, median of {args.runs} runs"
    )
    for name, value in figures.items():
        ratio = f"{value / start:5.1f}x python start-up"
        if name.startswith("check"):
            ratio += f", {value - floor:+6.1f} ms over the floor"
        if name.startswith("check 1 file") or name == CONFIG_FLOOR_NAME:
            ratio += f", {value / figures['harnessgit --help']:4.2f}x harnessgit --help"
        if "files" in name and "check" in name:
            ratio += f", {value / diff:5.1f}x git diff --stat"
        if name == PRECOMMIT_RUN:
            ratio += f", {value - figures[PRECOMMIT_NOOP]:+6.1f} ms over pre-commit's own"
        print(f"  {name:55s} {value:7.1f} ms   {ratio}")
    if PRECOMMIT_RUN in figures:
        print(f"  the hook's own output: {' / '.join(verdict)}")
    else:
        print("  (pre-commit is not installed beside this python: pip install -e '.[dev]')")
    print(f"targets: check 1 file <= 250 ms; a pre-commit run over {args.files} harness files < 1000 ms")


if __name__ == "__main__":
    main()
