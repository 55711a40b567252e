"""``[evaluator] python``: the evaluator function called in harnessgit's own process."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.evaluation.eval import EvalRequest, evaluate
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.store import Store
from tests.conftest import CONFIG, git, write
from tests.evaluation.conftest import EVALUATOR, SPLITS

# The same scoring as the command evaluator of tests/evaluation/conftest.py, as a function.
GRADER = """\
import os

def evaluate(request):
    calls = os.environ.get("CALLS_FILE")
    if calls:
        with open(calls, "a") as handle:
            handle.write(f"{request.split} {os.getpid()}\\n")
    skill = request.harness["SKILL.md"]
    for instance in request.instances:
        word = instance.split("-")[0]
        yield {"instance": instance, "score": 1.0 if word in skill else 0.0,
               "feedback": f"needs {word}", "cluster": word,
               "trajectory": {"steps": ["read SKILL.md", f"look for {word}"],
                              "env": "OPENAI_API_KEY=sk-" + "x" * 30},
               "failure_class": None if word in skill else "missing-rule"}

def broken(request):
    raise ValueError("the grader\\nfell over")

def on_disk(request):
    directory = request.directory()
    text = (directory / "eval.py").read_text()
    return [{"instance": i, "score": 1.0 if "import" in text else 0.0} for i in request.instances]

def not_a_number(request):
    return [{"instance": i, "score": float("nan")} for i in request.instances]
"""

PYTHON_CONFIG = CONFIG.replace('command = ["python3", "eval.py"]', 'python = "grader.score:evaluate"')


@pytest.fixture(autouse=True)
def forget_grader() -> Iterator[None]:
    """Each test's repository has its own `grader` package: none may see another's."""
    path = list(sys.path)
    yield
    for name in [name for name in sys.modules if name == "grader" or name.startswith("grader.")]:
        del sys.modules[name]
    sys.path[:] = path


def python_repo(make_repo: Callable[..., Path], function: str = "evaluate") -> Path:
    return make_repo(
        {
            "eval.py": EVALUATOR,
            "grader/__init__.py": "",
            "grader/score.py": GRADER,
            "splits.json": json.dumps(SPLITS),
        },
        config=PYTHON_CONFIG.replace("score:evaluate", f"score:{function}") + "batch_size = 5\n",
    )


def rows(repo: Path, rev: str) -> dict[tuple[str, int], float]:
    with Store.discover(repo) as store:
        config = load_config(repo)
        result = evaluate(store, config, rev)
        book = ScoreBook.load(store)
        return {key: row.score for key, row in book.rows(result.context.key).items()}


def test_scores_equal_the_command_evaluators(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CALLS_FILE", str(tmp_path / "calls.txt"))
    command = make_repo({"eval.py": EVALUATOR, "splits.json": json.dumps(SPLITS)})
    python = python_repo(make_repo)
    for repo in (command, python):
        write(repo, "SKILL.md", "alpha and gamma\n")
        git(repo, "commit", "-qam", "mention two")
    by_command, by_function = rows(command, "main"), rows(python, "main")
    assert by_function == by_command and len(by_function) == 12
    assert sorted(by_function.values()).count(1.0) == 8
    # Two command batches of 10 at most; three of 5 at most in this very process.
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert len(calls) == 2 + 3 and calls[2:] == [f"selection {os.getpid()}"] * 3
    with Store.discover(python) as store:
        book = ScoreBook.load(store)
        records = list(book.records.values())
        assert {len(r.instances) for r in records} == {4}  # 12 in 3 even batches
    # Written in one transaction: one notes commit for the three batches (issue 13).
    assert git(python, "rev-list", "--count", layout.NOTES_EVALS).strip() == "1"
    with Store.discover(python) as store:
        # Feedback and trajectories are evidence like a command's, scrubbed.
        evidence = store.objects.read_blob(records[0].evidence or "").decode()
        assert "needs" in evidence and "sk-xxxx" not in evidence


def test_an_exception_is_one_line_and_records_nothing(make_repo: Callable[..., Path]) -> None:
    repo = python_repo(make_repo, "broken")
    with Store.discover(repo) as store:
        with pytest.raises(Exception) as caught:
            evaluate(store, load_config(repo), "main")
        assert not store.notes.records(layout.NOTES_EVALS)
    assert str(caught.value) == "evaluator grader.score:broken raised ValueError: the grader fell over"


def test_results_are_checked_as_the_protocols(make_repo: Callable[..., Path]) -> None:
    repo = python_repo(make_repo, "not_a_number")
    with Store.discover(repo) as store:
        with pytest.raises(Exception, match=r"not_a_number: result 1 cannot be written as JSON"):
            evaluate(store, load_config(repo), "main")
        assert not store.notes.records(layout.NOTES_EVALS)


def test_the_tree_is_written_only_when_asked_for(make_repo: Callable[..., Path]) -> None:
    repo = python_repo(make_repo, "on_disk")
    assert set(rows(repo, "main").values()) == {1.0}


def test_fingerprint_covers_the_module_and_uncommitted_edits_are_refused(
    make_repo: Callable[..., Path],
) -> None:
    repo = python_repo(make_repo)
    with Store.discover(repo) as store:
        config = load_config(repo)
        first = evaluate(store, config, "main", EvalRequest(instances=["alpha-10"])).fingerprint
    write(repo, "grader/score.py", GRADER + "\n# a comment\n")
    with Store.discover(repo) as store:
        # Uncommitted: refused, naming the file; nothing recorded.
        before = store.notes.records(layout.NOTES_EVALS)
        with pytest.raises(Exception, match=r"grader/score\.py in the working tree differ"):
            evaluate(store, config, "main", EvalRequest(instances=["beta-10"]))
        assert store.notes.records(layout.NOTES_EVALS) == before
    git(repo, "commit", "-qam", "edit the grader")
    sys.modules.pop("grader.score")  # a new process would import the edited module
    with Store.discover(repo) as store:
        second = evaluate(store, config, "main", EvalRequest(instances=["alpha-10"]))
        assert second.fingerprint != first and second.evaluated == 1
    # A new helper beside it counts too, committed or not.
    write(repo, "grader/helper.py", "X = 1\n")
    with Store.discover(repo) as store, pytest.raises(Exception, match=r"grader/helper\.py"):
        evaluate(store, config, "main", EvalRequest(instances=["beta-10"]))


def test_a_module_of_the_same_name_from_elsewhere_is_refused(make_repo: Callable[..., Path]) -> None:
    first, second = python_repo(make_repo), python_repo(make_repo)
    rows(first, "main")
    with Store.discover(second) as store, pytest.raises(Exception, match=r"is imported from .*repo1"):
        evaluate(store, load_config(second), "main")


def test_python_and_command_are_exclusive(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(config=CONFIG + 'python = "grader.score:evaluate"\n')
    with pytest.raises(Exception, match=r"evaluator\.python: set either command or python, not both"):
        load_config(repo)


def test_a_candidate_is_scored_from_its_own_harness(make_repo: Callable[..., Path]) -> None:
    repo = python_repo(make_repo)
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(store, config, {"SKILL.md": "beta\n"})
        result = evaluate(store, config, cand.candidate)
        assert result.summary.mean == pytest.approx(4 / 12)
    assert "beta" not in (repo / "SKILL.md").read_text()
