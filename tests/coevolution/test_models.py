"""Models as a dimension: eval for several models, transfer, the gate's [gate] models."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest, run_gate
from harnessgit.records import GateRecord
from harnessgit.stats.holm import holm
from harnessgit.store import Store
from tests.cli.runner import run
from tests.coevolution.fixtures import MODELS_CONFIG, SPLITS, models_repo, skill
from tests.conftest import git

BATCHES = with_batches()  # the runner the gate takes from its caller

__all__ = ["models_repo"]


def strict_candidate(repo: Path) -> str:
    with Store.discover(repo) as store:
        cand = propose(store, load_config(repo), {"SKILL.md": skill(20, "STRICT PLAN")}, rationale="Plan")
    return cand.candidate


def test_holm_steps_down_and_stops_at_the_first_that_does_not_clear() -> None:
    assert holm([0.01, 0.04, 0.03], 0.05) == [(0.05 / 3, True), (0.05, False), (0.025, False)]
    assert holm([0.001, 0.02], 0.05) == [(0.025, True), (0.05, True)]
    assert holm([], 0.05) == []


def test_eval_runs_once_per_model_and_the_evaluator_hears_the_label(models_repo: Path) -> None:
    result = run(models_repo, "eval", "main", "--json")
    assert result.exit_code == 0, result.output
    evaluations = json.loads(result.stdout)
    assert [e["model"] for e in evaluations] == ["alpha", "beta"]
    assert [e["evaluated"] for e in evaluations] == [40, 40]
    again = json.loads(run(models_repo, "eval", "main", "--model", "beta", "--json").stdout)
    assert again["model"] == "beta" and again["cached"] == 40 and again["evaluated"] == 0
    fresh = json.loads(run(models_repo, "eval", "main", "--model", "gamma", "--json").stdout)
    assert fresh["model"] == "gamma" and fresh["evaluated"] == 40


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_transfer_flags_an_edit_that_helps_one_model_and_hurts_another(models_repo: Path) -> None:
    cand = strict_candidate(models_repo)
    for rev in ("main", cand):
        assert run(models_repo, "eval", rev).exit_code == 0
    result = run(models_repo, "transfer", cand, "--json")
    assert result.exit_code == 0, result.output
    table = json.loads(result.stdout)
    assert table["models"] == ["alpha", "beta"] and table["flagged"] == [cand]
    base, row = table["rows"]
    assert base["base"] and [c["mean"] for c in base["cells"]] == [0.5, 0.5]
    alpha, beta = row["cells"]
    assert alpha["difference"] == pytest.approx(0.375) and alpha["effect"] == "gain"
    assert beta["difference"] == pytest.approx(-0.375) and beta["effect"] == "loss"
    assert row["gains"] == ["alpha"] and row["losses"] == ["beta"] and row["flagged"]
    text = run(models_repo, "transfer", cand).stdout
    assert f"FLAG {cand}: helps alpha and hurts beta" in text


def test_transfer_names_what_to_run_for_empty_cells(models_repo: Path) -> None:
    cand = strict_candidate(models_repo)
    run(models_repo, "eval", "main", "--model", "alpha")
    table = json.loads(run(models_repo, "transfer", cand, "--json").stdout)
    assert table["flagged"] == []
    assert f"harnessgit eval {cand} --split selection --model beta" in table["missing"]


@pytest.mark.slow
def test_the_gate_refuses_a_significant_loss_on_a_listed_model(models_repo: Path) -> None:
    cand = strict_candidate(models_repo)
    with Store.discover(models_repo) as store:
        config = load_config(models_repo)
        # [gate] models unset: only alpha, the primary, decides
        alone = run_gate(store, config, GateRequest(cand), execution=BATCHES, check=check_change)
        assert alone.passed and alone.record.models is None
    git(models_repo, "branch", "-f", "plain", "main")
    (models_repo / "harnessgit.toml").write_text(
        (models_repo / "harnessgit.toml").read_text() + '\n[gate]\nmodels = ["beta"]\n'
    )
    git(models_repo, "commit", "-qam", "Require no loss on beta")
    with Store.discover(models_repo) as store:
        config = load_config(models_repo)
        cand2 = propose(store, config, {"SKILL.md": skill(20, "STRICT PLAN")}, rationale="Plan").candidate
        outcome = run_gate(store, config, GateRequest(cand2), execution=BATCHES, check=check_change)
        record = outcome.record
        assert not outcome.passed
        assert record.model == "alpha" and record.difference == pytest.approx(0.375)
        assert record.models is not None and [m.model for m in record.models] == ["beta"]
        beta = record.models[0]
        assert beta.loss and beta.difference == pytest.approx(-0.375) and beta.n == 40
        assert beta.level == pytest.approx(record.alpha_k)  # one other model: Holm's level is alpha_k
        assert any("significant loss on model beta" in reason for reason in record.reasons)
        stored = [
            r
            for r in store.notes.records_on(layout.NOTES_GATE, outcome.record.commit)
            if isinstance(r, GateRecord)
        ]
        assert stored[0].models == record.models


@pytest.mark.slow
def test_gate_model_option_adds_a_model_and_says_per_model_what_it_compared(models_repo: Path) -> None:
    cand = strict_candidate(models_repo)
    result = run(models_repo, "gate", cand, "--model", "beta")
    assert result.exit_code == 1, result.output
    assert "model beta: base 50.0  candidate 12.5  difference -37.5" in result.stdout
    assert "significant loss on model beta" in result.stdout
    fine = run(models_repo, "gate", cand, "--model", "gamma")  # gamma: no STRICT effect, no loss
    assert fine.exit_code == 0, fine.output
    assert "model gamma" in fine.stdout and "no significant loss" in fine.stdout
    both = json.loads(run(models_repo, "gate", cand, "--model", "gamma", "--model", "beta", "--json").stdout)
    # Holm over two models: the smaller p (beta's) at alpha_k / 2, the next at alpha_k.
    levels = {m["model"]: (m["level"], m["loss"]) for m in both["models"]}
    assert levels == {
        "gamma": (pytest.approx(both["alpha_k"]), False),
        "beta": (pytest.approx(both["alpha_k"] / 2), True),
    }


def test_bad_model_settings_are_one_line_errors(models_repo: Path) -> None:
    before = git(models_repo, "for-each-ref")
    toml = models_repo / "harnessgit.toml"
    toml.write_text(toml.read_text().replace('models = ["alpha", "beta"]', 'model = "x"\nmodels = ["alpha"]'))
    result = run(models_repo, "eval", "main")
    assert result.exit_code == 3 and "evaluator.models" in result.stderr
    toml.write_text(toml.read_text().replace('models = ["alpha"]', 'models = ["x", "x"]'))
    assert "names a model twice" in run(models_repo, "eval", "main").stderr
    git(models_repo, "checkout", "-q", "--", "harnessgit.toml")
    assert git(models_repo, "for-each-ref") == before  # nothing evaluated, nothing recorded


# A persistent evaluator hears its model once, in its environment, at start; each
# request names the model too. It scores 1 only when the two agree.
SERVER = """\
import json, os, sys
for line in sys.stdin:
    request = json.loads(line)
    agree = request["model"] == os.environ["HARNESSGIT_MODEL"]
    for instance in request["instances"]:
        print(json.dumps({"batch": request["batch"], "instance": instance, "score": 1.0 if agree else 0.0}))
    print(json.dumps({"batch": request["batch"], "done": True}), flush=True)
