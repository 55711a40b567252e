from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.runner import one_error_line, run
from tests.conftest import git, snapshot, write
from tests.history_fixtures import History, build_history, store_scores


@pytest.fixture
def history(review_repo: Path) -> History:
    found = build_history(review_repo, 16, breaks_one=5, breaks_many=11, override_at=11)
    store_scores(review_repo, [found.good, *found.chain])
    return found


def test_bisect_names_the_first_bad_edit(history: History) -> None:
    result = run(history.repo, "bisect", "--good", history.good, "--bad", "main")
    assert result.exit_code == 0, result.output
    assert f"first bad edit: #11 {history.chain[10][:12]}" in result.stdout
    assert (
        "ungated override (hotfix)" in result.stdout
        and "evaluated 0 (at most ceil(log2 16) + 2 = 6)" in result.stdout
    )
    data = json.loads(
        run(history.repo, "bisect", "--good", history.good, "--instance", "s-9", "--json").stdout
    )
    assert data["outcome"] == "found" and data["first_bad"]["commit"] == history.chain[4]
    assert data["first_bad"]["gate"]["regressed"] == ["s-9"] and data["evaluations"] == 0
    nothing = run(history.repo, "bisect", "--good", history.good, "--bad", history.chain[5])
    assert nothing.exit_code == 1 and "is not bad" in nothing.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--good", "nope"], "unknown revision 'nope'"),
        (["--good", "main", "--bad", "GOOD"], "is not an ancestor"),
        (["--good", "GOOD", "--drop", "0.1", "--threshold", "0.5"], "exclude each other"),
        (["--good", "GOOD", "--instance", "t-1"], "instance 't-1' is not in split 'selection'"),
        (["--good", "GOOD", "--split", "test"], "held out"),
    ],
)
def test_bisect_refuses_bad_input_and_changes_nothing(
    history: History, args: list[str], message: str
) -> None:
    before = snapshot(history.repo)
    result = run(history.repo, "bisect", *[history.good if a == "GOOD" else a for a in args])
    assert message in one_error_line(result)
    assert snapshot(history.repo) == before


def test_bisect_judge_exit_codes_for_git_bisect_run(history: History) -> None:
    repo = history.repo
    git(repo, "update-ref", "BISECT_HEAD", history.chain[9])  # what `git bisect --no-checkout` does
    good = run(repo, "bisect-judge", "--good", history.good)
    assert good.exit_code == 0 and "good" in good.stdout
    git(repo, "update-ref", "BISECT_HEAD", history.chain[10])
    assert run(repo, "bisect-judge", "--good", history.good).exit_code == 1
    assert run(repo, "bisect-judge", "--good", history.good, "--instance", "s-9").exit_code == 1
    git(repo, "update-ref", "-d", "BISECT_HEAD")  # a checkout bisect: HEAD is judged
    assert run(repo, "bisect-judge", "--good", history.good, "--threshold", "0.1").exit_code == 0
    # Bad input stops `git bisect run` (128) instead of marking the commit bad (1..127).
    before = snapshot(repo)
    for args in (
        ["--good", "nope"],
        ["--good", history.good, "--drop", "0.1", "--threshold", "0.1"],
        ["--bogus"],
    ):
        result = run(repo, "bisect-judge", *args)
        assert result.exit_code == 128, result.output
        assert len(result.stderr.strip().splitlines()) == 1 and "128 stops" in result.stderr
    assert snapshot(repo) == before


def test_bisect_judge_skips_a_commit_it_cannot_judge(history: History) -> None:
    repo = history.repo
    # A checkout bisect at a commit from before harnessgit was set up: no harnessgit.toml.
    git(repo, "checkout", "-q", history.chain[0])
    result = run(repo, "bisect-judge", "--good", history.good)
    assert result.exit_code == 125 and "cannot judge this commit" in result.stderr
    git(repo, "checkout", "-q", "main")
    # An evaluator that fails on the judged commit.
    write(repo, "SKILL.md", (repo / "SKILL.md").read_text() + "Revision 99.\n")
    git(repo, "commit", "-qam", "an edit")
    write(repo, "eval.py", "import sys\nsys.exit('grader crashed')\n")
    git(repo, "commit", "-qam", "a broken grader")
    failed = run(repo, "-q", "bisect-judge", "--good", history.good)
    assert failed.exit_code == 125 and "grader crashed" in failed.stderr
