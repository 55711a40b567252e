"""`harnessgit frontier --type` against GEPA's own front for each of GEPA's frontier
types (issue 29): real gepa 0.1.4 runs with an adapter that gives ``objective_scores``,
recorded by `GitRecorder` through `GitRecorder.watch`, and harnessgit's frontier from
the record compared with ``find_dominator_programs`` on GEPA's final state."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from gepa import api, gepa_utils
from gepa.core.adapter import EvaluationBatch

from harnessgit import layout
from harnessgit.cli import cli
from harnessgit.integrations.gepa import GitRecorder
from harnessgit.records import EvalRecord
from harnessgit.store import Store
from tests.integrations.gepa_task import SEED, TRAIN, VAL, WordAdapter, component, reflection_lm
from tests.integrations.test_gepa_recorder import COMPONENTS, Quiet, gepa_repo

__all__ = ["gepa_repo"]


class ObjectivesAdapter(WordAdapter):
    """Three objectives per example: the word found (the score), brevity (the same for
    every example: shorter candidates score more) and how early in its component the
    word comes. Eighths and sixteenths: sums of them are exact, so the candidates' means
    tie as the tests intend, whatever the order of the sum."""

    def evaluate(
        self, batch: list[dict[str, str]], candidate: dict[str, str], capture_traces: bool = False
    ) -> EvaluationBatch[dict[str, Any], Any]:
        result = super().evaluate(batch, candidate, capture_traces)
        length = sum(len(text) for text in candidate.values())
        brevity = max(0.0, 1.0 - min(length // 16, 16) / 16)
        objectives = []
        for example, score in zip(batch, result.scores, strict=True):
            text = candidate[component(example)]
            place = text.find(example["word"])
            early = 0.0 if place < 0 else 1.0 - min(8 * place // max(len(text), 1), 7) / 8
            objectives.append({"found": score, "brevity": brevity, "early": early})
        return EvaluationBatch(
            outputs=result.outputs, scores=result.scores, trajectories=result.trajectories,
            objective_scores=objectives,
        )  # fmt: skip


class Final:
    def __init__(self) -> None:
        self.state: Any = None

    def on_optimization_end(self, event: Any) -> None:
        self.state = event["final_state"]


class BatchObjectivesAdapter(ObjectivesAdapter):
    """The same task with ``batch_evaluate``, which GEPA then calls for valset evaluations."""

    def batch_evaluate(self, items: list[tuple[dict[str, str], list[dict[str, str]]]]) -> list[Any]:
        return [self.evaluate(batch, candidate, capture_traces=True) for candidate, batch in items]


def optimize(
    repo: Path, frontier_type: str, *, watch: bool = True, adapter: ObjectivesAdapter | None = None, **kw: Any
) -> tuple[GitRecorder, Any]:
    final = Final()
    recorder = GitRecorder(str(repo), COMPONENTS, adapter="objectives", valset=VAL, evaluator="repository")
    adapter = adapter or ObjectivesAdapter()
    optimize_with: Any = api.optimize  # gepa's annotations want its own protocol classes
    optimize_with(
        seed_candidate=dict(SEED), trainset=TRAIN, valset=VAL,
        adapter=recorder.watch(adapter) if watch else adapter,
        reflection_lm=reflection_lm, max_metric_calls=300, reflection_minibatch_size=3, seed=7,
        callbacks=[recorder, final], logger=Quiet(), frontier_type=frontier_type, **kw,
    )  # fmt: skip
    recorder.close()
    assert recorder.error is None
    return recorder, final.state


@pytest.mark.parametrize(
    ("frontier_type", "how"),
    [
        ("instance", {}),
        ("objective", {}),
        ("hybrid", {}),
        ("cartesian", {}),
        # GEPA's cache answers val ids with train examples' evaluations (the same ids):
        # the recorder reads what GEPA used from the cache
        ("cartesian", {"cache_evaluation": True}),
        ("hybrid", {"adapter": BatchObjectivesAdapter()}),
    ],
    ids=["instance", "objective", "hybrid", "cartesian", "cartesian-cached", "hybrid-batch"],
)
def test_frontier_of_each_type_is_gepas(gepa_repo: Path, frontier_type: str, how: dict[str, Any]) -> None:
    recorder, state = optimize(gepa_repo, frontier_type, **how)
    assert state.frontier_type == frontier_type and len(state.program_candidates) >= 4
    # GEPA's front after its removal of dominated programs, and each program's weight
    # in its parent sampling (the fronts it leads)
    remove: Any = gepa_utils.remove_dominated_programs  # unannotated in gepa
    pruned = remove(state.get_pareto_front_mapping(), state.per_program_tracked_scores)
    weights = Counter(p for front in pruned.values() for p in front)
    assert len(set(recorder.commits.values())) == len(state.program_candidates), "one commit per program"

    shown = CliRunner().invoke(cli, ["-C", str(gepa_repo), "frontier", "--type", frontier_type, "--json"])
    assert shown.exit_code == 0, shown.output
    view = json.loads(shown.output)
    assert view["frontier_type"] == frontier_type and view["waiting"] == []
    got = {view["commits"][row["candidate"]]: row["weight"] for row in view["rows"]}
    assert got == {recorder.commits[p]: n for p, n in weights.items()}
    assert len(view["dominated"]) + len(view["never_best"]) + len(got) == len(state.program_candidates)


def test_gate_frontier_type_sets_the_default_for_frontier_and_status(gepa_repo: Path) -> None:
    """``[gate] frontier_type`` is what `frontier` and `status` use without ``--type``;
    here every GEPA program is the base or a live candidate, so `status`'s pool is
    `frontier`'s."""
    optimize(gepa_repo, "objective")
    config = gepa_repo / "harnessgit.toml"
    config.write_text(config.read_text() + '\n[gate]\nfrontier_type = "objective"\n')
    runner = CliRunner()

    def frontier(*options: str) -> Any:
        shown = runner.invoke(cli, ["-C", str(gepa_repo), "frontier", *options, "--json"])
        return json.loads(shown.output)

    view, typed, by_instance = frontier(), frontier("--type", "objective"), frontier("--type", "instance")
    assert view["frontier_type"] == "objective" and view["rows"] == typed["rows"]
    assert view["rows"] != by_instance["rows"], "the task should give the two types different fronts"
    on = {view["commits"][row["candidate"]] for row in view["rows"]}
    status = json.loads(runner.invoke(cli, ["-C", str(gepa_repo), "status", "--json"]).output)
    flags = {c["commit"]: c["on_frontier"] for c in status["candidates"]}
    assert flags == {commit: commit in on for commit in flags} and set(flags.values()) == {True, False}
    text = runner.invoke(cli, ["-C", str(gepa_repo), "frontier"]).output
    assert "fronts, frontier type objective" in text and "fronts led" in text
    config.write_text(config.read_text().replace('"objective"', '"pareto"'))
    refused = runner.invoke(cli, ["-C", str(gepa_repo), "frontier"])
    assert refused.exit_code == 3 and "gate.frontier_type: must be one of" in refused.output
    assert len(refused.output.strip().splitlines()) == 1