"""


def test_a_persistent_evaluator_process_serves_one_model(models_repo: Path) -> None:
    (models_repo / "server.py").write_text(SERVER)
    toml = models_repo / "harnessgit.toml"
    toml.write_text(toml.read_text().replace('"eval.py"]', '"server.py"]\npersistent = true'))
    git(models_repo, "add", "-A")
    git(models_repo, "commit", "-qm", "A persistent evaluator")
    result = run(models_repo, "eval", "main", "--model", "alpha", "--model", "beta", "--json")
    assert result.exit_code == 0, result.output
    assert [e["summary"]["mean"] for e in json.loads(result.stdout)] == [1.0, 1.0]


def with_gate_models(repo: Path) -> None:
    toml = repo / "harnessgit.toml"
    toml.write_text(toml.read_text() + '\n[gate]\nmodels = ["beta"]\n')
    git(repo, "commit", "-qam", "Require no loss on beta")


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_review_says_what_the_gate_would_over_the_listed_models(models_repo: Path) -> None:
    with_gate_models(models_repo)
    cand = strict_candidate(models_repo)
    run(models_repo, "eval", "main", "--model", "alpha")
    run(models_repo, "eval", cand, "--model", "alpha")
    unscored = json.loads(run(models_repo, "review", "main", cand, "--format", "json").stdout)["verdict"]
    assert unscored["state"] == "not evaluated"
    assert f"harnessgit eval {cand} --split selection --model beta" in unscored["commands"]
    run(models_repo, "eval", "main", "--model", "beta")
    run(models_repo, "eval", cand, "--model", "beta")
    verdict = json.loads(run(models_repo, "review", "main", cand, "--format", "json").stdout)["verdict"]
    assert verdict["state"] == "fail"
    assert any("significant loss on model beta" in reason for reason in verdict["reasons"])


@pytest.mark.slow
def test_a_candidate_that_loses_on_no_listed_model_merges_and_verifies(models_repo: Path) -> None:
    with_gate_models(models_repo)
    with Store.discover(models_repo) as store:
        cand = propose(store, load_config(models_repo), {"SKILL.md": skill(35)}, rationale="Raise").candidate
    settings = git(models_repo, "rev-parse", "main").strip()
    assert run(models_repo, "override", settings, "--reason", "gate over beta too").exit_code == 0
    merged = run(models_repo, "merge", cand)
    assert merged.exit_code == 0, merged.output
    assert "model beta: base 50.0  candidate 87.5  difference +37.5" in merged.stdout
    verified = run(models_repo, "verify")
    assert verified.exit_code == 0, verified.output


MODEL_GRADER = """\
def evaluate(request):
    return [{"instance": i, "score": 1.0 if request.model == "alpha" else 0.0} for i in request.instances]
