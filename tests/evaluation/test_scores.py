"""Scores on record: per-instance means over repeats."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate
from harnessgit.store import Store

# A real evaluator: scores an instance 1 when the SKILL.md mentions the instance's
# keyword, and counts its own calls in a file outside the repository.
from tests.evaluation.conftest import SPLITS


def test_repeats_average_per_instance(make_repo: Callable[..., Path]) -> None:
    flaky = (
        "import json, os, sys\n"
        "r = int(os.environ['HARNESSGIT_REPEAT'])\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'instance': line.strip(), 'score': 1.0 if r == 0 else 0.5}))\n"
    )
    repo = make_repo({"eval.py": flaky, "splits.json": json.dumps(SPLITS)})
    with Store.discover(repo) as store:
        result = evaluate(store, load_config(repo), "main", repeats=3, instances=["alpha-10", "beta-10"])
    assert result.evaluated == 6
    assert [i.scores for i in result.summary.instances] == [[1.0, 0.5, 0.5]] * 2
    assert result.summary.mean == pytest.approx(2 / 3)
