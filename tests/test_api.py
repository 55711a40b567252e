"""harnessgit.api: the commands' guarantees, from Python."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harnessgit import layout
from harnessgit.api import Repository, split_hash
from harnessgit.errors import HarnessgitError, NotARepository, ProposalError
from harnessgit.records import EvalRecord, ProposalRecord
from tests.conftest import git, snapshot


def test_propose_and_record_scores(repo: Path) -> None:
    with Repository.open(repo) as api:
        proposal = api.propose(
            {"prompts/system.md": "Be exact.\n"}, rationale="Exactness", evidence=[{"kind": "note"}]
        )
        record = api.record_scores(
            proposal.candidate,
            {"a": 1.0, "b": 0.5},
            fingerprint="gepa:x",
            model="m",
            split_instances=["a", "b", "c"],
            feedback={"a": {"output": "token sk-" + "x" * 30}},
        )
        notes = api.store.notes.records(layout.NOTES_EVALS)[proposal.commit]
        evidence = api.store.objects.read_blob(record.evidence or "")
        assert api.harness_tree(proposal.commit) == record.harness
    assert git(repo, "show", f"{proposal.commit}:prompts/system.md") == "Be exact.\n"
    assert notes == [record] and isinstance(record, EvalRecord)
    assert record.split_hash == split_hash("selection", ["c", "b", "a"])  # an instance set
    assert b"sk-xxxx" not in evidence and b'"instance":"a"' in evidence  # scrubbed like all evidence


@pytest.mark.parametrize(
    ("scores", "how", "message"),
    [
        ({"a": 1.5}, {}, "scores must be in"),
        ({"a": float("nan")}, {}, "scores must be in"),
        ({}, {}, "no scores"),
        ({"z": 1.0}, {"split_instances": ["a"]}, "not in split"),
        ({"a": 1.0, "b": 0.0}, {"objective_scores": {"a": {"x": 1.0}}}, "'b' has scores but no objective"),
        ({"a": 1.0}, {"objective_scores": {"a": {"x": float("inf")}}}, "'x' of 'a' is inf, not a finite"),
    ],
)
def test_bad_scores_leave_the_repository_alone(
    repo: Path, scores: dict[str, float], how: dict[str, Any], message: str
) -> None:
    before = snapshot(repo)
    with Repository.open(repo) as api, pytest.raises(HarnessgitError, match=message):
        api.record_scores("main", scores, fingerprint="f", model="m", **how)
    assert snapshot(repo) == before


def test_errors_are_the_commands_one_liners(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(NotARepository, match="not a git repository"):
        Repository.open(tmp_path)
    before = snapshot(repo)
    with Repository.open(repo) as api, pytest.raises(ProposalError, match="changes nothing"):
        api.propose({"prompts/system.md": "You are a careful assistant.\n"})
    assert snapshot(repo) == before


def test_staged_proposals_land_together(repo: Path) -> None:
    from harnessgit.store import Transaction

    with Repository.open(repo) as api:
        main = api.resolve("main")
        txn = Transaction("two")
        kept = api.stage_proposal(txn, {"prompts/system.md": "One.\n"}, main)
        dropped = api.stage_proposal(
            txn, {"prompts/system.md": "Two.\n"}, main, rejected="worse on the minibatch"
        )
        assert git(repo, "for-each-ref", "refs/heads/harnessgit/") == ""  # nothing before the commit
        api.commit(txn)
        proposals = [
            r
            for r in api.store.notes.records(layout.NOTES_EVIDENCE)[dropped.commit]
            if isinstance(r, ProposalRecord)
        ]
    assert git(repo, "rev-parse", kept.ref).strip() == kept.commit
    assert git(repo, "rev-parse", f"refs/harnessgit/archive/{dropped.candidate}").strip() == dropped.commit
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/harnessgit/cand/").split() == [
        kept.ref
    ]
    assert len(proposals) == 1


def test_a_merge_proposal_is_a_commit_on_both_candidates(repo: Path) -> None:
    """``other_parent`` (a name for `propose`, a commit for `stage_proposal`): the
    candidate's commit has both parents, its texts the first parent's with the edit."""
    from harnessgit.store import Transaction

    with Repository.open(repo) as api:
        first = api.propose({"prompts/system.md": "One.\n"})
        second = api.propose({"SKILL.md": "Two.\n"})
        merged = api.propose({"SKILL.md": "Two.\n"}, parent=first.candidate, other_parent=second.candidate)
        txn = Transaction("merge")
        staged = api.stage_proposal(txn, {"SKILL.md": "Three.\n"}, first.commit, other_parent=second.commit)
        api.commit(txn)
    for proposal in (merged, staged):
        parents = git(repo, "log", "-1", "--format=%P", proposal.commit).split()
        assert parents == [first.commit, second.commit]
    assert git(repo, "show", f"{merged.commit}:prompts/system.md") == "One.\n"
    assert git(repo, "show", f"{merged.commit}:SKILL.md") == "Two.\n"


def test_a_misspelt_keyword_is_a_type_error(repo: Path) -> None:
    """The API's optional keywords are typed options (``**options: Unpack[...]``), which
    Python does not check: a misspelt one is still the TypeError a signature would raise,
    before anything is written."""
    from harnessgit.integrations.gepa import GitRecorder
    from harnessgit.store import Transaction

    before = snapshot(repo)
    with Repository.open(repo) as api:
        main = api.resolve("main")
        with pytest.raises(TypeError, match="unexpected keyword argument 'rejcted'"):
            api.stage_proposal(Transaction("x"), {"prompts/system.md": "One.\n"}, main, rejcted="no")  # type: ignore[call-arg]
        with pytest.raises(TypeError, match="unexpected keyword argument 'splt'"):
            api.record_scores("main", {"a": 1.0}, fingerprint="f", model="m", splt="train")
        with pytest.raises(TypeError, match="unexpected keyword argument 'modle'"):
            GitRecorder(repo.as_posix(), {"system": "prompts/system.md"}, modle="m")  # type: ignore[call-arg]
        with pytest.raises(TypeError, match="unexpected keyword argument 'rationle'"):
            api.propose({"prompts/system.md": "One.\n"}, rationle="typo")  # type: ignore[call-arg]
    assert snapshot(repo) == before
