from __future__ import annotations

import re
from pathlib import Path

import pytest

from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.evaluation.eval import with_batches
from harnessgit.review.budget import COMMENT_LIMIT
from harnessgit.review.comment import MARKER, md_code, md_text, review_markdown
from harnessgit.review.review import review
from harnessgit.review.scores import Flip
from harnessgit.store import Store
from tests.conftest import git, write
from tests.review.review_fixtures import odd_change, result_with, reviewed_candidate, unpaired_row

BATCHES = with_batches()  # the runner the gate takes from its caller


def balanced(md: str) -> None:
    """Every code block and collapsible part that opens also closes. HTML inside code
    is literal text to GitHub (CommonMark: code spans and fenced blocks are not
    parsed), so only tags outside code count."""
    fences = [line for line in md.splitlines() if re.match(r"^`{3,}", line)]
    assert len(fences) % 2 == 0
    outside = re.sub(r"^(`{3,}).*?^\1$", "", md, flags=re.S | re.M)
    outside = re.sub(r"(`+)(?!`).+?(?<!`)\1(?!`)", "", outside)
    assert outside.count("<details>") == outside.count("</details>")


def test_the_markdown_of_an_evaluated_candidate(
    review_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _candidate, result = reviewed_candidate(review_repo, monkeypatch, tmp_path)
    md = review_markdown(result)
    assert md.startswith(MARKER + "\n") and len(md.encode()) <= COMMENT_LIMIT
    # The review leads with the verdict and what it states (docs/gate.md#three-verdicts).
    assert "**Gate: PASS.** Chance the edit is better: over 99%; expected loss if merged anyway: 0.0" in md
    assert "Observed +47.5 points on 40 selection instances (25.0 → 72.5" in md
    assert "| selection (decides) | sim-1 | 40/40 | 25.0 ± 6.9 | 72.5 ± 7.1 | +47.5 [" in md
    assert "| `SKILL.md` | modified | +2 -1 |" in md
    assert "#### Flipped instances on selection: 1 regressed, 20 fixed" in md
    assert "- `s-3`: 1.00 → 0.00 (class - → broken-rule)" in md and "… and 10 more" in md
    assert "| broken-rule | 0 (0.0%) | 1 (9.1%) |" in md
    assert "critique: it gives up on every instance past s-9" in md
    assert "```diff\ndiff --git a/SKILL.md b/SKILL.md" in md
    balanced(md)


def test_a_binary_file_and_a_rename(review_repo: Path) -> None:
    odd_change(review_repo)
    with Store.discover(review_repo) as store:
        result = review(store, load_config(review_repo))
    md = review_markdown(result)
    assert "| `assets/logo.png` | added | binary | new → 16 B |" in md
    assert "| `prompts/system.md` → `prompts/main.md` | renamed | +1 -0 | 29 B → 39 B |" in md
    assert '| `prompts/ünïcödé "quoted".md` | added | +1 -0 | new → 7 B |' in md
    assert "Binary files /dev/null and b/assets/logo.png differ" in md
    assert "rename from prompts/system.md" in md and "\x1b[" not in md
    balanced(md)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_huge_diff_stays_under_githubs_comment_limit(review_repo: Path) -> None:
    git(review_repo, "checkout", "-q", "-b", "huge")
    for i in range(3):
        write(
            review_repo,
            f"prompts/huge-{i}.md",
            "".join(f"rule {n}: say something long enough here\n" for n in range(12_000)),
        )
    write(review_repo, "assets/blob.bin", b"\x00" * 5000)
    git(review_repo, "add", "-A")
    git(review_repo, "commit", "-qm", "Add three huge prompts")
    with Store.discover(review_repo) as store:
        result = review(store, load_config(review_repo))
    md = review_markdown(result)
    assert sum(f.added or 0 for f in result.files) == 36_000
    assert len(md.encode("utf-8")) <= COMMENT_LIMIT and len(md) <= COMMENT_LIMIT
    assert md.startswith(MARKER) and "**Gate: not evaluated.**" in md and "harnessgit eval" in md
    assert "#### Files changed: 4 (+36000 -0 lines)" in md and "| `assets/blob.bin` | added | binary |" in md
    assert "more diff lines not shown here (GitHub caps a comment at 65,536 characters)" in md
    balanced(md)


def test_evaluator_and_proposer_text_cannot_break_the_comment() -> None:
    hostile = "</details> | **bold** <script>alert(1)</script> `tick` ```fence"
    flip = Flip(
        instance="s-1",
        base_score=1.0,
        head_score=0.0,
        head_feedback=hostile,
        trajectory="step ``` | </details>",
        trajectory_side="head",
    )
    md = review_markdown(result_with(flip, "Why\n\n" + hostile + "\n```\n<details>"))
    balanced(md)
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert "\\*\\*bold\\*\\*" in md and "the lower bound \\| does not clear &lt;0&gt;" in md
    assert "| `a\\|b.md` | added |" in md  # a pipe in a file name does not split the table row
    assert md_text("a\nb") == "a b" and md_code("x`y") == "``x`y``" and md_code("`x") == "`` `x ``"


def test_a_row_without_a_comparison_shows_the_one_empty_value() -> None:
    flip = Flip(instance="s-1", base_score=1.0, head_score=0.0)
    md = review_markdown(result_with(flip, "Why", scores=[unpaired_row()]))
    assert "| train | m | 0/60 | - (6 scored) | - (3 scored) | - | - | - | 0/0/0 |" in md


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_the_comment_draws_the_score_history_as_a_sparkline(gate_repo: Path) -> None:
    from harnessgit.candidates.propose import propose
    from harnessgit.evaluation.eval import EvalRequest, evaluate
    from harnessgit.gate.gate import GateRequest
    from harnessgit.gate.merge import merge
    from tests.gating_fixtures import skill

    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        for level in (20, 30):  # two gated merges: 25% -> 50% -> 75% of the selection split
            cand = propose(store, config, {"SKILL.md": skill(level)}, rationale=f"level {level}")
            assert merge(
                store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change
            ).merge
        head = propose(store, config, {"SKILL.md": skill(40)}, rationale="level 40")
        evaluate(store, config, head.candidate, EvalRequest(split="selection"))
        result = review(store, config, base="main", head=head.candidate)
    assert result.score_history == [0.25, 0.5, 0.75]
    text = review_markdown(result)
    assert (
        "**Score history** (selection mean at each gated merge before BASE, then HEAD): `▁▃▆█` 25.0 → 100.0"
        in text
    )
