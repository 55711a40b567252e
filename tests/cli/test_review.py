from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate
from harnessgit.store import Store
from tests.cli.runner import one_error_line, run
from tests.conftest import git, snapshot, write
from tests.gating_fixtures import skill


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_review_in_three_formats_and_to_a_file(review_repo: Path) -> None:
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)}, rationale="Raise the level")
        evaluate(store, config, "main")
        evaluate(store, config, cand.candidate)
    text = run(review_repo, "review", "main", cand.candidate)
    assert text.exit_code == 0 and "gate: PASS: chance better over 99%" in text.stdout
    assert "observed +50.0 points" in text.stdout
    data = json.loads(run(review_repo, "review", "main", cand.candidate, "--format", "json").stdout)
    assert data["verdict"]["state"] == "pass" and data["edits"][0]["rationale"] == "Raise the level"
    written = run(
        review_repo, "review", "main", cand.candidate, "--format", "md", "--output", "out/review.md"
    )
    assert written.exit_code == 0 and written.stdout == "" and "wrote the review" in written.stderr
    md = (review_repo / "out" / "review.md").read_text()
    assert md.startswith("<!-- harnessgit-review -->") and "**Gate: PASS.**" in md
    # A rejected edit still reviews with exit 0: review reports, the gate decides.
    worse = run(review_repo, "review", cand.candidate, "main")
    assert worse.exit_code == 0 and "gate: FAIL" in worse.stdout


def test_review_refuses_unknown_revisions(review_repo: Path) -> None:
    before = snapshot(review_repo)
    assert "unknown revision 'nope'" in one_error_line(run(review_repo, "review", "nope"))
    assert "nothing to review" in one_error_line(run(review_repo, "review"))
    assert snapshot(review_repo) == before


def test_one_argument_is_the_head_reviewed_against_its_merge_base(review_repo: Path) -> None:
    with Store.discover(review_repo) as store:
        cand = propose(store, load_config(review_repo), {"SKILL.md": skill(30)}, rationale="Raise the level")
    proposed_on = git(review_repo, "rev-parse", "main").strip()
    write(review_repo, "README.md", "main moved on since\n")
    git(review_repo, "add", "README.md")
    git(review_repo, "commit", "-q", "-m", "A later commit on main")
    for name in (cand.candidate, cand.candidate[:8]):
        data = json.loads(run(review_repo, "review", name, "--format", "json").stdout)
        assert (data["base"], data["head"]) == (proposed_on, cand.commit)
        assert (data["base_label"], data["head_label"]) == ("merge-base with main", cand.candidate)
        assert [edit["candidate"] for edit in data["edits"]] == [cand.candidate]
    both = json.loads(run(review_repo, "review", "main", cand.candidate, "--format", "json").stdout)
    assert both["base"] == git(review_repo, "rev-parse", "main").strip() and both["head"] == cand.commit
    assert run(review_repo, "review", "a", "b", "c").exit_code == 2
    merged = one_error_line(run(review_repo, "review", "main~1"))  # already on main: no change of its own
    assert "main~1 is already on main" in merged and "review BASE main~1" in merged
