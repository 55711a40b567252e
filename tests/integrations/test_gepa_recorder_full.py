"""What GEPA reports beyond candidates and scores, on record (issue 29): each proposal's
reflection cost and tokens, per-example feedback on the valset, the run's configuration,
GEPA's Pareto front as it moved and its checkpoints. Real gepa 0.1.4 on the task of
tests/integrations/gepa_task.py; the reflection LM is the task's simulated one, wrapped
in a stand-in for ``gepa.lm.LM``'s counters (simulated cost and tokens: no model runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gepa
from click.testing import CliRunner
from gepa.core.adapter import EvaluationBatch

from harnessgit import layout
from harnessgit.cli import cli
from harnessgit.integrations.gepa import GitRecorder
from harnessgit.records import EvalRecord, EvidenceRecord, IterationRecord, ProposalRecord
from harnessgit.store import Store
from tests.integrations.gepa_task import SEED, TRAIN, VAL, WordAdapter, reflection_lm
from tests.integrations.test_gepa_recorder import COMPONENTS, Quiet, gepa_repo

__all__ = ["gepa_repo"]

PRICE = 0.000002  # simulated USD per token


class MeteredLM:
    """The task's reflection LM with ``gepa.lm.LM``'s running totals (simulated: a
    token is 4 characters, at `PRICE`)."""

    def __init__(self) -> None:
        self.total_cost, self.total_tokens_in, self.total_tokens_out = 0.0, 0, 0
        self.replies: list[tuple[int, int]] = []  # (tokens in, tokens out) per call

    def __call__(self, prompt: str | list[dict[str, Any]]) -> str:
        reply = reflection_lm(prompt)
        tokens_in, tokens_out = len(str(prompt)) // 4, len(reply) // 4
        self.total_tokens_in += tokens_in
        self.total_tokens_out += tokens_out
        self.total_cost += (tokens_in + tokens_out) * PRICE
        self.replies.append((tokens_in, tokens_out))
        return reply


class FeedbackAdapter(WordAdapter):
    """Outputs that carry feedback, as a GEPA metric's often do."""

    def evaluate(
        self, batch: list[dict[str, str]], candidate: dict[str, str], capture_traces: bool = False
    ) -> EvaluationBatch[dict[str, Any], Any]:
        result = super().evaluate(batch, candidate, capture_traces)
        outputs = [
            {"answer": out, "feedback": "found it" if score else f"missing {example['word']}"}
            for out, score, example in zip(result.outputs, result.scores, batch, strict=True)
        ]
        return EvaluationBatch(outputs=outputs, scores=result.scores, trajectories=result.trajectories)


class Fronts:
    def __init__(self) -> None:
        self.state: Any = None

    def on_optimization_end(self, event: Any) -> None:
        self.state = event["final_state"]


def evidence_items(store: Store, blob: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in store.objects.read_blob(blob).decode().splitlines() if line]


