"""How many harnessgit functions one command enters (issue 26: "a newcomer following one
command meets too many doors").

    python tests/bench/bench_call_count.py [--baseline DIR]... [--top N] [--names FILE] [--steps]

For each code tree (this checkout, and each ``--baseline DIR``, a worktree of another
commit, e.g. ``git worktree add /tmp/base 9383f1e``), in one run: build the demo's repository
(templates/triage, as ``harnessgit demo`` starts it) with that tree's code, evaluate main,
then measure four commands, each in a fresh interpreter so that imports count:

- ``evolve --max-proposals 1`` (one iteration: parent, minibatch, proposal, selection, gate);
- ``gate CAND`` on the candidate that iteration left (the scores are cached, as after evolve);
- ``gate CAND`` again (``gate again``: the eval-notes index is current, as it is unless a
  command wrote evaluation notes after its last read, as evolve does);
- ``check --staged`` with an edit to SKILL.md staged.

A profiler hook (``sys.setprofile`` and ``threading.setprofile``) sees every Python frame
entered; the counts keep the frames whose code lives in the tree's harnessgit/ package:
distinct functions (code objects other than a module's body), distinct files, and the
deepest nesting of harnessgit frames in one thread. Module bodies are counted apart
(``modules``): a file imported but none of its functions called is a file entered. A
class body is a code object run once at import; it counts as a function (as the issue's
figures did) and is shown apart too (``classes``), as are comprehensions and lambdas
(``inline``); ``named`` is what is left, the functions and methods a reader follows.
The evaluator's and proposer's processes are the template's code, not counted.
Printed for the gate of each tree: its functions by package and by kind, and with
``--steps``, this tree's by what each is for (`STEPS`).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

HERE = Path(__file__).resolve().parents[2]
# Code objects that are not functions a reader follows: comprehensions and lambdas
# (Python 3.11 runs each comprehension as a function of its own; 3.12 inlines them).
INLINE = {"<listcomp>", "<genexpr>", "<dictcomp>", "<setcomp>", "<lambda>"}

# What a `gate` with every score and the checks' verdict on record does, as the files of
# this tree divide it (the first prefix of "file:qualname" that matches; --steps). A
# module imported for a feature the run does not use (a remote, a landing, a sample, other
# models, another policy or method) has only its class bodies entered: counted apart.
STEPS: list[tuple[str, tuple[str, ...]]] = [
    (
        "modules imported, nothing in them run",
        (
            "check_rules.py",
            "processes/",
            "readstore/changes.py",
            "records/runs.py",
            "scrub.py",
            "stats/eprocess.py",
            "stats/holm.py",
            "stats/signtest.py",
            "store/landing_lock.py",
            "store/remote.py",
            "store/staging.py",
            "sync/",
        ),
    ),
    ("the CLI: group, options, runner, exit codes, errors", ("cli/", "errors.py")),
    (
        "opening the store: git runner, parts, preflight (recovery, locks)",
        (
            "readstore/__init__.py",
            "readstore/git.py",
            "readstore/inflight.py",
            "readstore/worktree.py",
            "store/identity.py",
            "store/journal.py:entries",
            "store/locks.py",
            "store/recovery.py",
            "store/repo.py",
            "store/refs.py:Refs.__init__",
            "store/refs.py:Refs.close",
        ),
    ),
    ("configuration: harnessgit.toml read whole (working tree, base)", ("config/", "checkconfig/")),
    (
        "refs, names, revisions",
        (
            "readstore/refs.py",
            "readstore/reffiles.py",
            "store/refs.py:Refs.value",
            "store/refs.py:Refs.listing",
            "names.py",
            "layout.py",
            "targets.py",
        ),
    ),
    (
        "objects read: cat-file, commits, trees",
        ("readstore/catfile.py", "readstore/objects.py", "objects.py", "readstore/history.py"),
    ),
    (
        "the base's committed settings, manifest, uncommitted edits",
        ("gate/settings.py", "evaluation/splits.py", "confine.py", "store/worktree.py"),
    ),
    (
        "evaluation keys: evaluator fingerprint, harness tree id",
        ("evaluation/context.py", "evaluation/fingerprint.py", "globs.py", "object_ids.py"),
    ),
    ("the checks' verdict on record, rebuilt", ("candidates/", "check_findings.py", "canonical.py")),
    ("evaluate: what is on record, nothing to run", ("evaluation/execution.py",)),
    (
        "the score book and the eval-notes index",
        ("evaluation/scores.py", "store/index", "readstore/derived.py"),
    ),
    (
        "notes read, records parsed strictly",
        ("store/notes.py", "store/refs.py:Refs.staged_lines", "records/"),
    ),
    (
        "attempt k and the prior, from the gate records",
        (
            "gate/attempts.py:_comparisons",
            "gate/attempts.py:attempt_on_record",
            "gate/attempts.py:next_attempt",
            "gate/prior.py",
        ),
    ),
    ("statistics: the decision and the numbers the record holds", ("stats/",)),
    (
        "the gate's steps and its record",
        ("gate/gate.py", "gate/outcome.py", "gate/models.py", "gate/used.py", "gate/selection_pool.py"),
    ),
    ("the record written: one journaled transaction", ("gate/attempts.py:record_gate", "store/")),
    ("output: the text, the calibration line", ("gate/render.py", "render.py", "calibrate/")),
]


def _qualname(code: CodeType) -> str:
    name: str = getattr(code, "co_qualname", code.co_name)  # Python 3.11+
    return name


def _child(out: Path, argv: list[str]) -> None:
    """Run ``harnessgit argv`` in this interpreter under the profiler; write the counts."""
    spec = importlib.util.find_spec("harnessgit")
    assert spec is not None and spec.origin is not None
    package = str(Path(spec.origin).parent) + os.sep
    functions: set[tuple[str, int, str]] = set()
    files: set[str] = set()
    modules: set[str] = set()
    classes: set[tuple[str, int, str]] = set()
    local = threading.local()
    deepest = [0]

    def hook(frame: FrameType, event: str, _arg: Any) -> None:
        code = frame.f_code
        if not code.co_filename.startswith(package):
            return
        if event == "call":
            depth = getattr(local, "depth", 0) + 1
            local.depth = depth
            deepest[0] = max(deepest[0], depth)
            files.add(code.co_filename)
            if code.co_name == "<module>":
                modules.add(code.co_filename)
            else:
                functions.add((code.co_filename, code.co_firstlineno, _qualname(code)))
                if not code.co_flags & inspect.CO_OPTIMIZED:  # a class body, run at import
                    classes.add((code.co_filename, code.co_firstlineno, _qualname(code)))
        elif event == "return":
            local.depth = getattr(local, "depth", 1) - 1

    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        from harnessgit.cli import main

        code = main(argv)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    by_file: dict[str, int] = {}
    for filename, _line, _name in functions:
        name = filename[len(package) :]
        by_file[name] = by_file.get(name, 0) + 1
    result = {
        "exit": code,
        "functions": len(functions),
        "files": len(files),
        "modules": len(modules),
        "classes": len(classes),
        "inline": sum(1 for f in functions if f[2].rsplit(".", 1)[-1] in INLINE),
        "depth": deepest[0],
        "by_file": dict(sorted(by_file.items(), key=lambda item: -item[1])),
        "names": sorted(f"{f[len(package) :]}:{n}" for f, _l, n in functions),
        "class_names": sorted(f"{f[len(package) :]}:{n}" for f, _l, n in classes),
    }
    out.write_text(json.dumps(result))


def _run(tree: Path, repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-m", "harnessgit", "-C", str(repo), "-q", *args]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if check and result.returncode not in (0, 1, 4):
        raise SystemExit(f"{' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


def _measure(tree: Path, repo: Path, *args: str) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, __file__, "--child", str(out), "-C", str(repo), "-q", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if not out.stat().st_size:
        raise SystemExit(f"{' '.join(args)}: no counts written: {done.stderr.strip()[-2000:]}")
    data: dict[str, Any] = json.loads(out.read_text())
    out.unlink()
    return data


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def _build(tree: Path, repo: Path) -> None:
    """The demo's repository, as ``harnessgit demo`` prepares it, with main evaluated."""
    repo.mkdir(parents=True)
    for item in (tree / "templates" / "triage").iterdir():
        if item.name == "__pycache__":
            continue
        copy = shutil.copytree if item.is_dir() else shutil.copy2
        copy(item, repo / item.name)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "bench")
    _git(repo, "config", "user.email", "bench@harnessgit.invalid")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "The triage skill as it ships")
    _run(tree, repo, "eval", "main")


