"""``executor = "ray"``: each batch of a command evaluator is a Ray task.

The driver (this harnessgit) checks the evaluated tree out once, packs it into a tar
archive and puts it in Ray's object store; each task receives the archive and the
batch's `CommandJob` as data, unpacks the tree into a scratch directory on whichever
node runs it, runs the evaluator there exactly as the local executor does
(`command.run_command`) and returns its results. No filesystem is shared, and a node
needs only Ray and Python: harnessgit's own code travels with the job (Ray's
``py_modules``), and what runs on the node imports nothing else but the standard
library. Only the driver writes to git (`Batches.finished`), so a batch is recorded
once, by one writer, whatever happened on the cluster:

- a worker or node that dies is Ray's to retry (`MAX_RETRIES`); the retried task has
  one result, recorded once. An evaluator that fails is not retried: its failure is
  the task's result, and ends the evaluation as it does locally (issue 12);
- Ctrl-C (or a record that cannot be written) cancels the tasks in flight, which kills
  their evaluators' process groups on the nodes; only batches whose results reached
  the driver are recorded;
- the cache still decides what runs: only the pending batches are submitted.

The in-process (``python``, ``adapter``) and persistent evaluators stay local: they
live in harnessgit's process or beside it, between batches.
"""

from __future__ import annotations

import importlib
import io
import logging
import os
import socket
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import harnessgit
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.batch import BatchOutput, EvaluatorError, Progress, Running, Stopped
from harnessgit.evaluation.command import CommandJob, command_job, run_command
from harnessgit.processes.scratch import ScratchDir, sweep

# Names for the batch runner's protocol only: what a Ray node imports must be the
# standard library and harnessgit (on Python 3.10 the config reader needs tomli).
if TYPE_CHECKING:
    from harnessgit.config import Config
    from harnessgit.evaluation.context import EvalContext
    from harnessgit.evaluation.scores import ScoreBook

log = logging.getLogger("harnessgit")

# Tries after the first when the worker process or its node dies (Ray's default for
# tasks); an evaluator's own failure is a result, never retried.
MAX_RETRIES = 3
# Seconds between looks at the tasks in flight: how soon Ctrl-C is seen.
POLL = 0.5
# Seconds the driver waits, after cancelling, for the cancelled tasks to end (their
# evaluators killed) before it goes on ending.
CANCEL_WAIT = 10.0
# Seconds to wait for RAY_ADDRESS's host to answer before saying it does not.
CONNECT_TIMEOUT = 10.0
# Seconds between two sweeps on one worker (`_Sweeper`).
SWEEP_EVERY = 30.0

INSTALL_HINT = "executor = \"ray\" needs Ray: pip install 'harnessgit[ray]'"


@dataclass(frozen=True)
class RemoteOutcome:
    """What a task returns: the batch's results, or the evaluator's failure in the
    words the local executor would use, and its standard error."""

    output: BatchOutput | None
    error: str | None
    stderr: list[str]
    worker: str  # machine:pid of the Ray worker that ran it


def pack(directory: Path) -> bytes:
    """``directory`` as a gzip'd tar archive (symbolic links kept as links)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        for entry in sorted(directory.iterdir()):
            archive.add(entry, arcname=entry.name)
    return buffer.getvalue()


def unpack(data: bytes, directory: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        # The archive is the driver's checkout of a git tree: the "tar" filter still
        # refuses a member outside ``directory`` (Python >= 3.10.12 has filters).
        if hasattr(tarfile, "tar_filter"):
            archive.extractall(directory, filter="tar")
        else:  # pragma: no cover - older Python
            archive.extractall(directory)


def this_worker() -> str:
    """`records.this_worker` without importing records (pydantic): a node needs nothing
    of harnessgit's dependencies, only Ray and the standard library."""
    return f"{os.environ.get('HARNESSGIT_MACHINE') or socket.gethostname()}:{os.getpid()}"


