from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest
from harnessgit.gate.merge import merge
from harnessgit.gate.override import override
from harnessgit.render import jsonable, to_json
from harnessgit.review.comment import review_markdown
from harnessgit.review.render import review_text
from harnessgit.review.review import review
from harnessgit.store import Store
from tests.candidates.chain_fixtures import merged_chain
from tests.conftest import git
from tests.gating_fixtures import skill
from tests.review.review_fixtures import CRITIQUE, RATIONALE, odd_change, reviewed_candidate

BATCHES = with_batches()  # the runner the gate takes from its caller


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


def test_the_json_of_a_review_is_its_fields_in_order(
    review_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    candidate, result = reviewed_candidate(review_repo, monkeypatch, tmp_path)
    data = json.loads(to_json(result))
    assert list(data) == [
        "base",
        "head",
        "base_label",
        "head_label",
        "verdict",
        "files",
        "totals",
        "checks",
        "scores",
        "flips",
        "failure_shift",
        "edits",
        "edits_count",
        "notes",
        "score_history",
    ]
    assert data["verdict"]["state"] == "pass" and data["flips"][0]["regressed"][0]["instance"] == "s-3"
    assert data["files"][0]["path"] == "SKILL.md" and data["edits"][0]["candidate"] == candidate
    # The check report keeps its own JSON form inside the review's, `failed` included.
    assert data["checks"] == jsonable(result.checks) and data["checks"]["failed"] is False


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
    data = {f["path"]: f for f in jsonable(result)["files"]}
    assert data["assets/logo.png"]["binary"] is True and data["assets/logo.png"]["added"] is None
    assert (data["prompts/main.md"]["old_path"], data["prompts/main.md"]["status"]) == (
        "prompts/system.md",
        "renamed",
    )


def test_a_merge_shows_the_rationale_of_the_candidate_it_merged(review_repo: Path) -> None:
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)}, rationale=RATIONALE, evidence=[CRITIQUE])
        landed = merge(
            store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change
        ).merge
        assert landed
        result = review(store, config, "main~1", "main")
    (edit,) = result.edits
    assert edit.commit == cand.commit and edit.merge == landed and edit.candidate == cand.candidate
    assert edit.rationale == RATIONALE
    assert result.verdict.state == "pass"  # both sides were evaluated by the gate that merged it
    assert edit.effect is not None and edit.effect.difference == result.verdict.difference


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_merged_chain_is_every_proposal_it_landed_with_its_own_effect(gate_repo: Path) -> None:
    """Issue 12, finding 5: the merge of a candidate proposed on three others is four
    edits, not one, each with its rationale and its own effect where scores exist."""
    chain, landed = merged_chain(gate_repo)
    with Store.discover(gate_repo) as store:
        result = review(store, load_config(gate_repo), "main~1", "main")
    assert result.edits_count == 4
    assert [e.candidate for e in result.edits] == [c.candidate for c in reversed(chain)]  # newest first
    assert all(e.merge == landed and e.source == "file" for e in result.edits)
    last, third, second, first = result.edits
    assert last.rationale == "Break s-3\n\nA harmful rule, last of four."
    assert first.effect is not None and (first.effect.n, first.effect.difference) == (40, 0.5)
    assert second.effect is None and third.effect is None  # the second was never evaluated
    assert last.effect is not None and last.effect.difference == pytest.approx(-0.025)
    assert result.verdict.difference == pytest.approx(0.525)  # the four together
    text = review_text(result)
    assert "edits: 4" in text and "own effect: -2.5 points on 40 selection instances (80.0 -> 77.5)" in text
    assert f"{last.subject} (candidate {last.candidate}, merged in {landed[:12]})" in text
    assert "own effect: not evaluated" in text
    md = review_markdown(result)
    assert "rationale and evidence of 4 commits" in md and "merged in `" in md
    edits = json.loads(to_json(result))["edits"]
    assert edits[0]["merge"] == landed and edits[0]["effect"]["difference"] == pytest.approx(-0.025)
    assert edits[1]["effect"] is None


def test_nothing_to_review(review_repo: Path) -> None:
    with Store.discover(review_repo) as store, pytest.raises(HarnessgitError, match="nothing to review"):
        review(store, load_config(review_repo))


def test_a_regrade_between_base_and_head_is_named_with_its_reason(review_repo: Path) -> None:
    """Issue 12: after a change to the evaluator, review knows which scores compare:
    it names the regrade (and its override) and the command that scores BASE with
    HEAD's evaluator."""
    base = git(review_repo, "rev-parse", "HEAD").strip()
    (review_repo / "README.md").write_text("docs, not a regrade\n")
    git(review_repo, "add", "-A")
    git(review_repo, "commit", "-qm", "Docs")
    (review_repo / "eval.py").write_text((review_repo / "eval.py").read_text() + "# rubric v2\n")
    git(review_repo, "commit", "-qam", "Rubric v2")
    head = git(review_repo, "rev-parse", "HEAD").strip()
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        override(store, config, head, reason="partial credit")
        result = review(store, config, base, "HEAD")
    (note,) = result.notes
    assert f"(a regrade: at {head[:12]} 'Rubric v2', override: “partial credit”)" in note
    assert f"`harnessgit eval {base[:12]} --grader {head[:12]} --split selection`" in note