def test_cost_feedback_configuration_and_fronts_are_recorded(gepa_repo: Path, tmp_path: Path) -> None:
    lm, fronts = MeteredLM(), Fronts()
    settings = {"max_metric_calls": 300, "reflection_minibatch_size": 3, "reflection_lm": "simulated"}
    recorder = GitRecorder(
        str(gepa_repo),
        COMPONENTS,
        adapter=FeedbackAdapter(),
        valset=VAL,
        reflection_lm=lm,
        settings=settings,
        evaluator="repository",
    )
    result = gepa.optimize(
        seed_candidate=dict(SEED),
        trainset=TRAIN,
        valset=VAL,
        adapter=FeedbackAdapter(),
        reflection_lm=lm,
        max_metric_calls=300,
        reflection_minibatch_size=3,
        seed=7,
        callbacks=[recorder, fronts],
        logger=Quiet(),
        run_dir=str(tmp_path / "run"),
    )
    recorder.close()
    with Store.discover(gepa_repo) as store:
        evidence = store.notes.records(layout.NOTES_EVIDENCE)
        evals = store.notes.records(layout.NOTES_EVALS)
        records = [r for rs in evidence.values() for r in rs]
        iterations = [
            r for r in records if isinstance(r, IterationRecord) and r.move == "reflect" and r.commit
        ]
        # each reflective proposal's cost is the LM's for its one call
        assert iterations and len(lm.replies) >= len(iterations)
        assert all(r.cost_usd is not None and r.cost_usd > 0 for r in iterations)
        assert sum(r.cost_usd or 0 for r in iterations) <= lm.total_cost + 1e-9
        usages = []
        for r in records:
            if isinstance(r, EvidenceRecord):
                usages += [i for i in evidence_items(store, r.blob) if i.get("kind") == "reflection-usage"]
        assert {(u["tokens_in"], u["tokens_out"]) for u in usages} <= set(lm.replies)
        assert len(usages) == len(lm.replies)
        # the valset feedback `review` prints, next to the scores
        said = {}
        for r in (r for rs in evals.values() for r in rs if isinstance(r, EvalRecord) and r.evidence):
            said.update(
                {i["instance"]: (i["score"], i["feedback"]) for i in evidence_items(store, r.evidence)}
            )
        assert said and all(text == ("found it" if score else text) for score, text in said.values())
        assert any(text.startswith("missing ") for score, text in said.values() if not score)
        # the run: GEPA's configuration, the caller's settings, the fronts, the checkpoints
        (run_blob,) = [r for r in records if isinstance(r, EvidenceRecord) and r.label == "gepa-run"]
        items = evidence_items(store, run_blob.blob)
    run_info = items[0]
    assert run_info["kind"] == "gepa-run" and run_info["run"] == recorder.run
    assert run_info["config"]["seed"] == 7 and run_info["settings"] == settings
    assert run_info["frontier_type"] == "instance" and run_info["valset_size"] == len(VAL)
    moves = [i for i in items if i["kind"] == "pareto-front"]
    final = sorted({p for programs in fronts.state.get_pareto_front_mapping().values() for p in programs})
    assert moves and moves[-1]["front"] == final
    saved = [i for i in items if i["kind"] == "checkpoint"]
    assert saved and all(i["run_dir"] == str(tmp_path / "run") for i in saved)
    # `review` of GEPA's best prints the feedback GEPA's outputs carried (the seed's side
    # has none: GEPA reports no outputs for the seed's valset evaluation)
    best = recorder.names[recorder.commits[result.best_idx]]
    shown = CliRunner().invoke(cli, ["-C", str(gepa_repo), "review", best])
    assert "feedback: - -> found it" in shown.output, shown.output


def test_optimize_anything_is_recorded(gepa_repo: Path) -> None:
    """`optimize_anything` (gepa's declarative API) with the recorder among its
    config's callbacks: one commit per proposal, GEPA's valset scores on record."""
    from gepa.optimize_anything import EngineConfig, GEPAConfig, ReflectionConfig, optimize_anything

    from harnessgit.integrations.gepa import content_instance_id
    from tests.integrations.gepa_task import component

    def evaluate(candidate: dict[str, str], example: dict[str, str]) -> tuple[float, dict[str, str]]:
        found = example["word"] in candidate[component(example)]
        return (1.0 if found else 0.0), {"Feedback": "ok" if found else f"missing word {example['word']}"}

    watch = Watch()
    recorder = GitRecorder(str(gepa_repo), COMPONENTS, adapter="optimize_anything", valset=VAL)
    config = GEPAConfig(
        engine=EngineConfig(max_metric_calls=200, seed=7),
        reflection=ReflectionConfig(reflection_lm=reflection_lm, reflection_minibatch_size=3),
        callbacks=[watch, recorder],
    )
    result = optimize_anything(dict(SEED), evaluator=evaluate, dataset=TRAIN, valset=VAL, config=config)
    recorder.close()
    assert recorder.error is None and watch.proposals == recorder.recorded > 0
    assert len(result.candidates) > 1
    ids = [content_instance_id(i, example) for i, example in enumerate(VAL)]
    with Store.discover(gepa_repo) as store:
        evals = store.notes.records(layout.NOTES_EVALS)
        proposals = [
            r
            for rs in store.notes.records(layout.NOTES_EVIDENCE).values()
            for r in rs
            if isinstance(r, ProposalRecord)
        ]
    assert len(proposals) == recorder.recorded
    for idx, subscores in enumerate(result.val_subscores):
        records = [r for r in evals[recorder.commits[idx]] if isinstance(r, EvalRecord)]
        got = {i: s for r in records for i, s in zip(r.instances, r.scores, strict=True)}
        assert got == {ids[val_id]: score for val_id, score in subscores.items()}


