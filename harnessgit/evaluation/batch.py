"""Running the user's evaluator on one batch of instances, and reading what it says.

The protocol (docs/evaluator.md): the evaluator runs in a directory holding the
evaluated commit's whole tree, receives the instance ids on standard input (and
in HARNESSGIT_INSTANCES_FILE), and prints one JSON object per instance:
``{"instance": id, "score": 0..1, "feedback"?, "trajectory"?, "failure_class"?,
"cluster"?, "cost"?}``. Anything else is an error that names the line or the
instance (quoting the start of a line that is not a result), with the evaluator's
last lines of standard error.

A failure ends the evaluation's other batches too (`Running.stop`): one failure
costs one batch, not a second that starts while the first is being reported.
"""

from __future__ import annotations

import collections
import contextlib
import json
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
from harnessgit.render import quoted_start

MAX_LINE_BYTES = 16 * 1024 * 1024
STDERR_TAIL = 5
# After the timeout the group is killed; its pipes then close at once, unless a process
# that left the group (setsid, a daemon) holds them: that one is not waited for longer.
GRACE = 1.0
# How long after the timeout a process that closed its stdout just before it may take
# to exit.
EXIT_SLACK = 1.0


class EvaluatorError(HarnessgitError):
    pass


class Stopped(EvaluatorError):
    """A batch that did not run to its end because another batch failed first."""

    def __init__(self) -> None:
        super().__init__("evaluator: stopped, another batch failed")


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
            raise OutputProblem(f"output line {number} is not UTF-8: {quoted_start(raw)}") from None
        try:
            data = loads_strict(text)
        except ValueError as exc:
            why = f"{exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise OutputProblem(f"output line {number} is not JSON ({why}): {quoted_start(text)}") from None
        if not isinstance(data, dict):
            raise OutputProblem(f"output line {number} is not a JSON object: {quoted_start(text)}")
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
    """The evaluator processes of one evaluation. Once stopped (a batch failed, or an
    interrupt), every one alive is killed and no other starts."""

    def __init__(self) -> None:
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self._stopped = False

    @property
    def stopped(self) -> bool:
        return self._stopped

    def start(self, argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
        """Start an evaluator, or raise `Stopped`; OSError when it cannot start."""
        # Under the lock: a stop() between the check and the start would miss this one.
        with self._lock:
            if self._stopped:
                raise Stopped()
            proc = start_group(argv, cwd, env)
            self._procs.add(proc)
        return proc

    def finished(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.discard(proc)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
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
    """Run the evaluator once over ``instances``; raise EvaluatorError on any problem
    (`Stopped` when ``running`` was stopped before the batch ended)."""
    tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
    started = time.monotonic()
    try:
        proc = running.start(argv, workdir, env)
    except OSError as exc:
        raise EvaluatorError(f"cannot start the evaluator {argv[0]!r}: {exc.strerror}") from None
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
        returncode = _wait(proc, threads[2], timeout)
    finally:
        running.finished(proc)
        kill_group(proc)  # stragglers it left behind in its group
        _close(proc, threads)
    wall = time.monotonic() - started
    if running.stopped and returncode != 0:
        raise Stopped()  # killed because another batch failed: that failure is the error
    if returncode is None:
        raise _error(f"timed out after {timeout:g} s (the whole process group was killed)", tail)
    if problem:
        raise _error(problem[0], tail)
    if returncode != 0:
        signal_note = f" (signal {-returncode})" if returncode < 0 else ""
        raise _error(f"exited with status {returncode}{signal_note}", tail)
    try:
        return BatchOutput(parse_output(lines, instances), wall)
    except OutputProblem as exc:
        raise _error(str(exc), tail) from None


def _wait(proc: subprocess.Popen[bytes], reader: threading.Thread, timeout: float) -> int | None:
    """The evaluator's exit status, or None when it ran past ``timeout``: then its whole
    process group is killed at once, so a hang costs the timeout and not more."""
    deadline = time.monotonic() + timeout
    reader.join(timeout)
    if not reader.is_alive():  # its stdout closed: it has ended or is about to
        with contextlib.suppress(subprocess.TimeoutExpired):
            return proc.wait(timeout=max(0.0, deadline - time.monotonic()) + EXIT_SLACK)
    kill_group(proc)
    reader.join(GRACE)
    proc.wait()  # SIGKILL: at once
    return None


def _close(proc: subprocess.Popen[bytes], threads: list[threading.Thread]) -> None:
    """End the pipe threads, waiting GRACE in all. A pipe still held by a process that
    left the group is left open: closing it would wait for its blocked reader."""
    deadline = time.monotonic() + GRACE
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    for stream, thread in ((proc.stderr, threads[1]), (proc.stdout, threads[2])):
        if stream is not None and not thread.is_alive():
            with contextlib.suppress(OSError):
                stream.close()


def _error(problem: str, tail: collections.deque[str]) -> EvaluatorError:
    # list(tail): one copy, as a straggler's stderr thread may still append to it.
    stderr = " | ".join(line.strip() for line in list(tail) if line.strip())
    if not stderr:
        return EvaluatorError(f"evaluator: {problem}")
    if len(stderr) > 400:
        stderr = "..." + stderr[-400:]
    return EvaluatorError(f"evaluator: {problem}; last stderr: {stderr}")


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