def _candidate(tree: Path, repo: Path) -> str:
    listed = _git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
    candidates = [name for name in listed.split() if name != "main"]
    if not candidates:
        raise SystemExit(f"evolve left no candidate branch in {repo}: {listed!r}")
    return candidates[0]


def measure_tree(tree: Path, work: Path) -> dict[str, dict[str, Any]]:
    repo = work / "demo"
    _build(tree, repo)
    figures = {"evolve (1 iteration)": _measure(tree, repo, "evolve", "--max-proposals", "1")}
    figures["gate"] = _measure(tree, repo, "gate", _candidate(tree, repo))
    figures["gate again"] = _measure(tree, repo, "gate", _candidate(tree, repo))
    skill = repo / "SKILL.md"
    skill.write_text(skill.read_text() + "\n- If the ticket mentions a refund, route to billing.\n")
    _git(repo, "add", "SKILL.md")
    figures["check --staged"] = _measure(tree, repo, "check", "--staged")
    return figures


def _table(results: dict[str, dict[str, dict[str, Any]]]) -> None:
    heads = (
        ("functions", 9),
        ("files", 6),
        ("classes", 7),
        ("inline", 6),
        ("named", 5),
        ("depth", 5),
        ("exit", 4),
    )
    print(f"{'tree':<28} {'command':<22} " + " ".join(f"{name:>{width}}" for name, width in heads))
    for tree, figures in results.items():
        for command, data in figures.items():
            data = {**data, "named": data["functions"] - data["classes"] - data["inline"]}
            cells = " ".join(f"{data[name]:>{width}}" for name, width in heads)
            print(f"{tree:<28} {command:<22} {cells}")


