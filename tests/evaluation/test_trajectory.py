"""`harnessgit trajectory`: feedback and trajectories, scrubbed of secrets."""

from __future__ import annotations

from pathlib import Path

from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate
from harnessgit.evaluation.trajectory import trajectories
from harnessgit.render import to_json
from harnessgit.store import Store

# A real evaluator: scores an instance 1 when the SKILL.md mentions the instance's
# keyword, and counts its own calls in a file outside the repository.


def test_trajectories_are_scrubbed_and_retrievable(eval_repo: Path) -> None:
    with Store.discover(eval_repo) as store:
        config = load_config(eval_repo)
        evaluate(store, config, "main", instances=["gamma-10"])
        (entry,) = trajectories(store, config, "main", "gamma-10").repeats
    assert entry.feedback == "needs gamma" and entry.failure_class == "missing-rule"
    assert entry.trajectory["steps"][1] == "look for gamma"
    assert "sk-" not in to_json(entry) and "[REDACTED]" in entry.trajectory["env"]
