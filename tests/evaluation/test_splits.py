"""The split manifest: refused before anything runs when it is malformed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import evaluate
from harnessgit.store import Store
from tests.conftest import snapshot

# A real evaluator: scores an instance 1 when the SKILL.md mentions the instance's
# keyword, and counts its own calls in a file outside the repository.
from tests.evaluation.conftest import EVALUATOR, calls


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"train": ["a", "a"], "selection": ["b"]}, "appears twice"),
        ({"train": ["a"], "selection": ["a"]}, "splits must be disjoint"),
        ({"train": "a"}, "must be a list"),
        ({"selection": [1]}, "invalid instance id"),
        ([], "JSON object"),
    ],
)
def test_bad_manifests_are_refused_before_anything_runs(
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    manifest: object,
    message: str,
) -> None:
    monkeypatch.setenv("CALLS_FILE", str(tmp_path / "calls.txt"))
    repo = make_repo({"eval.py": EVALUATOR, "splits.json": json.dumps(manifest)})
    before = snapshot(repo)
    with Store.discover(repo) as store, pytest.raises(HarnessgitError, match=message):
        evaluate(store, load_config(repo), "main")
    assert calls(tmp_path) == 0 and snapshot(repo) == before
