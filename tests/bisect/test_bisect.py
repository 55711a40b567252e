from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from harnessgit.bisect.bisect import BisectResult, bisect
from harnessgit.bisect.judge import Criterion, judge_one
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.store import Store
from tests.cli.runner import run
from tests.conftest import git, write
from tests.history_fixtures import build_history, expected_score, store_scores

N = 64  # accepted edits in the history


def evaluated_commits(tmp_path: Path) -> list[str]:
    """Commits the evaluator ran on (one process per commit evaluation)."""
    path = tmp_path / "calls.txt"
    return path.read_text().split() if path.exists() else []


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CALLS_FILE", str(tmp_path / "calls.txt"))
    return tmp_path


def bisect_to_main(repo: Path, good: str, instances: list[str] | None = None) -> BisectResult:
    """bisect from good to main: on the selection mean by default, else on ``instances``."""
    criterion = Criterion.build("selection", instances, None, None)
    with Store.discover(repo) as store:
        return bisect(store, load_config(repo), good, "main", criterion)


def mean_of(repo: Path, commit: str) -> float:
    text = git(repo, "show", f"{commit}:SKILL.md")
    return sum(expected_score(text, f"s-{i}") for i in range(40)) / 40


@pytest.mark.slow
def test_finds_the_planted_regression_within_the_evaluation_bound(review_repo: Path, calls: Path) -> None:
    history = build_history(review_repo, N)
    result = bisect_to_main(review_repo, history.good)
    bound = math.ceil(math.log2(N)) + 2
    ran = evaluated_commits(calls)
    assert result.outcome == "found" and result.edits == N and result.bound == bound == 8
    assert result.evaluations == len(ran) == len(set(ran)) <= bound
    first = result.first_bad
    assert first is not None and first.commit == history.chain[40] and first.position == 41
    assert first.before.commit == history.chain[39] and first.before.state == "good"
    # Each commit was evaluated with its own tree: the scores follow each SKILL.md.
    for step in result.steps:
        assert step.mean == pytest.approx(mean_of(review_repo, step.commit))
    # Named with its diff, its records and the check it slipped through.
    assert first.kind == "override" and first.override is not None and first.gate is None
    assert "+break s-0" in first.diff and first.files[0].path == "SKILL.md"
    assert first.proposal is not None and "revision 41" in first.proposal.rationale
    assert any(
        "ungated override (hotfix)" in reason and "production incident" in reason for reason in first.why
    )
    assert first.own.difference == pytest.approx(-0.2) and first.own.regressed == [f"s-{i}" for i in range(8)]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_zero_evaluations_when_every_score_is_stored(review_repo: Path, calls: Path) -> None:
    history = build_history(review_repo, N)
    store_scores(review_repo, [history.good, *history.chain])
    result = bisect_to_main(review_repo, history.good)
    assert result.evaluations == 0 and evaluated_commits(calls) == []
    assert result.first_bad is not None and result.first_bad.commit == history.chain[40]
    assert {step.source for step in result.steps} == {"stored"}


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_stored_scores_narrow_the_search_before_any_evaluation(review_repo: Path, calls: Path) -> None:
    history = build_history(review_repo, N)
    # Scores on record for good, bad and every eighth edit: the range shrinks to 39..48 for free.
    store_scores(review_repo, [history.good, history.chain[-1], *history.chain[7::8]])
    result = bisect_to_main(review_repo, history.good)
    assert result.first_bad is not None and result.first_bad.commit == history.chain[40]
    assert 0 < result.evaluations == len(evaluated_commits(calls)) <= math.ceil(math.log2(8))


@pytest.mark.slow
def test_finds_the_edit_that_broke_one_instance(review_repo: Path, calls: Path) -> None:
    history = build_history(review_repo, N)
    result = bisect_to_main(review_repo, history.good, ["s-9"])
    first = result.first_bad
    assert first is not None and first.commit == history.chain[19] and first.after.failing == ["s-9"]
    assert result.evaluations <= math.ceil(math.log2(N)) + 2
    # The gate saw s-9 regress and passed the edit on its net gain.
    assert first.kind == "gated merge" and first.gate is not None and first.gate.regressed == ["s-9"]
    assert any("saw instance s-9 regress" in reason and "+12.5" in reason for reason in first.why)
    assert (
        first.accepted_on is not None
        and "attempt 1" in first.accepted_on
        and "19.0 points" in first.accepted_on
    )
    # Only s-9 was evaluated: the split's other instances were never asked for.
    assert all(set(step.scores) == {"s-9"} for step in result.steps)


