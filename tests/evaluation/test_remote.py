"""``executor = "ray"`` against a real Ray cluster started here: a head node and a
worker node, one CPU each, each with a raylet, an object store and worker processes
of its own (`ray.cluster_utils.Cluster`; not `ray start`, whose `ray stop` is the only
documented way down and stops every Ray of the machine's user).

The cluster is shared by the module (starting it takes 10-15 s on two cores); each
test connects as a new Ray job through ``RAY_ADDRESS``, as a user's harnessgit would.
"""

from __future__ import annotations

import _thread
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harnessgit.config import load_config
from harnessgit.evaluation.batch import EvaluatorError
from harnessgit.evaluation.eval import Evaluation, Execution, evaluate
from harnessgit.evaluation.evaluators import Evaluators
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.records import EvalRecord
from harnessgit.store import Store
from tests.conftest import CONFIG, ended, git, kill

pytestmark = pytest.mark.slow

# Scores an instance by its name's length, and leaves a mark per instance in MARKS (a
# directory of the test's own): where it ran, and under which Ray worker. "slow-*"
# waits to be interrupted, "bad" fails, "victim" waits to be killed once.
EVALUATOR = """\
import json, os, sys, time
from pathlib import Path
marks = Path(os.environ["MARKS"])
for instance in [line.strip() for line in sys.stdin if line.strip()]:
    mark = {"cwd": os.getcwd(), "worker": os.getppid(), "pid": os.getpid()}
    (marks / f"{instance}.{os.getpid()}").write_text(json.dumps(mark))
    if instance.startswith("slow"):
        time.sleep(60)
    if instance == "victim" and not (marks / "killed").exists():
        (marks / "victim.worker").write_text(str(os.getppid()))
        time.sleep(60)
    if instance == "bad":
        sys.exit("the grader crashed")
    skill = Path("SKILL.md").read_text()
    print(json.dumps({"instance": instance, "score": (len(instance) + len(skill)) % 5 / 4}))
"""

SELECTION = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g", "hh"]


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    cluster_utils = pytest.importorskip("ray.cluster_utils")
    # Short: Ray's socket paths live under it (108 bytes at most for a Unix socket).
    temp = tempfile.mkdtemp(prefix="hg-ray-", dir="/tmp")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_TMPDIR", temp)  # the cluster's files, and its address file, are its own
        patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
        cluster = cluster_utils.Cluster(
            initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
        )
        try:
            cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
            yield str(cluster.address)
        finally:
            cluster.shutdown()
            shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ray_address: str) -> Path:
    monkeypatch.setenv("RAY_ADDRESS", ray_address)
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("MARKS", str(marks))
    return marks


def ray_repo(make_repo: Callable[..., Path], selection: list[str], batch_size: int = 2) -> Path:
    splits = {"train": ["t"], "selection": selection, "test": []}
    config = CONFIG.replace('env = ["CALLS_FILE"]', 'env = ["MARKS"]') + f"batch_size = {batch_size}\n"
    return make_repo({"eval.py": EVALUATOR, "splits.json": json.dumps(splits)}, config=config)


def run(repo: Path, executor: str) -> Evaluation:
    with Store.discover(repo) as store:
        return evaluate(store, load_config(repo), "main", execution=Execution(executor=executor))


def records(repo: Path) -> list[EvalRecord]:
    with Store.discover(repo) as store:
        book = ScoreBook.load(store)
        return [record for key in book.cache_keys() for record in book.records_for(key)]


def scores(repo: Path) -> dict[str, float]:
    return {
        instance: score
        for record in records(repo)
        for instance, score in zip(record.instances, record.scores, strict=True)
    }


def test_scores_equal_the_local_executors_and_the_evaluator_runs_in_a_scratch_copy(
    make_repo: Callable[..., Path], marks: Path
) -> None:
    local, remote = ray_repo(make_repo, SELECTION), ray_repo(make_repo, SELECTION)
    run(local, "local")
    for mark in marks.iterdir():
        mark.unlink()
    result = run(remote, "ray")
    assert (result.evaluated, result.batches) == (8, 4)  # 2 CPUs: 4 batches of 2
    assert scores(remote) == scores(local) and len(scores(remote)) == 8
    written = records(remote)
    assert sorted(i for r in written for i in r.instances) == sorted(SELECTION)  # each once
    ran = [json.loads(mark.read_text()) for mark in marks.iterdir()]
    assert len(ran) == 8
    for where in ran:
        # No shared filesystem assumed: the tree came as data, unpacked in the worker's
        # scratch directory, removed after its batch; the repository was never its home.
        cwd = Path(where["cwd"])
        assert cwd.name == "harness" and cwd.parent.name.startswith("harnessgit-eval-")
        assert not cwd.is_relative_to(remote) and not cwd.exists()
        assert where["worker"] != os.getpid()
    # Each record names the Ray worker that ran its batch, not this process.
    assert {r.worker.rsplit(":", 1)[1] for r in written} == {str(w["worker"]) for w in ran}
    again = run(remote, "ray")  # the cache still decides what runs
    assert (again.cached, again.evaluated) == (8, 0)


