"""``[evaluator] persistent = true``: the command started once, answering batch after batch.

The protocol (docs/evaluator.md, "Persistent evaluators"): harnessgit writes one JSON
request line per batch,

    {"batch": "<id>", "harness_dir": "<dir>", "split": "...", "commit": "<sha>",
     "repeat": 0, "model": "...", "instances": ["id", ...]}

and the evaluator prints the per-batch protocol's result lines, each tagged with the
batch's id (``"batch": "<id>"``), then ``{"batch": "<id>", "done": true}``. A result
of another batch, or an end marker of another batch, is an error: results cannot be
confused across batches. End of standard input means: exit.

A process runs the evaluator of one fingerprint: it is started in a checkout of the
first tree evaluated with that fingerprint, and a commit whose evaluator differs gets
a process of its own, so no score is attributed to code the commit does not hold. A
batch that fails in any way (a crash, a timeout, output that breaks the protocol)
fails its evaluation, as a per-batch command's does, and its process is killed with
its process group: its state is unknown, and a crashing evaluator is not run twice
(issue 12). The next evaluation starts a new one.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harnessgit.config import Config
from harnessgit.evaluation.batch import (
    TIMED_OUT,
    BatchOutput,
    EvaluatorError,
    OutputProblem,
    Running,
    Stopped,
    check_results,
    evaluator_error,
    parse_line,
)
from harnessgit.evaluation.context import EvalContext
from harnessgit.processes.environment import child_environment
from harnessgit.processes.pipes import Limits
from harnessgit.processes.scratch import ScratchDir
from harnessgit.processes.server import Exchange, Server
from harnessgit.store import Store, Worktree


class _Process:
    def __init__(self, server: Server, scratch: ScratchDir) -> None:
        self.server, self.scratch = server, scratch


class Servers:
    """The persistent evaluator processes of one harnessgit command, by fingerprint."""

    def __init__(self) -> None:
        self._idle: dict[str, list[_Process]] = {}
        self._all: list[_Process] = []
        self._lock = threading.Lock()
        self.started = 0  # processes started, for the curious and the tests

    def run(
        self,
        store: Store,
        config: Config,
        context: EvalContext,
        split: str,
        batch: list[tuple[str, int]],
        harness_dir: Path,
        *,
        running: Running,
        on_stderr: Callable[[str], None] | None,
    ) -> BatchOutput:
        """One batch, answered by an idle process of ``context``'s fingerprint or a new one."""
        if running.stopped:
            raise Stopped()
        process = self._acquire(store.worktree, config, context)
        instances = [instance for instance, _repeat in batch]
        tag = uuid.uuid4().hex[:12]
        request = {
            "batch": tag,
            "harness_dir": str(harness_dir),
            "split": split,
            "commit": context.commit,
            "repeat": batch[0][1],
            "model": context.key.model,
            "instances": instances,
        }
        line = (json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8")
        ended: list[dict[str, Any]] = []
        try:
            exchange = process.server.exchange(
                line, lambda raw: _ends(raw, tag, ended), on_stderr=on_stderr, stopped=lambda: running.stopped
            )
            output = _answer(exchange, tag, instances, config.evaluator.timeout)
        except BaseException:
            self._discard(process)  # its state is unknown: it is not asked again
            raise
        with self._lock:
            self._idle.setdefault(_pool(context), []).append(process)
        return output

    def _acquire(self, worktree: Worktree, config: Config, context: EvalContext) -> _Process:
        with self._lock:
            idle = self._idle.get(_pool(context))
            if idle:
                return idle.pop()
        section = config.evaluator
        assert section.command
        scratch = ScratchDir("server")
        try:
            workdir = scratch.path / "tree"
            workdir.mkdir()
            worktree.checkout_tree(context.tree, workdir)
            env = child_environment(
                section.env,
                {"HARNESSGIT_PERSISTENT": "1", "HARNESSGIT_MODEL": context.key.model},
            )
            limits = Limits(
                timeout=section.timeout,
                max_stdout=section.max_output_bytes,
                max_line=section.max_line_bytes,
                max_stderr=section.max_stderr_bytes,
            )
            server = Server(list(section.command), workdir, env, limits)
        except OSError as exc:
            scratch.cleanup()
            why = exc.strerror
            raise EvaluatorError(f"cannot start the evaluator {section.command[0]!r}: {why}") from None
        except BaseException:
            scratch.cleanup()
            raise
        process = _Process(server, scratch)
        with self._lock:
            self._all.append(process)
            self.started += 1
        return process

    def _discard(self, process: _Process) -> None:
        process.server.kill()
        process.scratch.cleanup()
        with self._lock:
            if process in self._all:
                self._all.remove(process)

    def close(self) -> None:
        """Every process told to exit (stdin closed), then killed with its group if it
        has not within `server.SHUTDOWN_GRACE`; their directories removed."""
        with self._lock:
            processes, self._all, self._idle = self._all, [], {}
        for process in processes:
            try:
                process.server.close()
            finally:
                process.scratch.cleanup()


def _ends(raw: bytes, tag: str, ended: list[dict[str, Any]]) -> bool:
    """Whether ``raw`` is an end marker (of any batch: `_answer` checks whose)."""
    if b'"done"' not in raw:
        return False
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    if isinstance(data, dict) and data.get("done") is True and set(data) == {"batch", "done"}:
        ended.append(data)
        if data["batch"] != tag:
            raise EvaluatorError(f"evaluator: ended batch {data['batch']!r} while answering batch {tag!r}")
        return True
    return False


def _answer(exchange: Exchange, tag: str, instances: list[str], timeout: float) -> BatchOutput:
    tail = exchange.stderr_tail
    if exchange.end == "stopped":
        raise Stopped()
    if exchange.end == "timeout":
        raise evaluator_error(TIMED_OUT.format(timeout), tail)
    if exchange.end == "overflow":
        raise evaluator_error(f"{exchange.problem}; it was killed", tail)
    if exchange.end == "exited":
        code = exchange.returncode
        status = f"status {code}" if code is not None and code >= 0 else f"signal {-(code or 0)}"
        raise evaluator_error(f"exited ({status}) before the end of batch {tag}", tail)
    try:
        items = []
        for number, raw in enumerate(exchange.lines, 1):
            data = parse_line(raw, number)
            if data is None:
                continue
            if data.pop("batch", None) != tag:
                raise OutputProblem(f"output line {number} is not tagged with this batch ({tag!r})")
            items.append((number, data))
        return BatchOutput(check_results(items, instances), exchange.wall_time)
    except OutputProblem as exc:
        raise evaluator_error(str(exc), tail) from None


def _pool(context: EvalContext) -> str:
    """Which idle processes may serve ``context``: one evaluator, and one model, since a
    process hears its model in its environment (HARNESSGIT_MODEL) once, at start."""
    return f"{context.key.fingerprint}\0{context.key.model}"