def test_threshold_and_the_answers_that_are_no(review_repo: Path) -> None:
    history = build_history(review_repo, 16, breaks_one=5, breaks_many=11, override_at=None)
    store_scores(review_repo, [history.good, *history.chain])
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        found = bisect(store, config, history.good, "main", Criterion.build("selection", None, None, 0.2))
        assert found.first_bad is not None and found.first_bad.commit == history.chain[10]
        # A gated merge whose regression the gate's record does not show: said so, not invented.
        assert found.first_bad.kind == "gated merge" and found.first_bad.why
        not_bad = bisect(
            store, config, history.good, history.chain[5], Criterion.build("selection", None, 0.05, None)
        )
        assert not_bad.outcome == "bad is good" and not_bad.first_bad is None
        already = bisect(store, config, history.good, "main", Criterion.build("selection", None, None, 0.3))
        assert already.outcome == "good is bad"


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_the_first_commits_predate_harnessgit(review_repo: Path) -> None:
    history = build_history(review_repo, 8, breaks_one=99, breaks_many=2, override_at=None, direct=3)
    result = bisect_to_main(review_repo, history.good)
    assert result.first_bad is not None and result.first_bad.commit == history.chain[1]
    assert result.first_bad.kind == "before harnessgit"
    assert "before harnessgit was set up" in result.first_bad.why[0]


CRASHING = """
import sys
from pathlib import Path
if "CRASH" in Path("SKILL.md").read_text():
    sys.exit("the grader crashed")
"""


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_commit_that_cannot_be_evaluated_is_skipped(review_repo: Path) -> None:
    eval_py = (review_repo / "eval.py").read_text()
    write(review_repo, "eval.py", CRASHING + eval_py)
    git(review_repo, "commit", "-qam", "a grader that crashes on CRASH")
    good = git(review_repo, "rev-parse", "HEAD").strip()
    skill = (review_repo / "SKILL.md").read_text()
    texts = [skill + "one\n", skill + "CRASH\n", skill + "break s-0\nthree\n", skill + "break s-0\nfour\n"]
    for text in texts:
        write(review_repo, "SKILL.md", text)
        git(review_repo, "commit", "-qam", "edit")
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        # s-0 breaks at the third edit, but the second cannot be judged: either may be first.
        result = bisect(store, config, good, "main", Criterion.build("selection", ["s-0"], None, None))
        assert result.outcome == "ambiguous" and result.first_bad is None
        chain = git(review_repo, "rev-list", "--reverse", f"{good}..main").split()
        assert result.suspects == chain[1:3]
        assert [s.state for s in result.steps if s.commit == chain[1]] == ["skip"]
        assert "the grader crashed" in next(s.reason for s in result.steps if s.state == "skip")


def test_refuses_bad_input(review_repo: Path) -> None:
    history = build_history(review_repo, 4)
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        selection = Criterion.build("selection", None, None, None)
        with pytest.raises(HarnessgitError, match="not an ancestor"):
            bisect(store, config, "main", history.good, selection)
        with pytest.raises(HarnessgitError, match="same commit"):
            bisect(store, config, "main", "main", selection)
        with pytest.raises(HarnessgitError, match="unknown revision"):
            bisect(store, config, "no-such-rev", "main", selection)
        with pytest.raises(HarnessgitError, match="not in split"):
            bisect(store, config, history.good, "main", Criterion.build("selection", ["t-1"], None, None))


def test_judge_one_compares_with_good(review_repo: Path) -> None:
    history = build_history(review_repo, 16, breaks_one=5, breaks_many=11, override_at=None)
    store_scores(review_repo, [history.good, *history.chain])
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        criterion = Criterion.build("selection", None, 0.05, None)
        assert judge_one(store, config, history.good, history.chain[9], criterion).state == "good"
        assert judge_one(store, config, history.good, history.chain[10], criterion).state == "bad"


def bisect_run(repo: Path, good: str, *start: str) -> str:
    """`git bisect run harnessgit bisect-judge --good GOOD`, as a user would type it."""
    git(repo, "bisect", "start", "--first-parent", *start, "main", good)
    result = subprocess.run(
        ["git", "bisect", "run", sys.executable, "-m", "harnessgit", "-q", "bisect-judge", "--good", good],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    git(repo, "bisect", "reset")
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["checkout", "no-checkout"])
def test_git_bisect_run_with_bisect_judge(review_repo: Path, calls: Path, mode: str) -> None:
    history = build_history(review_repo, 12, breaks_one=99, breaks_many=7, override_at=7)
    out = bisect_run(review_repo, history.good, *(["--no-checkout"] if mode == "no-checkout" else []))
    assert f"{history.chain[6]} is the first bad commit" in out
    # In a checkout, commits from before harnessgit.toml existed cannot be judged
    # (exit 125, skipped); with --no-checkout the current configuration judges them all.
    assert len(set(evaluated_commits(calls))) <= math.ceil(math.log2(12)) + 2