class Watch:
    def __init__(self) -> None:
        self.proposals = 0

    def on_proposal_end(self, event: Any) -> None:
        self.proposals += 1

    def on_merge_attempted(self, event: Any) -> None:
        self.proposals += 1


def test_the_meter_reads_a_dspy_history_that_drops_its_oldest_entries() -> None:
    """`dspy.LM.history` entries (messages, outputs, usage, cost, uuid) as DSPy 3.4.1
    writes them; DSPy pops the oldest once the history is full."""
    from harnessgit.integrations.gepa.usage import Meter

    class HistoryLM:
        def __init__(self) -> None:
            self.history: list[dict[str, Any]] = []
            self.n = 0

        def call(self, cost: float | None) -> None:
            self.n += 1
            usage = {"prompt_tokens": 10 * self.n, "completion_tokens": self.n}
            entry = {"uuid": f"u{self.n}", "messages": [{"role": "user", "content": f"m{self.n}"}],
                     "outputs": [f"o{self.n}"], "usage": usage, "cost": cost, "model": "sim"}  # fmt: skip
            self.history.append(entry)
            if len(self.history) > 3:
                self.history.pop(0)

    lm = HistoryLM()
    lm.call(0.5)
    meter = Meter(lm)  # what came before the recorder is not counted
    assert meter.take() is not None and meter.take().calls == 0  # type: ignore[union-attr]
    lm.call(0.25)
    lm.call(None)
    lm.call(0.25)  # the history drops u1
    usage = meter.take()
    assert usage is not None and usage.calls == 3 and usage.cost_usd == 0.5
    assert (usage.tokens_in, usage.tokens_out) == (20 + 30 + 40, 2 + 3 + 4)
    assert [e["outputs"] for e in usage.exchanges] == [["o2"], ["o3"], ["o4"]]
    assert Meter(lambda prompt: "reply").take() is None  # a plain function keeps no account


class ObjectiveAdapter(WordAdapter):
    """Two objectives per example: the word found, and brevity (shorter texts score more)."""

    def evaluate(
        self, batch: list[dict[str, str]], candidate: dict[str, str], capture_traces: bool = False
    ) -> EvaluationBatch[dict[str, Any], Any]:
        result = super().evaluate(batch, candidate, capture_traces)
        brevity = max(0.0, 1.0 - sum(len(text) for text in candidate.values()) / 400)
        objectives = [{"found": score, "brevity": brevity} for score in result.scores]
        return EvaluationBatch(
            outputs=result.outputs, scores=result.scores, trajectories=result.trajectories,
            objective_scores=objectives,
        )  # fmt: skip


def test_objective_scores_and_the_objective_front_are_recorded(gepa_repo: Path) -> None:
    fronts = Fronts()
    recorder = GitRecorder(str(gepa_repo), COMPONENTS, adapter=ObjectiveAdapter(), valset=VAL)
    gepa.optimize(
        seed_candidate=dict(SEED), trainset=TRAIN, valset=VAL, adapter=ObjectiveAdapter(),
        reflection_lm=reflection_lm, max_metric_calls=200, reflection_minibatch_size=3, seed=7,
        callbacks=[recorder, fronts], logger=Quiet(), frontier_type="hybrid",
    )  # fmt: skip
    recorder.close()
    state = fronts.state
    with Store.discover(gepa_repo) as store:
        records = [r for rs in store.notes.records(layout.NOTES_EVIDENCE).values() for r in rs]
        (run_blob,) = [r for r in records if isinstance(r, EvidenceRecord) and r.label == "gepa-run"]
        (run_info,) = [i for i in evidence_items(store, run_blob.blob) if i["kind"] == "gepa-run"]
    assert run_info["frontier_type"] == "hybrid"
    assert run_info["objective_scores"] == [dict(m) for m in state.prog_candidate_objective_scores]
    assert run_info["objective_front"] == {
        k: sorted(v) for k, v in state.program_at_pareto_front_objectives.items()
    }
    assert set(run_info["programs"]) == {str(i) for i in range(len(state.program_candidates))}
