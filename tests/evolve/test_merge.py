"""GEPA's merge proposal through git, on a real repository (harnessgit.evolve.merge)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.evaluation.eval import EvalRequest, evaluate
from harnessgit.evolve.iteration import iterate
from harnessgit.evolve.session import Options, Session
from harnessgit.evolve.state import Budget, MergeSchedule
from harnessgit.proposers import make_proposer
from harnessgit.records import IterationRecord, ProposalRecord
from harnessgit.store import Store
from tests.evolve.evolve_fixtures import PROMPT, two_file_repo
from tests.evolve.test_iteration import CLIMBING
from tests.gating_fixtures import skill


def merge_iteration(
    repo: Path, first: dict[str, str], second: dict[str, str]
) -> tuple[Store, IterationRecord]:
    """Two candidates on main, scored; then one iteration with a merge due."""
    store = Store.discover(repo)
    config = load_config(repo)
    evaluate(store, config, "main", EvalRequest(split="selection"))
    for files in (first, second):
        cand = propose(store, config, files, rationale="by hand")
        evaluate(store, config, cand.candidate, EvalRequest(split="selection"))
    options = Options(proposer=make_proposer(config.proposer, cwd=repo), seed=0, budget=Budget(), merge=True)
    session = Session(store, config, options)
    session.schedule = MergeSchedule(due=1, found_new=True)
    return store, iterate(session)


def test_a_merge_combines_two_frontier_candidates_through_their_ancestor(
    make_repo: Callable[..., Path],
) -> None:
    """One fixed s-0 and s-1 in SKILL.md, the other s-2 and s-3 in the system prompt:
    the merge holds both edits, has both as parents (git's and the record's), is
    checked on gepa's selection subsample and then scored and gated like any."""
    repo = two_file_repo(make_repo, CLIMBING)
    store, record = merge_iteration(
        repo,
        {"SKILL.md": skill(0, "fix s-0", "fix s-1")},
        {"prompts/system.md": PROMPT + "fix s-2\nfix s-3\n"},
    )
    with store:
        assert record.move == "merge" and record.proposer == "merge" and record.proposals == 0
        assert record.component == "SKILL.md, prompts/system.md" and len(record.minibatch) == 5
        assert record.ancestor == store.refs.resolve("main") and record.other_parent
        assert record.selection_mean == 0.1  # 4 of 40: both edits hold
        assert record.outcome in {"not-gated", "gate-passed", "gate-failed", "gate-inconclusive"}
        commit = record.commit or ""
        assert list(store.objects.commit_info(commit).parents) == [record.parent, record.other_parent]
        (proposal,) = [
            r for r in store.notes.records_on(layout.NOTES_EVIDENCE, commit) if isinstance(r, ProposalRecord)
        ]
        assert proposal.parent == record.parent and proposal.other_parent == record.other_parent
        text = store.objects.files_at(commit)
        skill_text = store.objects.read_blob(text["SKILL.md"].sha).decode()
        prompt_text = store.objects.read_blob(text["prompts/system.md"].sha).decode()
        assert "fix s-1" in skill_text and "fix s-3" in prompt_text


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_conflict_means_no_merge_proposal(make_repo: Callable[..., Path]) -> None:
    """Both changed SKILL.md's LEVEL line: git cannot merge it, so no merge is
    proposed and the iteration is an ordinary reflective one."""
    repo = two_file_repo(make_repo, CLIMBING)
    store, record = merge_iteration(
        repo,
        {"SKILL.md": skill(2), "prompts/system.md": PROMPT + "fix s-5\n"},
        {"SKILL.md": skill(3)},
    )
    with store:
        assert record.move == "reflect" and record.other_parent is None


def record(move: str, mean: float | None) -> IterationRecord:
    return IterationRecord(
        ts=datetime(2026, 1, 1, tzinfo=timezone.utc),
        run="r",
        seed=0,
        iteration=0,
        parent="p" * 40,
        parent_name="main",
        component="SKILL.md",
        minibatch=["a"],
        outcome="x",
        move=move,
        selection_mean=mean,
    )


def test_merges_follow_gepas_schedule() -> None:
    schedule = MergeSchedule(max_merges=2)
    assert not schedule.ready()
    schedule = schedule.after(record("reflect", 0.5))  # a new program: one merge due
    assert schedule.ready() and schedule.due == 1
    schedule = schedule.after(record("merge", None))  # failed its subsample: still due
    assert not schedule.ready() and schedule.due == 1
    schedule = schedule.after(record("reflect", None)).after(record("reflect", 0.6))
    assert schedule.ready() and schedule.due == 2
    schedule = schedule.after(record("merge", 0.7)).after(record("reflect", 0.8)).after(record("merge", 0.9))
    assert schedule.accepted == 2 and schedule.due == 1
    assert schedule.after(record("reflect", 0.9)).due == 1  # max_merges accepted: no more due
