"""`harnessgit eval`: the cache, the batches, and what an interrupted or failed evaluation keeps."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import EvalRequest, Execution, evaluate
from harnessgit.evaluation.evaluators import Evaluators
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.records import EvalRecord
from harnessgit.store import Store
from tests.conftest import CONFIG, git, write

# A real evaluator: scores an instance 1 when the SKILL.md mentions the instance's
# keyword, and counts its own calls in a file outside the repository.
from tests.evaluation.conftest import SPLITS, calls


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_evaluate_records_scores_and_never_repeats_work(eval_repo: Path, tmp_path: Path) -> None:
    status = git(eval_repo, "status", "--porcelain")
    with Store.discover(eval_repo) as store:
        config = load_config(eval_repo)
        first = evaluate(store, config, "main", execution=Execution(jobs=2))
        assert first.evaluated == 12 and first.cached == 0 and first.batches == 4
        assert first.summary.n == 12 and first.summary.mean == 0.0
        assert calls(tmp_path) == 4
        again = evaluate(store, config, "main", execution=Execution(jobs=2))
        assert again.evaluated == 0 and again.cached == 12 and calls(tmp_path) == 4

        # A candidate that mentions alpha: only its harness is new.
        cand = propose(store, config, {"SKILL.md": "alpha\n"})
        scored = evaluate(store, config, cand.candidate)
        assert scored.evaluated == 12 and scored.summary.mean == pytest.approx(4 / 12)
        # A revert to main's text on another branch: the same harness tree, no evaluator call.
        before = calls(tmp_path)
        original = git(eval_repo, "show", "main:SKILL.md")
        revert = propose(store, config, {"SKILL.md": original}, parent=cand.candidate)
        cached = evaluate(store, config, revert.candidate)
        assert cached.evaluated == 0 and calls(tmp_path) == before

        fresh = evaluate(store, config, "main", EvalRequest(no_cache=True, instances=["beta-10"]))
        assert fresh.evaluated == 1
        records = [
            r
            for rs in store.notes.records(layout.NOTES_EVALS).values()
            for r in rs
            if isinstance(r, EvalRecord)
        ]
        assert any(r.fresh for r in records)
        record = records[0]
        assert record.split == "selection" and record.model == "sim-1"
        assert record.worker and record.wall_time > 0 and len(record.split_hash) == 64
    assert git(eval_repo, "status", "--porcelain") == status  # never ran in the working tree


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_failed_batch_keeps_earlier_batches(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    script = (
        "import json, sys\n"
        "ids = sys.stdin.read().split()\n"
        "if 'gamma-13' in ids: sys.exit('grader crashed on gamma-13')\n"
        "for i in ids: print(json.dumps({'instance': i, 'score': 1}))\n"
    )
    repo = make_repo(
        {"eval.py": script, "splits.json": json.dumps(SPLITS)}, config=CONFIG + "batch_size = 4\n"
    )
    with Store.discover(repo) as store:
        config = load_config(repo)
        with pytest.raises(HarnessgitError, match="grader crashed on gamma-13"):
            evaluate(store, config, "main", execution=Execution(jobs=1))
        book = ScoreBook.load(store)
        (key,) = book.cache_keys()
        assert len(book.rows(key)) == 8  # the two batches before the crash
    write(repo, "eval.py", script.replace("gamma-13", "never"))
    git(repo, "commit", "-qam", "fix the grader")  # a new evaluator: a new fingerprint
    with Store.discover(repo) as store:
        assert evaluate(store, load_config(repo), "main").evaluated == 12


def test_unknown_split_and_instance(eval_repo: Path, tmp_path: Path) -> None:
    with Store.discover(eval_repo) as store:
        config = load_config(eval_repo)
        with pytest.raises(HarnessgitError, match="unknown split 'validation'"):
            evaluate(store, config, "main", EvalRequest(split="validation"))
        with pytest.raises(HarnessgitError, match="not in split"):
            evaluate(store, config, "main", EvalRequest(instances=["alpha-0"]))  # a train instance
    assert calls(tmp_path) == 0


INTERRUPTIBLE = """
import sys
from pathlib import Path
from harnessgit.config import load_config
from harnessgit.evaluation.eval import Execution, evaluate
from harnessgit.store import Store
printed = Execution(jobs=1, progress=lambda done, total: print(done, flush=True))
with Store.discover(Path(sys.argv[1])) as store:
    evaluate(store, load_config(store.root), "main", execution=printed)
"""


@pytest.mark.slow
def test_interrupt_keeps_finished_batches_and_resumes(make_repo: Callable[..., Path]) -> None:
    script = (
        "import json, sys, time\n"
        "ids = sys.stdin.read().split()\n"
        "time.sleep(0.3)\n"
        "for i in ids: print(json.dumps({'instance': i, 'score': 0.5}))\n"
    )
    repo = make_repo(
        {"eval.py": script, "splits.json": json.dumps(SPLITS)}, config=CONFIG + "batch_size = 2\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTIBLE, str(repo)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "0"
    assert proc.stdout.readline().strip() == "2"  # one batch recorded
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode != 0
    with Store.discover(repo) as store:
        book = ScoreBook.load(store)
        done = sum(len(book.rows(key)) for key in book.cache_keys())
        assert 2 <= done < 12
        resumed = evaluate(store, load_config(repo), "main")
    assert resumed.cached == done and resumed.evaluated == 12 - done


# An evaluator that says in a file outside the repository when each process starts,
# then fails as the test asks: the failed evaluation must not start another.
STARTS_THEN = """\
import os, sys, time
ids = sys.stdin.read().split()
with open(os.environ["CALLS_FILE"], "a") as handle:
    handle.write(" ".join(ids) + "\\n")
