"""`harnessgit test`: the held-out split, looked at rarely and always on the record."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import EvalRequest, evaluate
from harnessgit.evaluation.heldout import peek_test_split
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.store import Store

# A real evaluator: scores an instance 1 when the SKILL.md mentions the instance's
# keyword, and counts its own calls in a file outside the repository.
from tests.evaluation.conftest import SPLITS


def test_held_out_split_is_guarded(eval_repo: Path) -> None:
    with Store.discover(eval_repo) as store:
        config = load_config(eval_repo)
        with pytest.raises(HarnessgitError, match="held out"):
            evaluate(store, config, "main", EvalRequest(split="test"))
        first = peek_test_split(store, config, "main")
        assert first.evaluation.summary.n == 6 and not first.peek.forced
        assert peek_test_split(store, config, "main").evaluation.evaluated == 0  # same harness: fine
        cand = propose(store, config, {"SKILL.md": "alpha beta\n"})
        # main was looked at twice: one other harness, not two
        with pytest.raises(HarnessgitError, match="already evaluated for 1 other harness "):
            peek_test_split(store, config, cand.candidate)
        forced = peek_test_split(store, config, cand.candidate, force=True)
        assert forced.peek.forced and forced.evaluation.summary.mean == 1.0
        book = ScoreBook.load(store)
        assert len(book.peeks) == 3
        with pytest.raises(HarnessgitError, match="never feeds"):
            book.summary(forced.evaluation.context.key, "test", SPLITS["test"], for_decision=True)
