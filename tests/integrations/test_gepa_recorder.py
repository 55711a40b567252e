"""`GitRecorder` on real GEPA runs (gepa 0.1.4): the task of tests/integrations/gepa_task.py."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gepa
import pytest
from gepa.gepa_utils import find_dominator_programs

from harnessgit import layout
from harnessgit.api import Repository
from harnessgit.integrations.gepa import GitRecorder, content_instance_id
from harnessgit.records import EvalRecord, IterationRecord, ProposalRecord, RetireRecord, RunRecord
from harnessgit.store import Store
from tests.conftest import CONFIG, git
from tests.integrations.gepa_task import SEED, TRAIN, VAL, WordAdapter, reflection_lm

IDS = [content_instance_id(i, example) for i, example in enumerate(VAL)]
# The repository's own evaluator scores as the adapter does: an in-process function.
GRADER = f"""\
import os

WORDS = {[e["word"] for e in VAL]!r}

def evaluate(request):
    if os.environ.get("CALLS_FILE"):
        with open(os.environ["CALLS_FILE"], "a") as handle:
            handle.write(request.commit + "\\n")
    text = request.harness["prompts/system.md"]
    for instance in request.instances:
        word = WORDS[int(instance.split("-")[0])]
        yield {{"instance": instance, "score": 1.0 if word in text else 0.0}}
