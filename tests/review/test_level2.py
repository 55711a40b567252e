"""`harnessgit review` at adoption level 2 (issue 20): no evaluator, no split manifest.

The review says "not evaluated" and why, never REJECT (there is no evaluation to
reject on), and shows everything else: files with sizes, checks, rationale, diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harnessgit.candidates.propose import propose
from harnessgit.cli import cli
from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate
from harnessgit.render import to_json
from harnessgit.review.comment import review_markdown
from harnessgit.review.render import review_text
from harnessgit.review.review import NO_EVALUATOR, ReviewResult, review
from harnessgit.store import Store
from tests.conftest import git, snapshot, write
from tests.gating_fixtures import skill
from tests.review.review_fixtures import LEVEL2_CONFIG, edit_skills, skills_collection

# Only SKILL.md is harness here, as with the old default globs: the prompt beside it is not.
SKILL_MD_ONLY = '[harness]\npaths = ["skills/*/SKILL.md"]\nbase = "main"\n'


def reviewed(repo: Path) -> ReviewResult:
    head = edit_skills(repo)
    with Store.discover(repo) as store:
        before = snapshot(repo)
        result = review(store, load_config(repo), "main", head)
    assert snapshot(repo) == before  # nothing recorded
    return result


def assert_no_verdict(md: str) -> None:
    assert "REJECT" not in md and "PASS" not in md and "Gate:" not in md
    assert "regrade" not in md and "#### Scores" not in md and "own effect" not in md
    assert "would decide" not in md


def test_without_an_evaluator_review_is_not_evaluated_and_shows_the_rest(tmp_path: Path) -> None:
    result = reviewed(skills_collection(tmp_path / "skills"))
    verdict = result.verdict
    assert (verdict.state, verdict.evaluable, verdict.reasons, verdict.commands) == (
        "not evaluated",
        False,
        [NO_EVALUATOR],
        [],
    )
    assert result.scores == [] and result.flips == [] and result.notes == []
    assert {f.path: (f.harness, f.evaluator) for f in result.files} == {
        "README.md": (False, False),
        "skills/subagent-driven-development/SKILL.md": (True, False),
        "skills/subagent-driven-development/review-prompt.md": (True, False),
    }
    assert all(f.size_before and f.size_after for f in result.files)
    (edit,) = result.edits
    assert edit.rationale == "Reviewers missed regressions in fixes." and edit.effect is None
    md = review_markdown(result)
    assert_no_verdict(md)
    assert "**Not evaluated:** no evaluator is configured: set \\[evaluator\\] command" in md
    assert "no gate decision" in md and "Reviewers missed regressions in fixes." in md
    assert "**Checks:**" in md and "<details><summary>Diff" in md
    text = review_text(result)
    assert text.splitlines()[1].startswith("not evaluated: no evaluator is configured")
    assert "REJECT" not in text and "gate:" not in text and "own effect" not in text
    assert '"evaluable": false' in to_json(result)


def test_an_empty_manifest_without_an_evaluator_is_no_reject_either(tmp_path: Path) -> None:
    """The issue's case: with {"train":[],"selection":[],"test":[]} the gate's
    preconditions (min_instances, checks) made the comment lead with REJECT."""
    repo = skills_collection(tmp_path / "skills")
    write(repo, "splits.json", '{"train": [], "selection": [], "test": []}\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Splits")
    result = reviewed(repo)
    assert result.verdict.state == "not evaluated" and result.verdict.reasons == [NO_EVALUATOR]
    assert_no_verdict(review_markdown(result))


def test_a_file_outside_the_harness_is_not_the_evaluators_without_an_evaluator(tmp_path: Path) -> None:
    result = reviewed(skills_collection(tmp_path / "skills", SKILL_MD_ONLY))
    prompt = next(f for f in result.files if f.path.endswith("review-prompt.md"))
    assert (prompt.harness, prompt.evaluator) == (False, False)
    md = review_markdown(result)
    assert "`skills/subagent-driven-development/review-prompt.md` (not a harness file) |" in md
    assert "the evaluator's" not in md


def test_an_evaluator_without_a_manifest_is_not_evaluated_and_names_it(tmp_path: Path) -> None:
    config = LEVEL2_CONFIG + '[evaluator]\ncommand = ["python3", "eval.py"]\n'
    result = reviewed(skills_collection(tmp_path / "skills", config))
    (reason,) = result.verdict.reasons
    assert result.verdict.state == "not evaluated" and not result.verdict.evaluable
    assert "splits.json not found" in reason and "selection split" in reason
    assert_no_verdict(review_markdown(result))


def test_the_evaluators_files_are_labelled_so(review_repo: Path) -> None:
    """With an evaluator (`python3 eval.py`), eval.py is the evaluator's; README is not."""
    base = git(review_repo, "rev-parse", "HEAD").strip()
    write(review_repo, "README.md", "docs\n")
    write(review_repo, "eval.py", (review_repo / "eval.py").read_text() + "# rubric v2\n")
    git(review_repo, "add", "-A")
    git(review_repo, "commit", "-qm", "Rubric v2, docs")
    with Store.discover(review_repo) as store:
        result = review(store, load_config(review_repo), base, "HEAD")
    assert result.verdict.evaluable
    assert {f.path: f.evaluator for f in result.files} == {"README.md": False, "eval.py": True}
    md = review_markdown(result)
    assert "`eval.py` (not a harness file: the evaluator's)" in md
    assert "`README.md` (not a harness file) |" in md


def test_the_cli_reviews_a_skills_collection_without_an_evaluator(tmp_path: Path) -> None:
    repo = skills_collection(tmp_path / "skills")
    edit_skills(repo)
    result = CliRunner().invoke(cli, ["-C", str(repo), "review", "--format", "md"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "**Not evaluated:** no evaluator is configured" in result.output
    assert_no_verdict(result.output)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_with_an_evaluator_and_scores_failing_checks_still_reject(review_repo: Path) -> None:
    """Only a review with no evaluation never says REJECT: with scores on both sides,
    a failing check is the gate's own refusal and the comment says so."""
    padding = [f"Note {i}: read the task again." for i in range(200)]
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        cand = propose(store, config, {"SKILL.md": skill(30, *padding)})
        evaluate(store, config, "main")
        evaluate(store, config, cand.candidate)
        result = review(store, config, "main", cand.candidate)
    assert result.verdict.evaluable and result.verdict.state == "fail"
    assert any("the harness checks fail" in reason for reason in result.verdict.reasons)
    assert "**Gate: FAIL.**" in review_markdown(result) and result.scores