def evaluate_batch(job: CommandJob, archive: bytes) -> RemoteOutcome:
    """The Ray task (it runs on a worker): ``job`` in a fresh scratch checkout."""
    _sweep()
    lines: list[str] = []
    with ScratchDir("eval") as scratch:
        tree_dir = scratch / "harness"
        tree_dir.mkdir()
        unpack(archive, tree_dir)
        try:
            output = run_command(job, tree_dir, scratch, running=Running(), on_stderr=lines.append)
        except EvaluatorError as exc:
            return RemoteOutcome(None, str(exc), lines, this_worker())
    return RemoteOutcome(output, None, lines, this_worker())


class _Sweeper:
    """What killed workers left on this node (scratch directories, evaluators still
    running: a worker killed mid-batch leaves its evaluator, whose deadline it was
    keeping) is removed as `eval` does locally: at a worker's first batch, and again
    when the last sweep is `SWEEP_EVERY` old. One per worker process, which Ray reuses
    for many tasks: reading every process's environment takes ~0.1 s, too much for
    every batch."""

    def __init__(self) -> None:
        self.last: float | None = None

    def __call__(self) -> None:
        now = time.monotonic()
        if self.last is not None and now - self.last < SWEEP_EVERY:
            return
        self.last = now
        done = sweep()
        if done.removed or done.killed:
            log.info(
                "left by killed Ray workers: temporary directories removed: %d, processes killed: %d",
                len(done.removed),
                len(done.killed),
            )


_sweep = _Sweeper()  # per worker process (see `_Sweeper`); the driver never calls it


class RayConnection:
    """One command's connection to Ray, made on first use: ``RAY_ADDRESS`` when set (or
    a cluster `ray start` made on this machine), else a Ray started for this command
    and stopped by `close`. A Ray the caller had already initialised is used as it is."""

    def __init__(self) -> None:
        self._ray: Any = None
        self._task: Any = None
        self._mine = False

    def ray(self) -> Any:
        if self._ray is None:
            try:
                ray = importlib.import_module("ray")
            except ImportError:
                raise HarnessgitError(INSTALL_HINT) from None
            if not ray.is_initialized():
                self._init(ray)
            self._ray = ray
        return self._ray

    def _init(self, ray: Any) -> None:
        address = os.environ.get("RAY_ADDRESS")
        if address:
            _reachable(address)
        try:
            ray.init(
                address=address,
                # harnessgit's code travels with the job: the nodes need no copy of it,
                # and run the driver's version.
                runtime_env={"py_modules": [str(Path(harnessgit.__file__).parent)]},
                logging_level=logging.ERROR,  # harnessgit's output stays its own
                log_to_driver=False,
                include_dashboard=False if not address else None,
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = f"at {address}" if address else "locally"
            raise HarnessgitError(f"cannot connect to Ray {where}: {exc}") from None
        self._mine = True

    def cpus(self) -> int:
        """The cluster's CPUs: how many batches run at once by default."""
        return max(1, int(self.ray().cluster_resources().get("CPU", 1)))

    def task(self) -> Any:
        if self._task is None:
            self._task = self.ray().remote(max_retries=MAX_RETRIES, retry_exceptions=False)(evaluate_batch)
        return self._task

    def close(self) -> None:
        if self._mine and self._ray is not None:
            self._ray.shutdown()
        self._ray, self._task, self._mine = None, None, False


def _reachable(address: str) -> None:
    """Refuse a ``host:port`` nothing answers on within `CONNECT_TIMEOUT`: Ray itself
    waits minutes for an unreachable address (measured: more than 150 s)."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return  # ray://, "auto", "local": Ray's own rules (Ray Client times out by itself)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise HarnessgitError(
            f"cannot connect to Ray at {address} (RAY_ADDRESS): {exc.strerror or exc}"
        ) from None


class RayRunner(Protocol):
    """What `run_on_ray` needs of the batch runner (`evaluation.batches.Batches`):
    the evaluation's settings, the checkout to ship, and where a finished batch goes."""

    config: Config
    split: str
    context: EvalContext
    on_stderr: Callable[[str], None] | None

    @property
    def connection(self) -> RayConnection: ...

    def checkout(self) -> Path: ...

    def finished(
        self, batch: list[tuple[str, int]], output: BatchOutput, book: ScoreBook, *, worker: str | None = None
    ) -> None: ...


def run_on_ray(
    runner: RayRunner,
    batches: list[list[tuple[str, int]]],
    jobs: int,
    book: ScoreBook,
    progress: Progress | None,
    total: int,
) -> float:
    """``runner``'s batches as Ray tasks, at most ``jobs`` in flight, each recorded by
    ``runner`` as its result reaches this process; the evaluator time summed."""
    connection = runner.connection
    ray = connection.ray()
    task = connection.task()
    archive = ray.put(pack(runner.checkout()))  # once: every task reads this one object
    section = runner.config.evaluator
    queue = list(reversed(batches))
    in_flight: dict[Any, list[tuple[str, int]]] = {}
    failures: list[BaseException] = []
    done, evaluator_time = 0, 0.0
    try:
        while in_flight or (queue and not failures):
            while queue and not failures and len(in_flight) < jobs:
                batch = queue.pop()
                job = command_job(section, runner.split, runner.context, batch)
                in_flight[task.remote(job, archive)] = batch
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=POLL)
            for ref in ready:
                batch = in_flight.pop(ref)
                outcome = _outcome(ray, ref, runner)
                if isinstance(outcome, BaseException):
                    if not failures:  # no further batch starts; those running are stopped
                        _cancel(ray, in_flight)
                    failures.append(outcome)
                    continue
                assert outcome.output is not None
                runner.finished(batch, outcome.output, book, worker=outcome.worker)
                evaluator_time += outcome.output.wall_time
                done += len(batch)
                if progress:
                    progress(done, total)
    except BaseException:  # Ctrl-C, or a record that cannot be written
        _cancel(ray, in_flight)
        _settle(ray, in_flight)
        raise
    if failures:
        raise next((f for f in failures if not isinstance(f, Stopped)), failures[0])
    return evaluator_time


