"""``[evaluator] persistent = true``: one evaluator process answering many batches."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.evaluation.batch import EvaluatorError
from harnessgit.evaluation.eval import EvalRequest, Execution, evaluate
from harnessgit.evaluation.evaluators import Evaluators
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.store import Store
from tests.conftest import CONFIG, ended, kill
from tests.evaluation.conftest import EVALUATOR, SPLITS

# The scoring of tests/evaluation/conftest.py's evaluator, as a persistent one. It
# notes each start (and the pid of a helper it leaves in its process group) in
# CALLS_FILE; "crash" and "hang" in the instance ids make it misbehave.
SERVER = """\
import json, os, subprocess, sys, time
from pathlib import Path
helper = subprocess.Popen(["sleep", "60"])
with open(os.environ["CALLS_FILE"], "a") as handle:
    handle.write(f"start {os.getpid()} {helper.pid}\\n")
for line in sys.stdin:
    request = json.loads(line)
    skill = (Path(request["harness_dir"]) / "SKILL.md").read_text()
    tag = request["batch"]
    for instance in request["instances"]:
        if instance.startswith("crash"):
            sys.stdout.flush()
            print("falling over", file=sys.stderr)
            sys.exit(3)
        if instance.startswith("hang"):
            time.sleep(60)
        if instance.startswith("stray"):
            tag = "another"
        word = instance.split("-")[0]
        print(json.dumps({"batch": tag, "instance": instance, "score": 1.0 if word in skill else 0.0,
                          "feedback": f"needs {word}"}))
    print(json.dumps({"batch": tag, "done": True}), flush=True)
helper.kill()
"""

PERSISTENT = CONFIG.replace('"eval.py"]', '"server.py"]\npersistent = true\ntimeout = 2\nbatch_size = 3')


def starts(tmp_path: Path) -> list[tuple[int, int]]:
    path = tmp_path / "calls.txt"
    lines = path.read_text().splitlines() if path.exists() else []
    return [(int(pid), int(helper)) for _start, pid, helper in (line.split() for line in lines)]


@pytest.fixture
def server_repo(make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CALLS_FILE", str(tmp_path / "calls.txt"))
    splits = {**SPLITS, "train": ["alpha-1", "crash-1", "beta-1", "gamma-1"], "test": ["hang-1", "stray-1"]}
    return make_repo(
        {"server.py": SERVER, "eval.py": EVALUATOR, "splits.json": json.dumps(splits)}, config=PERSISTENT
    )


def test_one_process_answers_every_batch_and_scores_as_the_command(
    server_repo: Path, tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    with Store.discover(server_repo) as store:
        config = load_config(server_repo)
        with Evaluators() as evaluators:
            execution = Execution(evaluators=evaluators)
            first = evaluate(store, config, "main", execution=execution)
            cand = propose(store, config, {"SKILL.md": "alpha and gamma\n"})
            second = evaluate(store, config, cand.candidate, execution=execution)
            assert first.batches == second.batches == 4 and evaluators.servers.started == 1
            [(pid, helper)] = starts(tmp_path)
            assert not ended(pid, within=0)
        assert ended(pid) and ended(helper)  # shut down with its process group
        book = ScoreBook.load(store)
        persistent = {k: r.score for k, r in book.rows(second.context.key).items()}
    # The per-batch command evaluator, on the same candidate text.
    command = make_repo({"eval.py": EVALUATOR, "splits.json": json.dumps(SPLITS)})
    with Store.discover(command) as store:
        config = load_config(command)
        cand = propose(store, config, {"SKILL.md": "alpha and gamma\n"})
        result = evaluate(store, config, cand.candidate)
        assert {k: r.score for k, r in ScoreBook.load(store).rows(result.context.key).items()} == persistent
    assert sorted(persistent.values()).count(1.0) == 8


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_crash_mid_batch_fails_the_evaluation_and_ends_the_group(server_repo: Path, tmp_path: Path) -> None:
    with Store.discover(server_repo) as store:
        config = load_config(server_repo)
        with Evaluators() as evaluators:
            with pytest.raises(EvaluatorError) as caught:
                evaluate(
                    store,
                    config,
                    "main",
                    EvalRequest(split="train"),
                    execution=Execution(evaluators=evaluators),
                )
            [(pid, helper)] = starts(tmp_path)
            assert ended(pid) and ended(helper)  # before the end of the command: at the failure
            assert not store.notes.records(layout.NOTES_EVALS)  # the only batch failed: nothing recorded
            # The next evaluation starts a new process; the crash is not retried.
            again = evaluate(
                store,
                config,
                "main",
                EvalRequest(split="train", instances=["alpha-1"]),
                execution=Execution(evaluators=evaluators),
            )
            assert again.evaluated == 1 and len(starts(tmp_path)) == 2
    message = str(caught.value)
    assert message.startswith("evaluator: exited (status 3) before the end of batch ")
    assert message.endswith("; last stderr: falling over") and "\n" not in message
    for pid, helper in starts(tmp_path):
        assert ended(pid) and ended(helper)


@pytest.mark.slow
def test_a_hanging_batch_times_out_and_a_stray_result_is_refused(server_repo: Path, tmp_path: Path) -> None:
    with Store.discover(server_repo) as store:
        config = load_config(server_repo)
        with Evaluators() as evaluators:
            execution = Execution(evaluators=evaluators)
            with pytest.raises(EvaluatorError, match=r"timed out after 2 s"):
                evaluate(
                    store,
                    config,
                    "main",
                    EvalRequest(split="test", instances=["hang-1"], allow_test=True),
                    execution=execution,
                )
            with pytest.raises(EvaluatorError, match=r"ended batch 'another' while answering batch"):
                evaluate(
                    store,
                    config,
                    "main",
                    EvalRequest(split="test", instances=["stray-1"], allow_test=True),
                    execution=execution,
                )
        assert not store.notes.records(layout.NOTES_EVALS)
    for pid, helper in starts(tmp_path):
        assert ended(pid) and ended(helper)
        kill(helper)


def test_the_cli_starts_one_process_per_command(server_repo: Path, tmp_path: Path) -> None:
    from tests.cli.runner import run

    result = run(server_repo, "eval", "main")
    assert result.exit_code == 0, result.output
    assert "12" in result.output  # 12 instances in 4 batches, by one process
    [(pid, helper)] = starts(tmp_path)
    assert ended(pid) and ended(helper)