"""


@pytest.fixture
def forget_grader() -> Iterator[None]:
    """The in-process evaluator is imported from the test's repository: forget it after."""
    path = list(sys.path)
    yield
    for name in [name for name in sys.modules if name.split(".")[0] == "modelgrader"]:
        del sys.modules[name]
    sys.path[:] = path


def test_an_in_process_evaluator_reads_the_model_from_its_request(
    make_repo: Callable[..., Path], forget_grader: None
) -> None:
    config = MODELS_CONFIG.replace(
        'command = ["python3", "eval.py"]', 'python = "modelgrader.score:evaluate"'
    )
    repo = make_repo(
        {
            "modelgrader/__init__.py": "",
            "modelgrader/score.py": MODEL_GRADER,
            "splits.json": json.dumps(SPLITS),
        },
        config=config,
    )
    result = run(repo, "eval", "main", "--json")
    assert result.exit_code == 0, result.output
    assert [(e["model"], e["summary"]["mean"]) for e in json.loads(result.stdout)] == [
        ("alpha", 1.0),
        ("beta", 0.0),
    ]


def test_transfer_shows_the_models_on_record_and_the_base_once(models_repo: Path) -> None:
    cand = strict_candidate(models_repo)
    for rev in ("main", cand):  # scores for a model [evaluator] models does not list
        assert run(models_repo, "eval", rev, "--model", "gamma").exit_code == 0
    table = json.loads(run(models_repo, "transfer", "main", cand, "--json").stdout)
    assert table["models"] == ["alpha", "beta", "gamma"]
    assert [row["name"] for row in table["rows"]] == ["main", cand]
    gamma = table["rows"][1]["cells"][2]
    assert gamma["model"] == "gamma" and gamma["mean"] == 0.5 and gamma["difference"] == 0.0
    assert [c["model"] for c in table["rows"][0]["cells"]] == ["alpha", "beta", "gamma"]
