from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.runner import run
from tests.conftest import git, snapshot
from tests.evaluation.conftest import EVALUATOR, SPLITS


@pytest.fixture
def eval_repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(
        {"eval.py": EVALUATOR + "sys.stderr.write('graded\\n')\n", "splits.json": json.dumps(SPLITS)}
    )


def test_eval_scores_trajectory(eval_repo: Path) -> None:
    result = run(eval_repo, "eval", "main", "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert "selection on" in result.stdout and "12 run in" in result.stdout
    assert "eval selection: 12/12 instances" in result.stderr  # plain progress lines off a terminal
    assert "graded" in result.stderr  # the evaluator's stderr passes through

    again = json.loads(run(eval_repo, "eval", "main", "--json").stdout)
    assert again["cached"] == 12 and again["evaluated"] == 0
    assert again["summary"]["n"] == 12

    quiet = run(eval_repo, "-q", "eval", "main", "--no-cache", "--instances", "alpha-10,beta-10")
    assert quiet.exit_code == 0 and "graded" not in quiet.stderr and quiet.stderr == ""

    scores = json.loads(run(eval_repo, "scores", "main", "--json").stdout)
    assert scores["n"] == 12 and scores["mean"] == 0.0 and len(scores["records"]) >= 2
    text = run(eval_repo, "scores", "main").stdout
    assert "alpha-10" in text and "mean 0.000" in text
    # The column lists each repeat's score, and says so (it was headed "repeats").
    header = text.splitlines()[1]
    assert "score per repeat" in header and "repeats" not in header

    shown = run(eval_repo, "trajectory", "main", "beta-11")
    assert "needs beta" in shown.stdout and "look for beta" in shown.stdout


def test_test_command(eval_repo: Path) -> None:
    result = run(eval_repo, "test", "main")
    assert result.exit_code == 0, result.output
    assert "test-split peek" in result.stdout
    log = json.loads(run(eval_repo, "log", "--json").stdout)
    assert [(p["n"], p["forced"]) for p in log["test_peeks"]] == [(6, False)]
    assert "test-split peeks" in run(eval_repo, "log").stdout
    shown = json.loads(run(eval_repo, "show", "main", "--json").stdout)
    assert [(e["split"], e["n"], e["current"]) for e in shown["evaluations"]] == [("test", 6, True)]
    refused = run(eval_repo, "eval", "main", "--split", "test")
    assert refused.exit_code == 3 and "harnessgit test" in refused.stderr


def test_eval_errors_exit_3_and_record_nothing(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"eval.py": "import sys\nsys.exit('no grader')\n", "splits.json": json.dumps(SPLITS)})
    before = snapshot(repo)
    result = run(repo, "eval", "main")
    assert result.exit_code == 3
    assert result.stderr.splitlines()[-1].startswith("harnessgit: error: evaluator: exited with status 1")
    assert "no grader" in result.stderr.splitlines()[-1]
    assert snapshot(repo) == before
    assert run(repo, "scores", "main", "--split", "nope").exit_code == 3


def test_uncommitted_evaluator_edits_are_named_as_ignored(
    eval_repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Finding 7 of issue 12: an edit to eval.py in the working tree was silently
    ignored, as the evaluator runs in a checkout of the commit."""
    assert run(eval_repo, "eval", "main", "--instances", "alpha-10").exit_code == 0
    assert not caplog.records
    (eval_repo / "eval.py").write_text((eval_repo / "eval.py").read_text() + "# stricter rubric\n")
    (eval_repo / "README.md").write_text("not read by the evaluator\n")
    main = git(eval_repo, "rev-parse", "main").strip()
    edited = run(eval_repo, "eval", "main", "--instances", "alpha-10")
    assert edited.exit_code == 0, edited.output
    assert [r.getMessage() for r in caplog.records] == [
        f"the working tree's eval.py differs from {main[:12]}'s and is ignored: "
        "the evaluator runs as committed"
    ]
    caplog.clear()
    assert run(eval_repo, "test", "main").exit_code == 0
    assert [r.getMessage() for r in caplog.records if "ignored" in r.getMessage()] != []