"""


@pytest.mark.parametrize(
    ("failure", "config", "message"),
    [
        ("sys.exit('the grader crashed')", "", "the grader crashed"),
        ("time.sleep(60)", "timeout = 2\n", "timed out after 2 s"),
    ],
    ids=["crash", "hang"],
)
@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_failed_batch_starts_no_other(
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    failure: str,
    config: str,
    message: str,
) -> None:
    monkeypatch.setenv("CALLS_FILE", str(tmp_path / "calls.txt"))
    repo = make_repo(
        {"eval.py": STARTS_THEN + failure + "\n", "splits.json": json.dumps(SPLITS)},
        config=CONFIG + "batch_size = 3\n" + config,
    )
    with Store.discover(repo) as store, pytest.raises(HarnessgitError, match=message):
        evaluate(store, load_config(repo), "main", execution=Execution(jobs=1))  # 4 batches
    assert calls(tmp_path) == 1  # before issue 12 a second batch started (and timed out too)


def test_a_failed_batch_kills_the_batch_running_beside_it(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CALLS_FILE", str(tmp_path / "calls.txt"))
    # alpha-10 crashes once beta-10's evaluator is running; beta-10's would finish 30 s
    # later and say so in CALLS_FILE: it must be killed, not awaited.
    script = STARTS_THEN + (
        "if ids == ['alpha-10']:\n"
        "    deadline = time.monotonic() + 20\n"
        "    while 'beta-10' not in open(os.environ['CALLS_FILE']).read().split():\n"
        "        assert time.monotonic() < deadline, 'beta-10 never started'\n"
        "        time.sleep(0.05)\n"
        "    sys.exit('the grader crashed on alpha-10')\n"
        "time.sleep(30)\n"
        "open(os.environ['CALLS_FILE'], 'a').write('finished\\n')\n"
        'print(\'{"instance": "beta-10", "score": 1}\')\n'
    )
    repo = make_repo(
        {"eval.py": script, "splits.json": json.dumps(SPLITS)},
        config=CONFIG + "batch_size = 1\ntimeout = 60\n",
    )
    with Store.discover(repo) as store:
        # The crash is the error, not the "killed by signal 9" of the batch it stopped.
        with pytest.raises(HarnessgitError, match="the grader crashed on alpha-10"):
            evaluate(
                store,
                load_config(repo),
                "main",
                EvalRequest(instances=["alpha-10", "beta-10"]),
                execution=Execution(jobs=2),
            )
        assert ScoreBook.load(store).cache_keys() == []
    assert sorted((tmp_path / "calls.txt").read_text().split()) == ["alpha-10", "beta-10"]  # no "finished"


def test_an_eval_record_names_the_machine_as_the_sync_script_does(
    eval_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Gate records named HARNESSGIT_MACHINE and eval records the host name: one machine
    # had two names in one record set.
    monkeypatch.setenv("HARNESSGIT_MACHINE", "ci-runner-7")
    with Store.discover(eval_repo) as store:
        evaluate(store, load_config(eval_repo), "main", EvalRequest(instances=["alpha-10"]))
        (record,) = [r for rs in store.notes.records(layout.NOTES_EVALS).values() for r in rs]
    assert isinstance(record, EvalRecord) and record.worker == f"ci-runner-7:{os.getpid()}"


def test_with_every_score_on_record_nothing_is_set_up(
    eval_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gate after evolve finds every score cached: no batch runner, no evaluator
    processes, no Ray connection (issue 26), and the answer is the cache's."""
    with Store.discover(eval_repo) as store:
        config = load_config(eval_repo)
        request = EvalRequest(instances=["alpha-10"])
        first = evaluate(store, config, "main", request)
        assert first.evaluated == 1 and calls(tmp_path) == 1

        def no_runner(*_args: object, **_kwargs: object) -> None:
            raise AssertionError("a batch runner was made with nothing to run")

        monkeypatch.setattr("harnessgit.evaluation.eval.Batches", no_runner)
        told: list[tuple[int, int]] = []
        with Evaluators() as evaluators:
            execution = Execution(
                evaluators=evaluators, progress=lambda done, total: told.append((done, total))
            )
            again = evaluate(store, config, "main", request, execution=execution)
            assert evaluators._servers.made is None and evaluators._ray.made is None
    assert (again.evaluated, again.cached, again.batches, again.evaluator_time) == (0, 1, 0, 0.0)
    assert again.summary == first.summary and told == [(0, 0)] and calls(tmp_path) == 1


def test_evaluators_make_their_pool_and_connection_once_on_first_use() -> None:
    with Evaluators() as evaluators:
        assert evaluators._servers.made is None and evaluators._ray.made is None
        assert evaluators.servers is evaluators.servers and evaluators.ray is evaluators.ray
        assert evaluators.servers.started == 0
