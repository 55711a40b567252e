"""`harnessgit model add/list`: checkpoints with parents, shown by log and review."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.runner import one_error_line, run
from tests.coevolution.fixtures import models_repo
from tests.coevolution.test_models import strict_candidate
from tests.conftest import git

__all__ = ["models_repo"]


def test_a_checkpoint_has_a_parent_and_log_shows_it(models_repo: Path) -> None:
    assert run(models_repo, "model", "add", "beta", "--note", "Qwen3-8B as released").exit_code == 0
    added = run(
        models_repo, "model", "add", "beta-ft1", "--parent", "beta", "--note", "LoRA on 400 corrections"
    )
    assert added.exit_code == 0 and added.stdout.strip() == "model beta-ft1 <- beta"
    run(models_repo, "model", "add", "beta-ft2", "--parent", "beta-ft1")
    listed = json.loads(run(models_repo, "model", "list", "--json").stdout)
    ft2 = listed["checkpoints"][2]
    assert ft2["name"] == "beta-ft2" and ft2["lineage"] == ["beta-ft1", "beta"]
    assert git(models_repo, "notes", "--ref", "refs/notes/harnessgit/models", "list").strip()
    log = run(models_repo, "log").stdout
    assert "model checkpoints" in log and "beta-ft1  beta" in log and "LoRA on 400 corrections" in log


def test_bad_lineage_is_refused_and_writes_nothing(models_repo: Path) -> None:
    before = git(models_repo, "for-each-ref")
    line = one_error_line(run(models_repo, "model", "add", "beta-ft1", "--parent", "beta"))
    assert "model 'beta' is not registered" in line
    assert "own parent" in one_error_line(run(models_repo, "model", "add", "x", "--parent", "x"))
    assert "without whitespace" in one_error_line(run(models_repo, "model", "add", "a b"))
    assert git(models_repo, "for-each-ref") == before
    run(models_repo, "model", "add", "beta")
    assert "registered already" in one_error_line(run(models_repo, "model", "add", "beta"))


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_review_says_which_model_is_a_checkpoint_of_which(models_repo: Path) -> None:
    run(models_repo, "model", "add", "beta")
    run(models_repo, "model", "add", "beta-ft1", "--parent", "beta", "--note", "tuned on corrections")
    cand = strict_candidate(models_repo)
    for rev in ("main", cand):
        run(models_repo, "eval", rev, "--model", "alpha", "--model", "beta-ft1")
    text = run(models_repo, "review", "main", cand).stdout
    assert "model beta-ft1 is a checkpoint of beta (tuned on corrections); lineage beta-ft1 <- beta" in text