def _package(name: str) -> str:
    return name.split("/")[0] if "/" in name else "(top-level modules)"


def _kinds(label: str, gate: dict[str, Any]) -> None:
    """The gate's functions by package, split as the table splits them (named / class
    bodies / comprehensions and lambdas), and the comprehensions and lambdas by kind:
    Python 3.12 runs list, dict and set comprehensions inline (PEP 709), without a frame
    of their own, so this count of the same code is lower there by that many."""
    classes = set(gate["class_names"])
    split: dict[str, list[int]] = {}
    inline: dict[str, int] = {}
    for name in gate["names"]:
        counts = split.setdefault(_package(name.split(":")[0]), [0, 0, 0])
        last = name.rsplit(".", 1)[-1].rsplit(":", 1)[-1]
        if name in classes:
            counts[1] += 1
        elif last in INLINE:
            counts[2] += 1
            inline[last] = inline.get(last, 0) + 1
        else:
            counts[0] += 1
    print(f"\n{label}: the gate's functions by package, named / class bodies / inline")
    for package, counts in sorted(split.items(), key=lambda item: -sum(item[1])):
        print(f"  {sum(counts):>4}  {package:<22} " + " ".join(f"{n:>4}" for n in counts))
    shown = ", ".join(f"{kind} {n}" for kind, n in sorted(inline.items(), key=lambda item: -item[1]))
    print(f"  inline by kind: {shown}")


def _steps(label: str, gate: dict[str, Any]) -> None:
    """The gate's functions by `STEPS`, split named / class bodies / inline."""
    classes = set(gate["class_names"])
    counts = {step: [0, 0, 0] for step, _prefixes in [*STEPS, ("(no step)", ())]}
    for name in gate["names"]:
        step = next((step for step, prefixes in STEPS if name.startswith(prefixes)), "(no step)")
        last = name.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
        counts[step][1 if name in classes else 2 if last in INLINE else 0] += 1
    print(f"\n{label}: the gate's functions by what they are for, named / class bodies / inline")
    for step, split in counts.items():
        if sum(split):
            print(f"  {sum(split):>4}  {step:<66} " + " ".join(f"{n:>4}" for n in split))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, action="append", default=[], help="another tree to measure")
    parser.add_argument("--top", type=int, default=25, help="files with the most functions, per tree (gate)")
    parser.add_argument("--names", help="write every function the gate entered, per tree, to this JSON file")
    parser.add_argument("--steps", action="store_true", help="this tree's gate by what each function is for")
    args = parser.parse_args()
    trees = {f"baseline {tree.name}": tree.resolve() for tree in args.baseline}
    trees["this tree"] = HERE
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as work:
        for index, (label, tree) in enumerate(trees.items()):
            results[label] = measure_tree(tree, Path(work) / str(index))
    _table(results)
    for label, figures in results.items():
        packages: dict[str, int] = {}
        for name, count in figures["gate"]["by_file"].items():
            packages[_package(name)] = packages.get(_package(name), 0) + count
        shown = ", ".join(f"{p} {n}" for p, n in sorted(packages.items(), key=lambda item: -item[1]))
        print(f"\n{label}: the gate's functions by package: {shown}")
    for label, figures in results.items():
        _kinds(label, figures["gate"])
    if args.steps:
        _steps("this tree", results["this tree"]["gate"])
    for label, figures in results.items():
        print(f"\n{label}: the gate's functions by file (top {args.top})")
        for name, count in list(figures["gate"]["by_file"].items())[: args.top]:
            print(f"  {count:>4}  {name}")
    if args.names:
        names = {label: {c: d["names"] for c, d in f.items()} for label, f in results.items()}
        Path(args.names).write_text(json.dumps(names, indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child(Path(sys.argv[2]), sys.argv[3:])
    else:
        main()
