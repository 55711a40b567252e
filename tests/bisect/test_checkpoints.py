"""Bisect across weights (issue 19): over a checkpoint lineage at a fixed harness, and
over commits saying whether the regression came from a harness edit or the weights."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.runner import one_error_line, run
from tests.coevolution.fixtures import EVALUATOR, MODELS_CONFIG, SPLITS, skill
from tests.conftest import git, write

# The co-evolution simulator (tests/coevolution/fixtures.py), whose checkpoints ``ckN``
# from ck3 on lose 10 levels: checkpoint 3's weights regress at any harness. Each
# evaluator run appends the label it heard to CALLS_FILE.
CHECKPOINT_EVALUATOR = EVALUATOR.replace(
    'model = os.environ["HARNESSGIT_MODEL"]\n',
    'model = os.environ["HARNESSGIT_MODEL"]\n'
    'open(os.environ["CALLS_FILE"], "a").write(model + "\\n")\n'
    'if re.fullmatch(r"ck\\d+", model) and int(model[2:]) >= 3:\n'
    "    level -= 10\n",
)
CHECKPOINTS = [f"ck{i}" for i in range(6)]  # ck0 the root, then five tuning rounds


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "calls.txt"
    monkeypatch.setenv("CALLS_FILE", str(path))
    return path


def heard(calls: Path) -> list[str]:
    """The model labels the evaluator ran for, one per evaluator process."""
    return calls.read_text().split() if calls.exists() else []


@pytest.fixture
def lineage_repo(make_repo: Callable[..., Path], calls: Path) -> Path:
    """The base branch at LEVEL 20 (selection mean 50 for ck0-ck2, 25 from ck3 on), and the
    lineage ck0 <- ck1 <- ... <- ck5 registered, each with a note."""
    config = MODELS_CONFIG.replace('models = ["alpha", "beta"]', 'model = "ck5"')
    repo = make_repo(
        {"eval.py": CHECKPOINT_EVALUATOR, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(20)},
        config=config,
    )
    assert run(repo, "model", "add", "ck0", "--note", "the released weights").exit_code == 0
    for parent, name in itertools.pairwise(CHECKPOINTS):
        added = run(repo, "model", "add", name, "--parent", parent, "--note", f"round {name[2:]} of LoRA")
        assert added.exit_code == 0, added.output
    return repo


def commit_skill(repo: Path, text: str, subject: str) -> str:
    write(repo, "SKILL.md", text)
    git(repo, "commit", "-qam", subject)
    return git(repo, "rev-parse", "HEAD").strip()


def state_of(repo: Path) -> str:
    """Every ref and what it points at: what an error must leave as it was."""
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)")


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_bisect_over_checkpoints_names_the_first_bad_one_within_the_bound(
    lineage_repo: Path, calls: Path
) -> None:
    result = run(lineage_repo, "bisect", "--good-model", "ck0", "--bad-model", "ck5", "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    n = len(CHECKPOINTS) - 1
    assert found["outcome"] == "found" and found["checkpoints"] == n
    assert (
        found["lineage"] == CHECKPOINTS and found["harness"] == git(lineage_repo, "rev-parse", "main").strip()
    )
    first = found["first_bad"]
    assert first["model"] == "ck3" and first["parent"] == "ck2" and first["note"] == "round 3 of LoRA"
    assert first["before"]["mean"] == 0.5 and first["after"]["mean"] == 0.25
    # Each step evaluated once, for its own label, within ceil(log2 N) + 2.
    ran = heard(calls)
    assert found["evaluations"] == len(ran) == len(set(ran)) <= math.ceil(math.log2(n)) + 2 == found["bound"]
    assert {step["model"] for step in found["steps"]} == set(ran)
    # Judged again, everything is on record: nothing runs, and the text names the checkpoint.
    text = run(lineage_repo, "bisect", "--good-model", "ck0").stdout  # --bad-model: [evaluator] model
    assert len(heard(calls)) == len(ran)
    assert "evaluated 0" in text
    assert "the first bad checkpoint is ck3, tuned from ck2 (round 3 of LoRA)" in text
    assert "first bad checkpoint: #3 ck3 <- ck2" in text


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_checkpoint_bisect_where_the_weights_are_not_the_regression(lineage_repo: Path) -> None:
    result = run(lineage_repo, "bisect", "--good-model", "ck0", "--bad-model", "ck2")
    assert result.exit_code == 1
    assert "bad model ck2 is not bad at harness" in result.stdout and "harness edit" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--good-model", "ck3", "--bad-model", "ck1"],
            "'ck3' is not an ancestor of 'ck1' in the checkpoint",
        ),
        (["--good-model", "ck9", "--bad-model", "ck1"], "model 'ck9' is not registered"),
        (["--good-model", "ck0", "--bad-model", "nope"], "model 'nope' is not registered"),
        (["--good-model", "ck2", "--bad-model", "ck2"], "the same model 'ck2'"),
        (["--good-model", "ck0", "--harness", "no-such-rev"], "no-such-rev"),
        (["--good", "main", "--good-model", "bad label"], "without whitespace"),
    ],
)
def test_bad_checkpoint_input_is_one_line_and_leaves_the_repository_as_it_was(
    lineage_repo: Path, calls: Path, args: list[str], message: str
) -> None:
    before = state_of(lineage_repo)
    line = one_error_line(run(lineage_repo, "bisect", *args))
    assert message in line
    assert state_of(lineage_repo) == before and heard(calls) == []


def test_the_two_axes_do_not_mix(lineage_repo: Path) -> None:
    for args, message in [
        (["--good", "main", "--harness", "main"], "--harness is for bisecting checkpoints"),
        (["--good-model", "ck0", "--bad", "main"], "--bad names a commit"),
        ([], "give --good REV (bisect commits) or --good-model LABEL (bisect checkpoints)"),
    ]:
        result = run(lineage_repo, "bisect", *args)
        assert result.exit_code == 2 and f"usage error: {message}" in result.stderr


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_weights_change_at_a_fixed_harness_is_reported_as_such(lineage_repo: Path, calls: Path) -> None:
    # good measured with ck0; then a harmless rewording; bad judged with ck5.
    good = git(lineage_repo, "rev-parse", "main").strip()
    assert run(lineage_repo, "eval", good, "--model", "ck0").exit_code == 0
    commit_skill(lineage_repo, skill(20).replace("Read the task.", "Read the task twice."), "Reword")
    result = run(lineage_repo, "bisect", "--good", good, "--json")
    assert result.exit_code == 1, result.output
    judged = json.loads(result.stdout)
    assert judged["outcome"] == "bad is good" and judged["model"] == "ck5"
    assert {step["model"] for step in judged["steps"]} == {"ck5"}
    change = judged["model_change"]
    assert change["old"] == "ck0" and change["new"] == "ck5" and change["found"] == "on record"
    assert (change["old_mean"], change["new_mean"], change["regressed"]) == (0.5, 0.25, True)
    assert change["lineage"] == ["ck5", "ck4", "ck3", "ck2", "ck1", "ck0"]
    assert "the regression came from the weights change ck0 -> ck5" in judged["message"]
    text = run(lineage_repo, "bisect", "--good", good).stdout
    assert "at that fixed harness, model ck0 -> ck5 moves the selection mean from 50.0 to 25.0" in text
    assert f"harnessgit bisect --good-model ck0 --bad-model ck5 --harness {good[:12]}" in text


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_given_good_model_is_evaluated_for_the_model_step(lineage_repo: Path, calls: Path) -> None:
    good = git(lineage_repo, "rev-parse", "main").strip()
    commit_skill(lineage_repo, skill(20).replace("Read the task.", "Read the task twice."), "Reword")
    result = run(lineage_repo, "bisect", "--good", good, "--good-model", "ck2", "--json")
    judged = json.loads(result.stdout)
    change = judged["model_change"]
    assert change["found"] == "given" and change["source"] == "evaluated" and change["regressed"]
    assert judged["evaluations"] == 2 and sorted(heard(calls)) == ["ck2", "ck5", "ck5"]
    # Without a model step on record, bisect says nothing about weights.
    plain = json.loads(run(lineage_repo, "bisect", "--good", good, "--bad-model", "ck1", "--json").stdout)
    assert plain["model_change"] is None and plain["model"] == "ck1"


@pytest.mark.slow
def test_a_harness_edit_under_a_fixed_model_is_still_found(lineage_repo: Path, calls: Path) -> None:
    good = git(lineage_repo, "rev-parse", "main").strip()
    commit_skill(lineage_repo, skill(20, "Be brief."), "Be brief")
    broke = commit_skill(lineage_repo, skill(10, "Be brief."), "Lower the level")
    commit_skill(lineage_repo, skill(10, "Be brief.", "Cite."), "Cite")
    result = run(lineage_repo, "bisect", "--good", good, "--bad-model", "ck1", "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["first_bad"]["commit"] == broke and found["model_change"] is None
    assert set(heard(calls)) == {"ck1"}
    # Measured with ck0 at good and judged with ck5 now: the harness edit and the
    # weights change are both found, each on its own.
    assert run(lineage_repo, "eval", good, "--model", "ck0").exit_code == 0
    both = json.loads(run(lineage_repo, "bisect", "--good", good, "--json").stdout)
    assert both["outcome"] == "found" and both["first_bad"]["commit"] == broke
    assert both["model_change"]["regressed"] and "is bad on its own too" in both["message"]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_checkpoints_are_judged_on_instances_too(lineage_repo: Path) -> None:
    # At LEVEL 20, s-15 is solved until ck3's weights drop the level to 10; s-25 never is.
    result = run(
        lineage_repo, "bisect", "--good-model", "ck0", "--bad-model", "ck5", "--instance", "s-15", "--json"
    )
    found = json.loads(result.stdout)
    assert found["first_bad"]["model"] == "ck3" and found["first_bad"]["after"]["failing"] == ["s-15"]
    assert found["description"] == "instance s-15 fails (scores under 1)"
    never = run(lineage_repo, "bisect", "--good-model", "ck0", "--bad-model", "ck5", "--instance", "s-25")
    assert never.exit_code == 1 and "good model ck0 is itself bad" in never.stdout
