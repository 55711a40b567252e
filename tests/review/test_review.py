from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import evaluate
from harnessgit.gate.merge import merge
from harnessgit.review.review import ReviewResult, review
from harnessgit.store import Store
from tests.conftest import git, snapshot, write
from tests.gating_fixtures import skill

RATIONALE = "Raise the level\n\nThe trajectories show the agent giving up on s-10 and above."
CRITIQUE = {"kind": "critique", "text": "it gives up on every instance past s-9"}


def reviewed_candidate(
    repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> tuple[str, ReviewResult]:
    """A candidate that fixes s-10..s-29 and breaks s-3, both sides evaluated, then reviewed."""
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(
            store, config, {"SKILL.md": skill(30, "break s-3")}, rationale=RATIONALE, evidence=[CRITIQUE]
        )
        evaluate(store, config, "main")
        evaluate(store, config, cand.candidate)
        monkeypatch.setenv("CALLS_FILE", str(tmp_path / "review-calls.txt"))
        before = snapshot(repo)
        result = review(store, config, "main", cand.candidate)
    assert snapshot(repo) == before  # nothing recorded
    assert not (tmp_path / "review-calls.txt").exists()  # the evaluator never ran
    return cand.candidate, result


def test_review_of_an_evaluated_candidate(
    review_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    candidate, result = reviewed_candidate(review_repo, monkeypatch, tmp_path)
    v = result.verdict
    assert v.state == "pass" and v.n == 40 and v.difference == pytest.approx(0.475)
    assert (v.wins, v.losses, v.ties) == (20, 1, 19) and v.attempt == 1 and v.detectable
    assert result.head_label == candidate and result.base_label == "main"
    (row,) = [r for r in result.scores if r.split == "selection"]
    assert row.decides and row.current and row.n == 40 and row.difference == v.difference
    assert row.p_value == v.p_value and row.base_mean == pytest.approx(0.25)
    (flips,) = result.flips
    assert flips.regressed_count == 1 and flips.fixed_count == 20 and len(flips.fixed) == 10
    (broke,) = flips.regressed
    assert (
        broke.instance == "s-3"
        and broke.base_feedback == "ok"
        and broke.head_feedback == "s-3 failed: broken-rule"
    )
    assert broke.trajectory_side == "head" and broke.trajectory is not None and "gave up" in broke.trajectory
    assert flips.fixed[0].instance == "s-10" and flips.fixed[0].trajectory_side == "base"
    (shift,) = result.failure_shift
    shares = {c.failure_class: c for c in shift.classes}
    assert (shift.base_failures, shift.head_failures) == (30, 11)
    assert shares["broken-rule"].base_count == 0 and shares["broken-rule"].head_share == pytest.approx(1 / 11)
    (edit,) = result.edits
    assert edit.candidate == candidate and edit.rationale == RATIONALE and edit.source == "file"
    assert edit.evidence[0].quoted == ["critique: it gives up on every instance past s-9"]
    assert [f.path for f in result.files] == ["SKILL.md"] and result.files[0].size_before == len(skill(10))


def test_unevaluated_sides_name_the_commands_to_run(review_repo: Path) -> None:
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        base = git(review_repo, "rev-parse", "main").strip()
        result = review(store, config, head=cand.candidate)
    assert result.verdict.state == "not evaluated"
    assert result.verdict.commands == [
        f"harnessgit eval {base[:12]} --split selection",
        f"harnessgit eval {cand.candidate} --split selection",
    ]
    assert result.base == base and result.base_label == "merge-base with main"
    assert result.scores == [] and result.flips == []


def odd_change(repo: Path) -> None:
    """A commit that renames a prompt, adds a binary file and a name with non-ASCII
    characters and quotes, under git settings that would change a diff's shape."""
    for key, value in [
        ("color.ui", "always"),
        ("diff.noprefix", "true"),
        ("diff.mnemonicPrefix", "true"),
        ("diff.suppressBlankEmpty", "true"),
        ("core.quotePath", "true"),
        ("diff.external", "false"),
    ]:
        git(repo, "config", key, value)
    git(repo, "checkout", "-q", "-b", "edit")
    git(repo, "mv", "prompts/system.md", "prompts/main.md")
    write(repo, "prompts/main.md", "You are a careful assistant.\nBe brief.\n")
    write(repo, "assets/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00binary")
    write(repo, 'prompts/ünïcödé "quoted".md', "Hello.\n")
    write(repo, "SKILL.md", skill(10, "", "3. Check the answer."))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Rename the system prompt, add a logo")


def test_files_survive_renames_binaries_odd_names_and_user_diff_config(review_repo: Path) -> None:
    odd_change(review_repo)
    with Store.discover(review_repo) as store:
        result = review(store, load_config(review_repo))
    files = {f.path: f for f in result.files}
    assert set(files) == {"SKILL.md", "assets/logo.png", "prompts/main.md", 'prompts/ünïcödé "quoted".md'}
    logo = files["assets/logo.png"]
    assert (logo.status, logo.binary, logo.added, logo.size_before, logo.size_after) == (
        "added",
        True,
        None,
        None,
        16,
    )
    renamed = files["prompts/main.md"]
    assert renamed.status == "renamed" and renamed.old_path == "prompts/system.md"
    assert renamed.size_before == len("You are a careful assistant.\n") and renamed.size_after == 39
    odd = files['prompts/ünïcödé "quoted".md']
    assert (odd.status, odd.added, odd.harness) == ("added", 1, True)
    skill_md = files["SKILL.md"]
    assert (skill_md.added, skill_md.removed) == (2, 0) and "\x1b[" not in skill_md.patch
    assert skill_md.patch.startswith("diff --git a/SKILL.md b/SKILL.md")


def test_a_merge_shows_the_rationale_of_the_candidate_it_merged(review_repo: Path) -> None:
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)}, rationale=RATIONALE, evidence=[CRITIQUE])
        landed = merge(store, config, cand.candidate).merge
        assert landed
        result = review(store, config, "main~1", "main")
    (edit,) = result.edits
    assert edit.commit == landed and edit.candidate == cand.candidate and edit.rationale == RATIONALE
    assert result.verdict.state == "pass"  # both sides were evaluated by the gate that merged it


def test_nothing_to_review(review_repo: Path) -> None:
    with Store.discover(review_repo) as store, pytest.raises(HarnessgitError, match="nothing to review"):
        review(store, load_config(review_repo))
