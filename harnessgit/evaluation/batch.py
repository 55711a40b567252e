"""Running the user's evaluator on one batch of instances, and reading what it says.

The protocol (docs/evaluator.md): the evaluator runs in a directory holding the
evaluated commit's whole tree, receives the instance ids on standard input (and
in HARNESSGIT_INSTANCES_FILE), and prints one JSON object per instance:
``{"instance": id, "score": 0..1, "feedback"?, "trajectory"?, "failure_class"?,
"cluster"?, "cost"?, "objective_scores"?}``. Anything else is an error that names the line or the
instance (quoting the start of a line that is not a result), with the evaluator's
last lines of standard error.

A failure ends the evaluation's other batches too (`Running.stop`): one failure
costs one batch, not a second that starts while the first is being reported.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessgit.canonical import loads_strict
from harnessgit.errors import HarnessgitError
from harnessgit.processes.pipes import Child, Limits, communicate
from harnessgit.render import quoted_start

log = logging.getLogger("harnessgit")


Progress = Callable[[int, int], None]  # (instances done, instances to run)

TIMED_OUT = "timed out after {:g} s (the whole process group was killed)"


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
    objectives: dict[str, float] | None = None  # GEPA's objective_scores: name -> finite number


@dataclass(frozen=True)
class BatchOutput:
    results: list[InstanceResult]
    wall_time: float


class OutputProblem(Exception):
    """What is wrong with the evaluator's output (the caller adds the context)."""


def parse_output(lines: list[bytes], requested: list[str]) -> list[InstanceResult]:
    """The results in an evaluator's output lines (blank lines skipped), checked."""
    items = [(n, data) for n, raw in enumerate(lines, 1) if (data := parse_line(raw, n)) is not None]
    return check_results(items, requested)


def parse_line(raw: bytes, number: int) -> dict[str, Any] | None:
    """Output line ``number`` as a JSON object; None when it is blank."""
    if not raw.strip():
        return None
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
    return data


def check_results(items: list[tuple[int, dict[str, Any]]], requested: list[str]) -> list[InstanceResult]:
    """The results, one per requested instance in its order, from (line number, JSON
    object) pairs: every kind of evaluator goes through here (command, persistent, python)."""
    wanted = set(requested)
    results: dict[str, InstanceResult] = {}
    for number, data in items:
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
        objectives=_objectives(data.get("objective_scores"), where),
    )


def _objectives(found: Any, where: str) -> dict[str, float] | None:
    """``objective_scores``: the instance's score on each objective, any finite numbers
    (GEPA's ``EvaluationBatch.objective_scores``; the objectives' frontier types read them)."""
    if found is None:
        return None
    if not isinstance(found, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in found.values()
    ):
        raise OutputProblem(f"{where}: 'objective_scores' must be an object of finite numbers")
    return {str(key): float(value) for key, value in found.items()}


class Running:
    """The evaluator processes of one evaluation. Once stopped (a batch failed, or an
    interrupt), every one alive is killed and no other starts."""

    def __init__(self) -> None:
        self._children: set[Child] = set()
        self._lock = threading.Lock()
        self._stopped = False

    @property
    def stopped(self) -> bool:
        return self._stopped

    def start(self, argv: list[str], cwd: Path, env: dict[str, str]) -> Child:
        """Start an evaluator, or raise `Stopped`; OSError when it cannot start."""
        # Under the lock: a stop() between the check and the start would miss this one.
        with self._lock:
            if self._stopped:
                raise Stopped()
            child = Child(argv, cwd, env)
            self._children.add(child)
        return child

    def finished(self, child: Child) -> None:
        with self._lock:
            self._children.discard(child)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            children = list(self._children)
        for child in children:
            child.kill()


def run_batch(
    argv: list[str],
    workdir: Path,
    env: dict[str, str],
    instances: list[str],
    *,
    limits: Limits,
    running: Running,
    on_stderr: Callable[[str], None] | None = None,
) -> BatchOutput:
    """Run the evaluator once over ``instances``; raise EvaluatorError on any problem
    (`Stopped` when ``running`` was stopped before the batch ended). ``limits`` holds
    the timeout and the output caps of [evaluator]."""
    try:
        child = running.start(argv, workdir, env)
    except OSError as exc:
        raise EvaluatorError(f"cannot start the evaluator {argv[0]!r}: {exc.strerror}") from None
    payload = "".join(f"{instance}\n" for instance in instances).encode("utf-8")
    try:
        outcome = communicate(child, payload, limits, on_stderr=on_stderr, stopped=lambda: running.stopped)
    finally:
        running.finished(child)
    if outcome.escaped:
        log.debug(
            "evaluator: killed %d process(es) it left running outside its process group", outcome.escaped
        )
    tail = outcome.stderr_tail
    if running.stopped and outcome.returncode != 0:
        raise Stopped()  # killed because another batch failed: that failure is the error
    if outcome.end == "timeout":
        raise evaluator_error(TIMED_OUT.format(limits.timeout), tail)
    if outcome.end == "overflow":
        assert outcome.problem
        cap = " (max_output_bytes)" if outcome.problem.startswith("printed more") else ""
        raise evaluator_error(f"{outcome.problem}{cap}; it was killed", tail)
    if outcome.returncode != 0:
        returncode = outcome.returncode
        signal_note = f" (signal {-returncode})" if returncode is not None and returncode < 0 else ""
        raise evaluator_error(f"exited with status {returncode}{signal_note}", tail)
    try:
        return BatchOutput(parse_output(outcome.stdout.split(b"\n"), instances), outcome.wall_time)
    except OutputProblem as exc:
        raise evaluator_error(str(exc), tail) from None


def evaluator_error(problem: str, tail: list[str]) -> EvaluatorError:
    stderr = " | ".join(line.strip() for line in tail if line.strip())
    if not stderr:
        return EvaluatorError(f"evaluator: {problem}")
    if len(stderr) > 400:
        stderr = "..." + stderr[-400:]
    return EvaluatorError(f"evaluator: {problem}; last stderr: {stderr}")