def _outcome(ray: Any, ref: Any, runner: RayRunner) -> RemoteOutcome | BaseException:
    """A finished task's outcome, its stderr shown; its failure as an exception (a
    cancelled task's as `Stopped`)."""
    try:
        outcome: RemoteOutcome = ray.get(ref)
    except ray.exceptions.TaskCancelledError:
        return Stopped()
    except ray.exceptions.RayError as exc:  # retries used up: the worker or its node kept dying
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return HarnessgitError(f"evaluator: a batch was lost on Ray after {MAX_RETRIES + 1} tries: {why}")
    if runner.on_stderr:
        for line in outcome.stderr:
            runner.on_stderr(line)
    if outcome.error is not None:
        return EvaluatorError(outcome.error)
    return outcome


def _cancel(ray: Any, in_flight: dict[Any, list[tuple[str, int]]]) -> None:
    """Cancel the tasks in flight: a running one gets KeyboardInterrupt on its worker,
    which kills its evaluator's process group (`pipes.communicate`)."""
    for ref in in_flight:
        try:
            ray.cancel(ref)
        except Exception as exc:  # already finished, or the cluster is gone
            log.debug("cannot cancel a Ray task: %s", exc)


def _settle(ray: Any, in_flight: dict[Any, list[tuple[str, int]]]) -> None:
    """Wait up to `CANCEL_WAIT` for cancelled tasks to end, so that their evaluators
    are killed before this process (and the Ray it may have started) goes."""
    deadline = time.monotonic() + CANCEL_WAIT
    pending = list(in_flight)
    while pending and time.monotonic() < deadline:
        try:
            _ready, pending = ray.wait(pending, num_returns=len(pending), timeout=POLL)
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting
            return