"""
PYTHON_CONFIG = CONFIG.replace('command = ["python3", "eval.py"]', 'python = "grader.score:evaluate"')
COMPONENTS = {"system_prompt": "prompts/system.md", "style": "prompts/style.md"}


class Counter:
    """Counts what GEPA proposed and keeps its final state."""

    def __init__(self) -> None:
        self.proposals = 0
        self.state: Any = None

    def on_proposal_end(self, event: Any) -> None:
        self.proposals += 1

    def on_merge_attempted(self, event: Any) -> None:
        self.proposals += 1

    def on_optimization_end(self, event: Any) -> None:
        self.state = event["final_state"]


@pytest.fixture(autouse=True)
def forget_grader() -> Iterator[None]:
    path = list(sys.path)
    yield
    for name in [name for name in sys.modules if name == "grader" or name.startswith("grader.")]:
        del sys.modules[name]
    sys.path[:] = path


@pytest.fixture
def gepa_repo(make_repo: Callable[..., Path]) -> Path:
    import json

    return make_repo(
        {
            "prompts/system.md": SEED["system_prompt"],
            "prompts/style.md": SEED["style"],
            "harnessgit.toml": PYTHON_CONFIG,
            "grader/__init__.py": "",
            "grader/score.py": GRADER,
            "splits.json": json.dumps({"selection": IDS, "train": ["t1"], "test": ["x1"]}),
        }
    )


class Quiet:
    def log(self, message: str) -> None:
        pass


def run(
    callbacks: list[Any] | None, *, budget: int = 300, adapter: WordAdapter | None = None, **kw: Any
) -> Any:
    return gepa.optimize(
        seed_candidate=dict(SEED),
        trainset=TRAIN,
        valset=VAL,
        adapter=adapter or WordAdapter(),
        reflection_lm=reflection_lm,
        max_metric_calls=budget,
        reflection_minibatch_size=3,
        seed=7,
        callbacks=callbacks,
        logger=Quiet(),
        **kw,
    )


def recorded(repo: Path) -> tuple[list[ProposalRecord], dict[str, list[EvalRecord]], list[Any]]:
    with Store.discover(repo) as store:
        evidence = store.notes(layout.NOTES_EVIDENCE)
        evals = store.notes(layout.NOTES_EVALS)
    proposals = [r for records in evidence.values() for r in records if isinstance(r, ProposalRecord)]
    others = [r for records in evidence.values() for r in records if not isinstance(r, ProposalRecord)]
    by_commit = {c: [r for r in records if isinstance(r, EvalRecord)] for c, records in evals.items()}
    return proposals, by_commit, others


def test_recording_does_not_change_the_run(gepa_repo: Path) -> None:
    plain = run(None)
    recorder = GitRecorder(str(gepa_repo), COMPONENTS, adapter=WordAdapter(), valset=VAL)
    with_recorder = run([recorder])
    recorder.close()
    assert recorder.error is None
    assert with_recorder.candidates == plain.candidates
    assert with_recorder.parents == plain.parents
    assert with_recorder.val_subscores == plain.val_subscores
    assert with_recorder.total_metric_calls == plain.total_metric_calls


def test_every_proposal_and_valset_score_is_recorded(gepa_repo: Path) -> None:
    counter = Counter()
    recorder = GitRecorder(
        str(gepa_repo), COMPONENTS, adapter=WordAdapter(), valset=VAL, evaluator="repository"
    )
    result = run([counter, recorder])
    recorder.close()
    assert recorder.error is None
    proposals, evals, others = recorded(gepa_repo)
    # one candidate commit per proposal GEPA made, kept or not; the seed is main itself
    assert counter.proposals == len(proposals) == recorder.recorded
    kept = len(result.candidates) - 1
    assert 0 < kept < len(proposals), "the run should both keep and reject proposals"
    retired = [r for r in others if isinstance(r, RetireRecord)]
    assert len(retired) == len(proposals) - kept
    assert all(r.detail.startswith("GEPA: ") for r in retired)
    # eval records equal GEPA's valset scores, for every program, on its commit
    main = git(gepa_repo, "rev-parse", "main").strip()
    assert recorder.commits[0] == main
    for idx, subscores in enumerate(result.val_subscores):
        records = evals[recorder.commits[idx]]
        got = {i: s for r in records for i, s in zip(r.instances, r.scores, strict=True)}
        assert got == {IDS[val_id]: score for val_id, score in subscores.items()}
    iterations = [r for r in others if isinstance(r, IterationRecord)]
    assert {r.outcome for r in iterations} >= {"accepted", "rejected"}
    assert all(r.optimizer == "gepa" for r in iterations)
    (run_record,) = [r for r in others if isinstance(r, RunRecord)]
    assert run_record.seed == 7 and run_record.budget == 300
    assert run_record.metric_calls == result.total_metric_calls
    assert run_record.best == recorder.commits[result.best_idx]
    assert run_record.stop_reason.startswith("budget: ")


def test_frontier_gate_and_merge_of_gepa_best(gepa_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the repository's evaluator fingerprint, the gate and the frontier read
    GEPA's own valset scores: nothing is evaluated again."""
    calls = gepa_repo.parent / "calls"
    monkeypatch.setenv("CALLS_FILE", str(calls))
    counter = Counter()
    recorder = GitRecorder(
        str(gepa_repo), COMPONENTS, adapter=WordAdapter(), valset=VAL, evaluator="repository"
    )
    result = run([counter, recorder])
    recorder.close()
    state = counter.state
    expected = find_dominator_programs(state.get_pareto_front_mapping(), state.per_program_tracked_scores)
    with Repository.open(gepa_repo) as repo:
        view = repo.frontier()
        assert view.waiting == [] and view.incomparable == []
        assert sorted(view.members[m].commit for m in view.frontier.members) == sorted(
            recorder.commits[idx] for idx in expected
        )
        best = recorder.names[recorder.commits[result.best_idx]]
        outcome = repo.merge(best, allow_small=True)
    assert not calls.exists()  # the gate paired GEPA's own scores: nothing re-evaluated
    assert outcome.gate is not None
    assert outcome.merge is not None and outcome.gate.passed, (
        outcome.gate.reasons,
        outcome.gate.base_mean,
        outcome.gate.candidate_mean,
        outcome.gate.p_value,
        outcome.gate.n,
    )
    assert git(gepa_repo, "show", "main:prompts/system.md") == result.best_candidate["system_prompt"]
    assert git(gepa_repo, "rev-parse", "main^2").strip() == recorder.commits[result.best_idx]
