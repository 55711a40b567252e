"""`harnessgit import gepa RUN_DIR`: a real GEPA run (gepa's own engine, the deterministic
task of tests/gepa_fixtures.py, merges on) imported; its programs, parents, scores and
Pareto front equal GEPA's."""

from __future__ import annotations

import importlib
import json
import pickle
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from gepa import optimize
from gepa.core.state import GEPAState
from gepa.gepa_utils import find_dominator_programs

from harnessgit import layout
from harnessgit.records import EvalRecord
from harnessgit.store import Store
from tests.cli.runner import one_error_line, run
from tests.conftest import git, snapshot
from tests.gepa_fixtures import ADAPTER_CONFIG

COMPONENTS = ["--component", "system_prompt=prompts/system.md", "--component", "style=prompts/style.md"]


class Quiet:
    """GEPA's logger, silenced: it prints every iteration."""

    def log(self, message: str) -> None:
        pass


@pytest.fixture
def gepa_run(repo: Path, tmp_path: Path) -> tuple[Path, GEPAState[Any, Any]]:
    """GEPA run on the repository's task (merges on), into a run directory."""
    sys.path.insert(0, str(repo))
    task = importlib.import_module("task.gepa_task")
    run_dir = tmp_path / "gepa-run"
    optimize(
        seed_candidate=task.SEED,
        trainset=task.TRAINSET,
        valset=task.VALSET,
        adapter=task.KeywordAdapter(),
        reflection_lm=task.reflection_lm,
        max_metric_calls=150,
        reflection_minibatch_size=2,
        use_merge=True,
        run_dir=str(run_dir),
        seed=0,
        logger=Quiet(),
    )
    with (run_dir / "gepa_state.bin").open("rb") as handle:
        state: GEPAState[Any, Any] = GEPAState.__new__(GEPAState)
        state.__dict__.update(pickle.load(handle))
    return run_dir, state


def imported(repo: Path, output: str) -> dict[int, str]:
    """GEPA program index -> commit, from `import gepa --json`."""
    return {p["program"]: p["commit"] for p in json.loads(output)["programs"]}


def texts(repo: Path, commit: str) -> dict[str, str]:
    return {
        "system_prompt": git(repo, "show", f"{commit}:prompts/system.md"),
        "style": git(repo, "show", f"{commit}:prompts/style.md"),
    }


