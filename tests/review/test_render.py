from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit.config import load_config
from harnessgit.review.render import review_text, verdict_line
from harnessgit.review.review import Verdict, review
from harnessgit.review.scores import Flip
from harnessgit.store import Store
from tests.review.review_fixtures import odd_change, result_with, reviewed_candidate, unpaired_row


def test_the_text_of_an_evaluated_candidate(
    review_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    candidate, result = reviewed_candidate(review_repo, monkeypatch, tmp_path)
    text = review_text(result)
    assert "gate: PASS: chance better over 99%, expected loss if merged anyway 0.0 points" in text
    assert "observed +47.5 points on 40 selection instances" in text
    assert "regressed s-3: 1.00 -> 0.00; feedback: ok -> s-3 failed: broken-rule" in text
    assert f"(candidate {candidate})" in text and "+LEVEL: 30" in text


def test_a_binary_file_and_a_rename(review_repo: Path) -> None:
    odd_change(review_repo)
    with Store.discover(review_repo) as store:
        result = review(store, load_config(review_repo))
    text = review_text(result)
    assert "assets/logo.png" in text and "binary" in text
    assert "prompts/system.md -> prompts/main.md  renamed" in text


def test_a_row_without_a_comparison_shows_the_one_empty_value() -> None:
    flip = Flip(instance="s-1", base_score=1.0, head_score=0.0)
    text = review_text(result_with(flip, "Edit\n\nWhy it was made", scores=[unpaired_row()]))
    (row,) = [line for line in text.splitlines() if line.startswith("train ")]
    # Issue 12, finding 8: no means side by side, each side's coverage instead.
    assert " ".join(row.split()) == "train m 0/60 - (6 scored) - (3 scored) - - - 0/0/0"
    assert "regressed s-1: 1.00 -> 0.00; feedback: - -> -" in text
    # The rationale's first line repeats the subject, so only the rest is quoted.
    assert "  cccccccccccc Edit\n    own effect: not evaluated\n    | Why it was made\n" in text


def test_verdict_line_says_what_to_run_or_what_it_rests_on() -> None:
    missing = Verdict(state="not evaluated", reasons=[], commands=["harnessgit eval main --split selection"])
    assert verdict_line(missing).endswith("; run harnessgit eval main --split selection")
    rejected = Verdict(state="fail", reasons=["too few instances", "checks failed"], commands=[])
    assert verdict_line(rejected) == "FAIL: too few instances; checks failed"
