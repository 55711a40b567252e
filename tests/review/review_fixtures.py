"""Reviews to test against: a real one on a temp repository, and hand-built results."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.checks import CheckReport
from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate
from harnessgit.review.diff import FileDiff
from harnessgit.review.edits import Edit, EvidenceItem
from harnessgit.review.review import ReviewResult, Verdict, review
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
        verdict=Verdict(state="fail", reasons=["the lower bound | does not clear <0>"], commands=[]),
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


# A repository laid out like a public skills collection (obra/superpowers,
# anthropics/skills): skill folders with references and prompts, no evaluator and no
# split manifest yet: adoption level 2 (issue 20), checks and review only.
LEVEL2_CONFIG = '[harness]\npaths = ["skills/*/**"]\nbase = "main"\n'
SKILLS = {
    "brainstorming": "Ask one question at a time until the design is clear.",
    "writing-plans": "Write the plan as small steps, each with its test.",
    "subagent-driven-development": "Dispatch one subagent per task, then review its work.",
}


def skill_text(name: str, body: str) -> str:
    return (
        f"---\nname: {name}\ndescription: Use when you need {name.replace('-', ' ')}.\n---\n"
        f"# {name}\n\n## Steps\n\n1. {body}\n2. See references/guide.md for details.\n"
    )


def skills_collection(repo: Path, config: str = LEVEL2_CONFIG) -> Path:
    """A new repository at ``repo``: three skill folders (SKILL.md, references/guide.md,
    a prompt file), a README, and harnessgit.toml as ``config``, committed on main."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for name, body in SKILLS.items():
        write(repo, f"skills/{name}/SKILL.md", skill_text(name, body))
        write(repo, f"skills/{name}/references/guide.md", f"# {name} guide\n\nThe details.\n")
        write(repo, f"skills/{name}/review-prompt.md", "You review the work of a subagent.\n")
    write(repo, "README.md", "# A skills collection\n")
    write(repo, "harnessgit.toml", config)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Skills")
    return repo


def edit_skills(repo: Path, *, branch: str = "edit") -> str:
    """A commit on a new ``branch`` that edits a skill, its prompt and the README; returns it."""
    git(repo, "checkout", "-q", "-b", branch)
    path = "skills/subagent-driven-development"
    write(repo, f"{path}/SKILL.md", skill_text("subagent-driven-development", "Dispatch, then re-review."))
    write(repo, f"{path}/review-prompt.md", "You re-review the work of a subagent after its fix.\n")
    write(repo, "README.md", "# A skills collection\n\nNow with re-review.\n")
    git(repo, "commit", "-qam", "Re-review after each fix\n\nReviewers missed regressions in fixes.")
    return git(repo, "rev-parse", "HEAD").strip()
