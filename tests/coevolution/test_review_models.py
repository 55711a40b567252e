"""`review` shows the failure-class shift per model (issue 19, part 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.runner import run
from tests.coevolution.fixtures import models_repo
from tests.coevolution.test_models import strict_candidate

__all__ = ["models_repo"]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_review_shows_the_failure_class_shift_of_each_model(models_repo: Path) -> None:
    cand = strict_candidate(models_repo)
    for rev in ("main", cand):
        assert run(models_repo, "eval", rev).exit_code == 0
    text = run(models_repo, "review", "main", cand).stdout
    assert "failure classes on selection, model alpha" in text
    assert "failure classes on selection, model beta" in text
    # alpha: 20 failures -> 5; beta: 20 -> 35, all planning
    assert "planning  20 (100.0%)  5 (100.0%)" in text and "planning  20 (100.0%)  35 (100.0%)" in text
    md = run(models_repo, "review", "main", cand, "--format", "md").stdout
    assert "Failure classes on selection, model beta" in md