def commit_edits(repo: Path, edits: list[dict[str, str]]) -> list[str]:
    """Plain commits on main, one per {path: text}; returns them oldest first."""
    for files in edits:
        for path, text in files.items():
            write(repo, path, text)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"edit {', '.join(files)}")
    return git(repo, "rev-list", "--reverse", f"HEAD~{len(edits)}..HEAD").split()


def test_a_drop_made_by_a_regrade_is_not_blamed_on_the_harness(review_repo: Path) -> None:
    # A stricter grader lowers every score from chain[1] on; the harness edits change
    # nothing. Judged with one evaluator (bad's), no harness on the range is worse.
    good = git(review_repo, "rev-parse", "HEAD").strip()
    skill_md = (review_repo / "SKILL.md").read_text()
    stricter = (review_repo / "eval.py").read_text().replace("good = (", "good = number >= 8 and (")
    chain = commit_edits(
        review_repo,
        [{"SKILL.md": skill_md + "one\n"}, {"eval.py": stricter}, {"SKILL.md": skill_md + "three\n"}],
    )
    assert run(review_repo, "override", chain[1], "--reason", "count only s-8 and up").exit_code == 0
    result = bisect_to_main(review_repo, good)
    assert result.outcome == "bad is good" and result.first_bad is None
    assert "scored with bad's evaluator too" in result.message
    (note,) = result.notes
    assert f"at {chain[1][:12]} 'edit eval.py', override: “count only s-8 and up”" in note
    assert f"judged with bad's evaluator ({chain[2][:12]})" in note


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_regression_behind_a_lenient_regrade_is_found(review_repo: Path) -> None:
    # A lenient grader (s-30 and up always pass: +10 points) and then a harness edit
    # that breaks s-0..s-4 (-12.5 points). Scored each with its own evaluator, bad
    # (mean 0.375) looks better than good (0.25), and the regression hid behind the
    # regrade; with one evaluator good is 0.5 and the edit is found.
    good = git(review_repo, "rev-parse", "HEAD").strip()
    skill_md = (review_repo / "SKILL.md").read_text()
    lenient = (review_repo / "eval.py").read_text().replace("good = (", "good = number >= 30 or (")
    breaks = "".join(f"break s-{i}\n" for i in range(5))
    chain = commit_edits(
        review_repo,
        [
            {"eval.py": lenient},
            {"README.md": "docs\n"},
            {"SKILL.md": skill_md + breaks},
            {"README.md": "more\n"},
        ],
    )
    result = bisect_to_main(review_repo, good)
    assert result.first_bad is not None and result.first_bad.commit == chain[2]
    assert result.steps[0].mean == 0.5 and result.first_bad.after.mean == 0.375
    assert not any("evaluator depends on" in reason for reason in result.first_bad.why)
    (note,) = result.notes
    assert f"at {chain[0][:12]} 'edit eval.py', no override recorded" in note
    # The scores are on record under (good's harness, bad's evaluator) and reproduce.
    shown = json.loads(run(review_repo, "eval", good, "--grader", "main", "--json").stdout)
    assert shown["cached"] == 40 and shown["summary"]["mean"] == 0.5 and shown["grader"] == chain[-1]
    # `git bisect run` needs the grader named: HEAD (bad) looks good against good's own scores.
    assert run(review_repo, "bisect-judge", "--good", good).exit_code == 0
    assert run(review_repo, "bisect-judge", "--good", good, "--grader", "main").exit_code == 1


def test_an_edit_that_regrades_and_regresses_is_judged_by_its_harness(review_repo: Path) -> None:
    good = git(review_repo, "rev-parse", "HEAD").strip()
    skill_md = (review_repo / "SKILL.md").read_text()
    grader = (review_repo / "eval.py").read_text() + "# graded the same, but a new grader\n"
    chain = commit_edits(
        review_repo,
        [{"eval.py": grader, "SKILL.md": skill_md + "break s-0\nbreak s-1\nbreak s-2\n"}],
    )
    result = bisect_to_main(review_repo, good)
    assert result.first_bad is not None and result.first_bad.commit == chain[0]
    assert "also changed files the evaluator depends on (a regrade)" in result.first_bad.why[0]
    assert "different graders" not in " ".join(result.first_bad.why)


def test_a_docs_commit_is_no_grader_change(review_repo: Path) -> None:
    # Issue 12, finding 4: a README commit changed the evaluator fingerprint (then every
    # file outside the harness), and bisect warned of "different graders".
    good = git(review_repo, "rev-parse", "HEAD").strip()
    skill_md = (review_repo / "SKILL.md").read_text()
    chain = commit_edits(
        review_repo,
        [{"README.md": "notes\n"}, {"SKILL.md": skill_md + "break s-0\nbreak s-1\nbreak s-2\n"}],
    )
    result = bisect_to_main(review_repo, good)
    assert result.first_bad is not None and result.first_bad.commit == chain[1]
    assert result.notes == []
