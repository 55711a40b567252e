"""Running the user's evaluator on one batch of instances, and reading what it says.

The protocol (docs/evaluator.md): the evaluator runs in a directory holding the
evaluated commit's whole tree, receives the instance ids on standard input (and
in HARNESSGIT_INSTANCES_FILE), and prints one JSON object per instance:
``{"instance": id, "score": 0..1, "feedback"?, "trajectory"?, "failure_class"?,
"cluster"?, "cost"?}``. Anything else is an error that names the line or the
instance, with the evaluator's last lines of standard error.
"""

from __future__ import annotations

import collections
import contextlib
import math
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from harnessgit.errors import HarnessgitError
from harnessgit.evidence import loads_strict
from harnessgit.processes import kill_group, start_group

MAX_LINE_BYTES = 16 * 1024 * 1024
STDERR_TAIL = 5


class EvaluatorError(HarnessgitError):
    pass


@dataclass(frozen=True)
class InstanceResult:
    instance: str
    score: float
    feedback: str | None = None
    trajectory: Any = None
    failure_class: str | None = None
    cluster: str | None = None
    cost: dict[str, float] | None = None


@dataclass(frozen=True)
class BatchOutput:
    results: list[InstanceResult]
    wall_time: float


class OutputProblem(Exception):
    """What is wrong with the evaluator's output (the caller adds the context)."""


def parse_output(lines: list[bytes], requested: list[str]) -> list[InstanceResult]:
    wanted = set(requested)
    results: dict[str, InstanceResult] = {}
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise OutputProblem(f"output line {number} is not UTF-8") from None
        try:
            data = loads_strict(text)
        except ValueError as exc:
            raise OutputProblem(f"output line {number} is not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise OutputProblem(f"output line {number} is not a JSON object")
        result = _instance_result(data, number)
        if result.instance not in wanted:
            raise OutputProblem(f"output line {number}: instance {result.instance!r} was not requested")
        if result.instance in results:
            raise OutputProblem(f"output line {number}: instance {result.instance!r} reported twice")
        results[result.instance] = result
    if not results:
        raise OutputProblem("the evaluator printed no results")
    missing = [instance for instance in requested if instance not in results]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise OutputProblem(f"no result for instance {missing[0]!r}{more}")
    return [results[instance] for instance in requested]


def _instance_result(data: dict[str, Any], number: int) -> InstanceResult:
    instance = data.get("instance")
    if not isinstance(instance, str) or not instance:
        raise OutputProblem(f"output line {number}: 'instance' must be a non-empty string")
    where = f"instance {instance!r}"
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise OutputProblem(f"{where}: 'score' must be a number, got {type(score).__name__}")
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise OutputProblem(f"{where}: score {score} is outside [0, 1]")
    for key in ("feedback", "failure_class", "cluster"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise OutputProblem(f"{where}: {key!r} must be a string")
    cost = data.get("cost")
    if cost is not None:
        if not isinstance(cost, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in cost.values()
        ):
            raise OutputProblem(f"{where}: 'cost' must be an object of numbers")
        cost = {str(key): float(value) for key, value in cost.items()}
    return InstanceResult(
        instance=instance,
        score=float(score),
        feedback=data.get("feedback"),
        trajectory=data.get("trajectory"),
        failure_class=data.get("failure_class"),
        cluster=data.get("cluster"),
        cost=cost,
    )


class Running:
    """The evaluator processes alive right now, so an interrupt can end them all."""

    def __init__(self) -> None:
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.add(proc)

    def discard(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.discard(proc)

    def kill_all(self) -> None:
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            kill_group(proc)


def run_batch(
    argv: list[str],
    workdir: Path,
    env: dict[str, str],
    instances: list[str],
    *,
    timeout: float,
    running: Running,
    on_stderr: Callable[[str], None] | None = None,
    max_line: int = MAX_LINE_BYTES,
) -> BatchOutput:
    """Run the evaluator once over ``instances``; raise EvaluatorError on any problem."""
    tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
    started = time.monotonic()
    try:
        proc = start_group(argv, workdir, env)
    except OSError as exc:
        raise EvaluatorError(f"cannot start the evaluator {argv[0]!r}: {exc.strerror}") from None
    running.add(proc)
    lines: list[bytes] = []
    problem: list[str] = []
    assert proc.stdin and proc.stdout and proc.stderr
    threads = [
        threading.Thread(target=_feed, args=(proc.stdin, instances), daemon=True),
        threading.Thread(target=_drain_stderr, args=(proc.stderr, tail, on_stderr), daemon=True),
        threading.Thread(target=_read_stdout, args=(proc, lines, problem, max_line), daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        threads[2].join(timeout)
        if threads[2].is_alive():
            kill_group(proc)
            threads[2].join()
            problem.insert(0, f"timed out after {timeout:g} s (the whole process group was killed)")
        try:
            returncode = proc.wait(timeout=max(0.0, timeout - (time.monotonic() - started)) + 1)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            returncode = proc.wait()
            problem.insert(0, f"timed out after {timeout:g} s (the whole process group was killed)")
        for thread in threads[:2]:
            thread.join(5)
    finally:
        running.discard(proc)
        kill_group(proc)  # stragglers it left behind in its group
        for thread in threads:
            thread.join(5)
        for stream in (proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                stream.close()
    wall = time.monotonic() - started
    if problem:
        raise _error(problem[0], tail)
    if returncode != 0:
        signal_note = f" (signal {-returncode})" if returncode < 0 else ""
        raise _error(f"exited with status {returncode}{signal_note}", tail)
    try:
        return BatchOutput(parse_output(lines, instances), wall)
    except OutputProblem as exc:
        raise _error(str(exc), tail) from None


def _error(problem: str, tail: collections.deque[str]) -> EvaluatorError:
    if tail:
        stderr = " | ".join(line.strip() for line in tail if line.strip())
        if len(stderr) > 400:
            stderr = "..." + stderr[-400:]
        return EvaluatorError(f"evaluator: {problem}; last stderr: {stderr}")
    return EvaluatorError(f"evaluator: {problem}")


def _feed(stdin: IO[bytes], instances: list[str]) -> None:
    with contextlib.suppress(BrokenPipeError, OSError):
        stdin.write("".join(f"{instance}\n" for instance in instances).encode("utf-8"))
    with contextlib.suppress(BrokenPipeError, OSError):
        stdin.close()


def _drain_stderr(
    stream: IO[bytes], tail: collections.deque[str], sink: Callable[[str], None] | None
) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace").rstrip("\n")
        tail.append(line)
        if sink is not None:
            sink(line)


def _read_stdout(
    proc: subprocess.Popen[bytes], lines: list[bytes], problem: list[str], max_line: int
) -> None:
    assert proc.stdout
    number = 0
    while True:
        raw = proc.stdout.readline(max_line + 1)
        if not raw:
            return
        number += 1
        if len(raw) > max_line:
            problem.append(f"output line {number} is longer than {max_line} bytes")
            kill_group(proc)
            return
        lines.append(raw.rstrip(b"\n"))
