"""`GitRecorder` on a real GEPA run that merges (gepa 0.1.4, ``use_merge=True``): the
task of tests/gepa_fixtures.py, whose branches improve different words, so that GEPA's
merge proposer finds programs to merge (seed 10, 120 metric calls: one merge rejected on
the minibatch, then one kept, both with texts neither parent has)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import gepa
from gepa.gepa_utils import find_dominator_programs

from harnessgit import layout
from harnessgit.api import Repository
from harnessgit.integrations.gepa import GitRecorder
from harnessgit.records import IterationRecord, RetireRecord
from harnessgit.store import Store
from tests.conftest import git

COMPONENTS = {"system_prompt": "prompts/system.md", "style": "prompts/style.md"}


class Quiet:
    def log(self, message: str) -> None:
        pass


class Merges:
    """GEPA's merge events, and its final state."""

    def __init__(self) -> None:
        self.attempted: list[list[int]] = []
        self.accepted: list[int] = []
        self.rejected = 0
        self.proposals = 0
        self.state: Any = None

    def on_merge_attempted(self, event: Any) -> None:
        self.attempted.append([int(p) for p in event["parent_ids"]])

    def on_merge_accepted(self, event: Any) -> None:
        self.accepted.append(int(event["new_candidate_idx"]))

    def on_merge_rejected(self, event: Any) -> None:
        self.rejected += 1

    def on_proposal_end(self, event: Any) -> None:
        self.proposals += 1

    def on_optimization_end(self, event: Any) -> None:
        self.state = event["final_state"]


def task(repo: Path) -> Any:
    sys.path.insert(0, str(repo))
    return importlib.import_module("task.gepa_task")


def optimize(repo: Path, callbacks: list[Any] | None, *, seed: int = 10, budget: int = 120) -> Any:
    task = importlib.import_module("task.gepa_task")
    return gepa.optimize(
        seed_candidate=dict(task.SEED),
        trainset=task.TRAINSET,
        valset=task.VALSET,
        adapter=task.KeywordAdapter(),
        reflection_lm=task.reflection_lm,
        max_metric_calls=budget,
        reflection_minibatch_size=2,
        use_merge=True,
        seed=seed,
        logger=Quiet(),
        callbacks=callbacks,
    )


def texts(repo: Path, commit: str) -> tuple[str, ...]:
    return tuple(git(repo, "show", f"{commit}:{path}") for path in COMPONENTS.values())


def test_gepa_merges_are_two_parent_candidates(repo: Path) -> None:
    merges = Merges()
    # the ids the factory's dataset gives the valset ("0".."5"): GEPA's scores are the
    # repository evaluator's, so the frontier reads them
    recorder = GitRecorder(
        str(repo),
        COMPONENTS,
        adapter="task.gepa_task:factory",
        model="sim-1",
        valset=task(repo).VALSET,
        instance_id=lambda val_id, example: str(val_id),
    )
    result = optimize(repo, [merges, recorder])
    recorder.close()
    assert recorder.error is None and recorder.mode == "repository"
    assert len(merges.accepted) == 1 and merges.rejected == 1, "the task should keep one merge and reject one"
    assert recorder.recorded == merges.proposals + len(merges.attempted)

    with Store.discover(repo) as store:
        evidence = store.notes.records(layout.NOTES_EVIDENCE)
    iterations = [r for records in evidence.values() for r in records if isinstance(r, IterationRecord)]
    retired = {c for c, records in evidence.items() if any(isinstance(r, RetireRecord) for r in records)}
    merged = [r for r in iterations if r.move == "merge"]
    assert sorted(r.outcome for r in merged) == ["merge-accepted", "merge-rejected"]
    for record, (first, second) in zip(
        sorted(merged, key=lambda r: r.iteration), merges.attempted, strict=True
    ):
        assert record.parent == recorder.commits[first]
        assert record.other_parent == recorder.commits[second]
        assert record.commit is not None and record.candidate is not None
        # the merge is a commit on both parents, in GEPA's order
        parents = git(repo, "rev-list", "--parents", "-n1", record.commit).split()[1:]
        assert parents == [recorder.commits[first], recorder.commits[second]]
        assert (record.commit in retired) == (record.outcome == "merge-rejected")
    (kept,) = merges.accepted
    assert texts(repo, recorder.commits[kept]) == tuple(result.candidates[kept][n] for n in COMPONENTS)
    assert all(r.move == "reflect" and r.other_parent is None for r in iterations if r not in merged)

    # the frontier is GEPA's, compared by texts: GEPA keeps programs with identical
    # texts apart, harnessgit's cache key (the harness tree) counts them once
    state = merges.state
    dominators = find_dominator_programs(state.get_pareto_front_mapping(), state.per_program_tracked_scores)
    with Repository.open(repo) as opened:
        view = opened.frontier()
    assert view.waiting == [] and view.incomparable == []
    got = {texts(repo, view.members[m].commit) for m in view.frontier.members}
    assert got == {tuple(result.candidates[idx][n] for n in COMPONENTS) for idx in dominators}


def test_recording_a_merging_run_does_not_change_it(repo: Path) -> None:
    task(repo)
    plain = optimize(repo, None)
    recorder = GitRecorder(str(repo), COMPONENTS, adapter="task.gepa_task:factory", model="sim-1")
    recorded = optimize(repo, [recorder])
    recorder.close()
    assert recorder.error is None
    assert any(len(parents) == 2 for parents in plain.parents)
    assert recorded.candidates == plain.candidates and recorded.parents == plain.parents
    assert recorded.val_subscores == plain.val_subscores
    assert recorded.total_metric_calls == plain.total_metric_calls


def test_a_merge_with_its_first_parents_texts_makes_no_commit(repo: Path) -> None:
    """Seed 0: GEPA merges programs 3 and 4 into program 5, whose texts are program 3's.
    git has nothing new to hold: program 5 is program 3's commit, and the iteration
    record says so, naming both parents."""
    task(repo)
    recorder = GitRecorder(str(repo), COMPONENTS, adapter="task.gepa_task:factory", model="sim-1")
    result = optimize(repo, [recorder], seed=0, budget=150)
    recorder.close()
    assert result.parents[5] == [3, 4] and result.candidates[5] == result.candidates[3]
    assert recorder.commits[5] == recorder.commits[3]
    with Store.discover(repo) as store:
        evidence = store.notes.records(layout.NOTES_EVIDENCE)
    (record,) = [
        r
        for records in evidence.values()
        for r in records
        if isinstance(r, IterationRecord) and r.outcome == "unchanged-merge-accepted"
    ]
    assert record.move == "merge" and record.commit is None
    assert (record.parent, record.other_parent) == (recorder.commits[3], recorder.commits[4])