def eval_records(repo: Path) -> list[EvalRecord]:
    with Store.discover(repo) as store:
        notes = store.notes.records(layout.NOTES_EVALS)
    return [r for records in notes.values() for r in records if isinstance(r, EvalRecord)]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_an_imported_run_equals_gepas(repo: Path, gepa_run: tuple[Path, GEPAState[Any, Any]]) -> None:
    run_dir, state = gepa_run
    assert any(len(parents) == 2 for parents in state.parent_program_for_candidate)  # a merge happened
    result = run(repo, "import", "gepa", str(run_dir), "--trust-pickle", "--same-evaluator", "--json")
    assert result.exit_code == 0, result.output
    commits = imported(repo, result.output)
    assert len(commits) == len(state.program_candidates)
    assert commits[0] == git(repo, "rev-parse", "main").strip()  # the seed is main's harness
    for index, candidate in enumerate(state.program_candidates):
        assert texts(repo, commits[index]) == candidate
        parents = git(repo, "log", "-1", "--format=%P", commits[index]).split()
        expected = [commits[p] for p in state.parent_program_for_candidate[index] if p is not None]
        assert parents == (expected if index else parents)
    # Every program's valset scores, per example, under the evaluator's key.
    by_commit: dict[str, dict[str, float]] = {}
    for record in eval_records(repo):
        assert record.split == "selection" and record.model == "sim-1"
        by_commit.setdefault(record.commit, {}).update(zip(record.instances, record.scores, strict=True))
    for index, scores in enumerate(state.prog_candidate_val_subscores):
        tree_twin = [
            c for i, c in commits.items() if i < index and texts(repo, c) == texts(repo, commits[index])
        ]
        got = by_commit.get(commits[index]) or by_commit[tree_twin[0]]  # same texts: scored once
        assert got == {str(example): score for example, score in scores.items()}
    # harnessgit's frontier is GEPA's final Pareto front.
    frontier = json.loads(run(repo, "frontier", "--json").output)
    front_commits = {frontier["commits"][row["candidate"]] for row in frontier["rows"]}
    gepa_front = find_dominator_programs(state.get_pareto_front_mapping(), state.per_program_tracked_scores)

    # Programs with the same texts are one harness to harnessgit (the frontier counts a
    # harness text once, its first program): compare the fronts' texts.
    def text_set(programs: Iterable[int]) -> set[frozenset[tuple[str, str]]]:
        return {frozenset(texts(repo, commits[program]).items()) for program in programs}

    ours = [program for program, commit in commits.items() if commit in front_commits]
    assert text_set(ours) == text_set(gepa_front)
    assert len(gepa_front) >= 2
    # The adapter run by harnessgit agrees with GEPA's scores: its cache holds them already.
    best = commits[max(range(len(commits)), key=lambda i: state.per_program_tracked_scores[i])]
    assert json.loads(run(repo, "eval", best, "--json").output)["cached"] == 6
    again = run(repo, "eval", best, "--no-cache", "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["summary"]["mean"] == max(state.per_program_tracked_scores)
    # GEPA's best passes the gate on its recorded scores, and merges.
    name = json.loads(result.output)["programs"][list(commits.values()).index(best)]["candidate"]
    gated = run(repo, "gate", name)
    assert gated.exit_code == 0, gated.output
    assert run(repo, "merge", name).exit_code == 0
    assert texts(repo, "main") == texts(repo, best)


def test_importing_twice_creates_nothing(repo: Path, gepa_run: tuple[Path, GEPAState[Any, Any]]) -> None:
    run_dir, _state = gepa_run
    first = run(repo, "import", "gepa", str(run_dir), "--trust-pickle", *COMPONENTS)
    assert first.exit_code == 0, first.output
    before = snapshot(repo)
    second = run(repo, "import", "gepa", str(run_dir), "--trust-pickle", *COMPONENTS, "--json")
    assert second.exit_code == 0, second.output
    assert snapshot(repo) == before
    done = json.loads(second.output)
    assert done["created"] == 0 and done["scores_written"] == 0


def test_without_trust_the_json_files_give_texts_and_parents_only(
    repo: Path, gepa_run: tuple[Path, GEPAState[Any, Any]]
) -> None:
    run_dir, state = gepa_run
    result = run(repo, "import", "gepa", str(run_dir), *COMPONENTS)
    assert result.exit_code == 0, result.output
    assert "valset scores (read only from the pickle)" in result.output
    assert "the texts of proposals GEPA rejected" in result.output
    assert eval_records(repo) == []
    trusted = run(repo, "import", "gepa", str(run_dir), *COMPONENTS, "--trust-pickle", "--json")
    commits = imported(repo, trusted.output)
    assert json.loads(trusted.output)["created"] == 0  # the same programs, found again
    assert json.loads(trusted.output)["scores_written"] > 0  # now with their scores
    for index, parents in enumerate(state.parent_program_for_candidate[1:], start=1):
        logged = git(repo, "log", "-1", "--format=%P", commits[index]).split()
        assert logged == [commits[p] for p in parents if p is not None]


def test_by_default_scores_are_under_the_imports_own_fingerprint(
    repo: Path, gepa_run: tuple[Path, GEPAState[Any, Any]]
) -> None:
    run_dir, _state = gepa_run
    result = run(repo, "import", "gepa", str(run_dir), "--trust-pickle", "--model", "gpt-x", "--json")
    assert result.exit_code == 0, result.output  # the components come from [evaluator] components
    done = json.loads(result.output)
    assert done["scores_as"] == "import" and done["model"] == "gpt-x"
    assert {(r.fingerprint, r.model) for r in eval_records(repo)} == {(done["fingerprint"], "gpt-x")}
    # Not the evaluator's: `eval` of the seed runs the adapter rather than reuse them.
    evaluated = run(repo, "eval", "main", "--json")
    assert json.loads(evaluated.output)["evaluated"] == 6


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere"], "nowhere: no such directory"),
        (["prompts"], "is not a GEPA run directory (no gepa_state.bin nor candidates.json in it)"),
        (
            ["RUN", "--trust-pickle", "--component", "system_prompt=prompts/system.md"],
            "map GEPA's component style to files: --component style=PATH",
        ),
        (
            [
                "RUN",
                "--trust-pickle",
                "--component",
                "style=prompts/style.md",
                "--component",
                "system_prompt=x.md",
            ],
            "--component system_prompt=x.md: not a harness file",
        ),
        (
            ["RUN", "--trust-pickle", *COMPONENTS, "--component", "tools=prompts/tools.md"],
            "--component tools: the run has no such component",
        ),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    repo: Path, gepa_run: tuple[Path, GEPAState[Any, Any]], args: list[str], message: str
) -> None:
    run_dir, _state = gepa_run
    (repo / "harnessgit.toml").write_text(ADAPTER_CONFIG.split("components =")[0] + 'model = "sim-1"\n')
    git(repo, "commit", "-qam", "no component map")
    before = snapshot(repo)
    args = [str(run_dir) if a == "RUN" else str(repo / a) if a in ("nowhere", "prompts") else a for a in args]
    line = one_error_line(run(repo, "import", "gepa", *args))
    assert message in line
    assert snapshot(repo) == before


def test_a_damaged_pickle_is_one_line(repo: Path, gepa_run: tuple[Path, GEPAState[Any, Any]]) -> None:
    run_dir, _state = gepa_run
    (run_dir / "gepa_state.bin").write_bytes(b"not a pickle")
    before = snapshot(repo)
    line = one_error_line(run(repo, "import", "gepa", str(run_dir), "--trust-pickle"))
    assert "gepa_state.bin: cannot unpickle it: UnpicklingError" in line
    assert snapshot(repo) == before


def test_the_import_message_does_not_call_the_per_example_fronts_gepas_pareto_front() -> None:
    from harnessgit.integrations.gepa.import_render import render_import
    from harnessgit.integrations.gepa.importer import GepaImport

    result = GepaImport(
        run_dir="run", source="pickle", programs=[], created=0, scores_written=0, fingerprint=None,
        model="m", scores_as="import", front=[0, 1, 2], rejected=0,
    )  # fmt: skip
    text = render_import(result)
    assert "programs best on at least one valset example" in text and "not its Pareto front" in text
    assert "fronts hold programs" not in text
