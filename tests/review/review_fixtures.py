"""Reviews to test against: a real one on a temp repository, and hand-built results."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.checks import CheckReport
from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate
from harnessgit.review.diff import FileDiff
from harnessgit.review.review import Edit, EvidenceItem, ReviewResult, Verdict, review
from harnessgit.review.scores import Flip, Flips, ScoreRow
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


def unpaired_row() -> ScoreRow:
    """A row with scores on both sides but no instance scored on both: nothing to
    compare, so no means (`score_row` gives none), only each side's coverage."""
    return ScoreRow(
        split="train",
        model="m",
        fingerprint="f" * 64,
        current=True,
        held_out=False,
        decides=False,
        split_size=60,
        base_n=6,
        head_n=3,
        n=0,
        base_mean=None,
        base_se=None,
        head_mean=None,
        head_se=None,
    )


def result_with(flip: Flip, rationale: str, scores: list[ScoreRow] | None = None) -> ReviewResult:
    """A hand-built review: one rejected edit of one file, with one regressed instance."""
    return ReviewResult(
        base="a" * 40,
        head="b" * 40,
        base_label="main",
        head_label="HEAD",
        verdict=Verdict(state="reject", reasons=["the lower bound | does not clear <0>"], commands=[]),
        files=[FileDiff(path="a|b.md", old_path=None, status="added", binary=False, added=1, removed=0)],
        checks=CheckReport(tokenizer="estimate", tokens_exact=False),
        scores=scores or [],
        flips=[
            Flips(split="selection", model="m", fixed=[], regressed=[flip], fixed_count=0, regressed_count=1)
        ],
        failure_shift=[],
        edits=[
            Edit(
                commit="c" * 40,
                subject="Edit",
                candidate=None,
                rationale=rationale,
                source=None,
                proposer=None,
                evidence=[
                    EvidenceItem(
                        label="e", items=1, bytes=1, blob="d" * 40, item_kinds={}, quoted=["</details>"]
                    )
                ],
            )
        ],
        edits_count=1,
        notes=[],
    )