@pytest.mark.parametrize("cached", [False, True], ids=["plain", "cached"])
def test_each_example_objective_scores_are_gepas(gepa_repo: Path, cached: bool) -> None:
    """The eval records hold each valset example's objective scores, and their means
    are GEPA's per-program objective means."""
    recorder, state = optimize(gepa_repo, "hybrid", cache_evaluation=cached)
    with Store.discover(gepa_repo) as store:
        evals = store.notes.records(layout.NOTES_EVALS)
    for idx, means in enumerate(state.prog_candidate_objective_scores):
        (record,) = [r for r in evals[recorder.commits[idx]] if isinstance(r, EvalRecord)]
        assert record.objective_scores is not None and len(record.objective_scores) == len(VAL)
        rows = [row for row in record.objective_scores if row is not None]
        for name, mean in means.items():
            assert sum(row[name] for row in rows) / len(rows) == mean
    seed = ObjectivesAdapter().evaluate(VAL, dict(SEED))
    (record,) = [r for r in evals[recorder.commits[0]] if isinstance(r, EvalRecord)]
    assert record.objective_scores == list(seed.objective_scores or [])


def test_with_gepas_cache_only_the_seed_needs_watch(gepa_repo: Path) -> None:
    """GEPA's evaluation cache holds what every added program's valset evaluation used,
    the seed's excepted (GEPA evaluates it outside the cache)."""
    recorder, state = optimize(gepa_repo, "objective", watch=False, cache_evaluation=True)
    with Store.discover(gepa_repo) as store:
        evals = store.notes.records(layout.NOTES_EVALS)
    for idx, means in enumerate(state.prog_candidate_objective_scores):
        (record,) = [r for r in evals[recorder.commits[idx]] if isinstance(r, EvalRecord)]
        if idx == 0:
            assert record.objective_scores is None
            continue
        assert record.objective_scores is not None
        for name, mean in means.items():
            assert sum(row[name] for row in record.objective_scores if row) / len(VAL) == mean


def test_objective_frontier_needs_objective_scores(gepa_repo: Path) -> None:
    """Without `watch` GEPA's valset objective scores reach no callback: the record has
    none, and the objectives' frontier says so on one line (the instance one works)."""
    optimize(gepa_repo, "objective", watch=False)
    runner = CliRunner()
    refused = runner.invoke(cli, ["-C", str(gepa_repo), "frontier", "--type", "objective"])
    assert refused.exit_code == 3
    assert "needs objective scores on every selection instance" in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    assert runner.invoke(cli, ["-C", str(gepa_repo), "frontier"]).exit_code == 0
    bad = runner.invoke(cli, ["-C", str(gepa_repo), "frontier", "--type", "pareto"])
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1


def test_watch_needs_the_valset(gepa_repo: Path) -> None:
    recorder = GitRecorder(str(gepa_repo), COMPONENTS)
    with pytest.raises(Exception, match="watch needs the valset"):
        recorder.watch(ObjectivesAdapter())
    recorder.close()