def test_a_killed_worker_is_retried_and_its_batch_recorded_once(
    make_repo: Callable[..., Path], marks: Path
) -> None:
    repo = ray_repo(make_repo, ["a", "bb", "victim", "ccc"])
    victims: list[int] = []

    def kill_the_victims_worker() -> None:
        deadline = time.monotonic() + 60
        while not (marks / "victim.worker").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        worker = int((marks / "victim.worker").read_text())
        (marks / "killed").write_text("")  # the retry does not wait to be killed
        victims.append(worker)
        os.kill(worker, signal.SIGKILL)

    killer = threading.Thread(target=kill_the_victims_worker)
    killer.start()
    try:
        result = run(repo, "ray")
    finally:
        killer.join()
        for mark in marks.glob("victim.*"):  # the first attempt's evaluator, orphaned
            if mark.name != "victim.worker":
                kill(json.loads(mark.read_text())["pid"])
    assert victims and ended(victims[0])
    assert len([mark for mark in marks.glob("victim.*") if mark.name != "victim.worker"]) == 2  # it ran twice
    assert result.evaluated == 4
    written = records(repo)
    assert sorted(i for r in written for i in r.instances) == ["a", "bb", "ccc", "victim"]  # once each
    assert len(written) == result.batches


def test_a_failing_evaluator_is_not_retried_and_fails_as_locally(
    make_repo: Callable[..., Path], marks: Path
) -> None:
    repo = ray_repo(make_repo, ["a", "bb", "bad", "c", "d", "e"])  # a batch after the failure
    failed = pytest.raises(EvaluatorError, match="exited with status 1; last stderr: the grader crashed")
    with failed, Store.discover(repo) as store:
        evaluate(store, load_config(repo), "main", execution=Execution(executor="ray", jobs=1))
    assert len(list(marks.glob("bad.*"))) == 1  # run once: a failure is a result, not a lost worker
    assert sorted(i for r in records(repo) for i in r.instances) == ["a", "bb"]  # the batch before it


def test_ctrl_c_records_only_the_finished_batches_and_stops_the_others(
    make_repo: Callable[..., Path], marks: Path
) -> None:
    repo = ray_repo(make_repo, ["a", "bb", "slow-1", "slow-2"], batch_size=1)
    proc = subprocess.Popen(
        [sys.executable, "-m", "harnessgit", "-C", str(repo), "eval", "main", "--executor", "ray", "-j", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    try:
        deadline = time.monotonic() + 90
        while len(list(marks.glob("slow-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(list(marks.glob("slow-*"))) == 2, proc.stderr.read() if proc.poll() is not None else ""
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        assert time.monotonic() - started < 30
    finally:
        kill(proc.pid)
    assert proc.returncode == 130, proc.stderr
    assert sorted(i for r in records(repo) for i in r.instances) == ["a", "bb"]
    for mark in marks.glob("slow-*"):  # cancelled on the cluster: their evaluators killed
        pid = json.loads(mark.read_text())["pid"]
        try:
            assert ended(pid, within=15)
        finally:
            kill(pid)
    assert git(repo, "status", "--porcelain") == ""


def test_an_interrupt_cancels_the_batches_in_flight_while_the_command_goes_on(
    make_repo: Callable[..., Path], marks: Path
) -> None:
    """A driver that lives on after the interrupt (evolve between evaluations, a library
    user): Ray would not end the tasks of a job that is still connected, so only the
    cancellation can have killed the evaluators."""
    repo = ray_repo(make_repo, ["a", "bb", "slow-1", "slow-2"], batch_size=1)

    def interrupt_when_the_slow_ones_run() -> None:
        deadline = time.monotonic() + 60
        while len(list(marks.glob("slow-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        _thread.interrupt_main()

    interrupter = threading.Thread(target=interrupt_when_the_slow_ones_run)
    with Evaluators() as evaluators, Store.discover(repo) as store:
        interrupter.start()
        with pytest.raises(KeyboardInterrupt):
            evaluate(
                store,
                load_config(repo),
                "main",
                execution=Execution(executor="ray", jobs=2, evaluators=evaluators),
            )
        interrupter.join()
        assert evaluators.ray.ray().is_initialized()  # still connected: the job lives on
        pids = [json.loads(mark.read_text())["pid"] for mark in marks.glob("slow-*")]
        try:
            assert len(pids) == 2 and all(ended(pid, within=15) for pid in pids)
        finally:
            for pid in pids:
                kill(pid)
    assert sorted(i for r in records(repo) for i in r.instances) == ["a", "bb"]
