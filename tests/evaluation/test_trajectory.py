"""`harnessgit trajectory`: feedback and trajectories, scrubbed of secrets."""

from __future__ import annotations

import json
from pathlib import Path

from harnessgit.config import load_config
from harnessgit.evaluation.eval import EvalRequest, evaluate
from harnessgit.evaluation.trajectory import trajectories
from harnessgit.render import to_json
from harnessgit.store import Store
from tests.cli.runner import run
from tests.conftest import git
from tests.evaluation.test_scores import forge

# A real evaluator: scores an instance 1 when the SKILL.md mentions the instance's
# keyword, and counts its own calls in a file outside the repository.


def test_trajectories_are_scrubbed_and_retrievable(eval_repo: Path) -> None:
    with Store.discover(eval_repo) as store:
        config = load_config(eval_repo)
        evaluate(store, config, "main", EvalRequest(instances=["gamma-10"]))
        (entry,) = trajectories(store, config, "main", "gamma-10").repeats
    assert entry.feedback == "needs gamma" and entry.failure_class == "missing-rule"
    assert entry.trajectory["steps"][1] == "look for gamma"
    assert "sk-" not in to_json(entry) and "[REDACTED]" in entry.trajectory["env"]


def test_a_forged_evidence_blob_costs_its_own_lines_not_the_command(eval_repo: Path) -> None:
    # Issue 15: a record pointing at a blob with a NaN made `trajectory --json` print a
    # traceback (exit 1); a list or a truncated line did the same.
    with Store.discover(eval_repo) as store:
        evaluate(store, load_config(eval_repo), "main", EvalRequest(instances=["gamma-10"]))
    main = git(eval_repo, "rev-parse", "main").strip()
    lines = [
        '{"instance": "gamma-10", "repeat": 0, "feedback": "forged", "cost": {"usd": NaN}}',
        "[1, 2]",
        '{"instance": ["gamma-10"], "repeat": 0}',
        '{"instance": "gamma-10", "repe',
    ]
    blob = git(eval_repo, "hash-object", "-w", "--stdin", input="\n".join(lines) + "\n").strip()
    forge(eval_repo, main, evidence=blob)
    out = run(eval_repo, "trajectory", "main", "gamma-10", "--json")
    assert out.exit_code == 0, out.output
    (entry,) = json.loads(out.stdout)["repeats"]
    assert entry["feedback"] is None and entry["score"] == 0.0  # the score is the record's
    assert out.stderr.splitlines() == [
        f"harnessgit: warning: skipped 2 records of invalid JSON in evidence on {blob[:12]} "
        "(NaN, Infinity or malformed)",
        "harnessgit: warning: skipped 2 records without an instance id and repeat in evidence on "
        + blob[:12],
    ]
