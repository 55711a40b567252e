"""Scores on record: per-instance means over repeats."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.evaluation.eval import EvalRequest, evaluate, with_batches
from harnessgit.gate.gate import GateRequest, run_gate
from harnessgit.render import to_json
from harnessgit.store import Store
from tests.cli.runner import run
from tests.conftest import git

# A real evaluator: scores an instance 1 when the SKILL.md mentions the instance's
# keyword, and counts its own calls in a file outside the repository.
from tests.evaluation.conftest import SPLITS
from tests.gating_fixtures import skill

BATCHES = with_batches()  # the runner the gate takes from its caller


def test_repeats_average_per_instance(make_repo: Callable[..., Path]) -> None:
    flaky = (
        "import json, os, sys\n"
        "r = int(os.environ['HARNESSGIT_REPEAT'])\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'instance': line.strip(), 'score': 1.0 if r == 0 else 0.5}))\n"
    )
    repo = make_repo({"eval.py": flaky, "splits.json": json.dumps(SPLITS)})
    with Store.discover(repo) as store:
        result = evaluate(
            store, load_config(repo), "main", EvalRequest(repeats=3, instances=["alpha-10", "beta-10"])
        )
    assert result.evaluated == 6
    assert [i.scores for i in result.summary.instances] == [[1.0, 0.5, 0.5]] * 2
    assert result.summary.mean == pytest.approx(2 / 3)


def forge(repo: Path, commit: str, **changes: object) -> None:
    """Append, with git's own writer, a copy of the first evaluation record on ``commit``
    with fields changed and a later timestamp (so that it would win every row)."""
    note = git(repo, "notes", f"--ref={layout.NOTES_EVALS}", "show", commit)
    data = json.loads(note.splitlines()[0])
    data.update({"id": uuid.uuid4().hex, "ts": "2027-01-01T00:00:00.000000Z", **changes})
    git(
        repo, "notes", f"--ref={layout.NOTES_EVALS}", "append", "-m", json.dumps(data, sort_keys=True), commit
    )


def test_a_newer_version_or_a_nan_on_record_moves_no_mean(gate_repo: Path) -> None:
    # Issue 15, defect 11. Measured before: a `v: 99` copy with every score 1.0 moved the
    # mean from 0.250 to 0.500; a NaN copy made it nan, and `scores --json` printed NaN.
    with Store.discover(gate_repo) as store:
        result = evaluate(store, load_config(gate_repo), "main")
    assert result.summary.mean == pytest.approx(0.25)
    main = git(gate_repo, "rev-parse", "main").strip()
    forge(gate_repo, main, v=99, scores=[1.0] * 20)
    forge(gate_repo, main, scores=[math.nan] * 20)
    out = run(gate_repo, "scores", "main", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout, parse_constant=refuse)
    assert data["mean"] == pytest.approx(0.25) and len(data["records"]) == 2
    assert out.stderr.splitlines() == [
        f"harnessgit: warning: skipped 1 record of schema version 99 in {layout.NOTES_EVALS} on "
        f"{main[:12]} (a newer harnessgit wrote them; this one reads versions up to 1)",
        f"harnessgit: warning: skipped 1 record with an impossible value in {layout.NOTES_EVALS} on "
        f"{main[:12]} (eval scores: Input should be a finite number)",
    ]


def test_a_nan_score_on_record_never_reaches_the_gate(gate_repo: Path) -> None:
    # Measured before: `gate` died with a 45-line traceback (ValueError: a score must be
    # a finite number, not nan) and exit 1, which means "rejected".
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        evaluate(store, config, cand.candidate)
        forge(gate_repo, cand.commit, scores=[math.nan] * 20)
        outcome = run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
    assert outcome.passed and outcome.record.candidate_mean == pytest.approx(0.75)


def test_json_output_refuses_nan() -> None:
    # A value that cannot be JSON is a bug, not output: Python's json would print NaN.
    with pytest.raises(ValueError, match="not JSON compliant"):
        to_json({"mean": math.nan})


def refuse(name: str) -> None:
    raise AssertionError(f"{name} in JSON output")
